/* SPDX-License-Identifier: MIT */
/*
 * Small xenstore helpers shared by the simulated toolstack and the
 * simulated blkfront: formatted reads and writes, retried transactions and
 * waiting (with a deadline) for a device's `state` node.
 */
#ifndef XENSIM_XENBUS_H
#define XENSIM_XENBUS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

/* xen/io/xenbus.h states, without pulling in the header's enum typedef. */
enum xenbus_state_value {
	XB_UNKNOWN = 0,
	XB_INITIALISING = 1,
	XB_INITWAIT = 2,
	XB_INITIALISED = 3,
	XB_CONNECTED = 4,
	XB_CLOSING = 5,
	XB_CLOSED = 6,
};

#define XB_STATE_BIT(s) (1u << (s))

/* Write a printf-formatted value to @path. */
int xenbus_printf(struct xs_handle *xs, xs_transaction_t t, const char *path,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Read @path as an unsigned integer; -ENOENT if missing, -EINVAL if junk. */
int xenbus_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *path,
		    uint64_t *out);

/* Read the node at "@dir/@key"; -ENOENT if missing. */
int xenbus_read_key_u64(struct xs_handle *xs, const char *dir, const char *key,
			uint64_t *out);

/* Does @path exist? */
bool xenbus_exists(struct xs_handle *xs, const char *path);

/*
 * Wait until "@dir/state" holds a state whose bit is in @wanted_mask.
 * Returns that state, -ETIMEDOUT after @timeout_ms (the last state seen is
 * stored in *@last when @last is not NULL, 0 if the node was missing).
 */
int xenbus_wait_state(struct xs_handle *xs, const char *dir,
		      unsigned int wanted_mask, int timeout_ms, int *last);

/* Milliseconds from a monotonic clock. */
int64_t xenbus_now_ms(void);

#endif /* XENSIM_XENBUS_H */

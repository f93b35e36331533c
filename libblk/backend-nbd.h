/* SPDX-License-Identifier: MIT */
/*
 * Images on an NBD server, through libnbd: `nbd://HOST[:PORT]/EXPORT`,
 * `nbd+unix:///EXPORT?socket=PATH` and the other URIs libnbd knows.
 *
 * blk_nbd_connect() blocks while it connects and negotiates, at most
 * 5 s, so it runs on the daemon's opener threads (blkbackd/opener.h), or
 * on its main thread for a multi-conn disk's further queues, never on a
 * worker. libnbd itself is loaded then, the first time (libblk/dynlib.h). The
 * backend then moves the handle's traffic through the worker's io_uring with
 * libnbd's asynchronous API: no thread of its own, none per request. One handle
 * serves one ring; a disk gets a connection per queue only when the
 * server says that is safe (multi-conn), otherwise one queue.
 *
 * A connection that drops is brought back by the backend itself, on its
 * worker (struct blk_nbd_link): the I/O in flight and the requests that
 * come meanwhile wait, and are sent again on the new connection; only a
 * server that stays away longer than the link's timeout gets them failed
 * (EIO). The daemon is never affected.
 */
#ifndef LIBBLK_BACKEND_NBD_H
#define LIBBLK_BACKEND_NBD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libblk/backend.h"

struct nbd_handle;

/* What the server said of its export. */
struct blk_nbd_export {
	uint64_t size; /* bytes */
	bool readonly;
	bool can_flush;
	bool can_fua;
	bool can_trim;
	bool multi_conn; /* one flush covers every connection's writes */
};

/*
 * What an image's connections went through; the backends (on their
 * workers) add, anyone reads. Kept by the caller, shared by the disk's
 * connections. An outage begins when the first of them drops and ends
 * when the last is back.
 */
struct blk_nbd_link_stats {
	atomic_uint_fast64_t lost; /* outages */
	atomic_uint_fast64_t restored; /* ... that ended */
	atomic_uint_fast64_t resent; /* requests sent again after a drop */
	atomic_uint_fast64_t timed_out; /* requests failed: server away */
	atomic_uint_fast64_t down; /* a gauge: connections away right now */
};

/*
 * The outage in progress, so that it is told once for the disk, not once
 * per connection: the backends' business.
 */
struct blk_nbd_outage {
	atomic_uint_fast64_t resent; /* requests sent again */
	atomic_uint_fast64_t unflushed; /* writes not flushed at the drop */
	atomic_bool told_wait_over; /* "still away" was said */
	atomic_bool told_refusal; /* an unfit export was described */
};

/* A copy of those counters, for anyone. */
struct blk_nbd_link_counts {
	uint64_t lost, restored, resent, timed_out, down;
};

void blk_nbd_link_read(struct blk_nbd_link_stats *s,
		       struct blk_nbd_link_counts *out);

/* The operator hears of a drop and of its end through this. */
typedef void blk_nbd_log_fn(void *arg, int priority, const char *msg);

/*
 * How a backend's dropped connection comes back. Filled by the image that
 * opened the export (libblk/image.h), read by its backends on their
 * workers; it must outlive them and not change while they exist.
 *
 * After a drop the backend reconnects to @uri at once, then after 100 ms,
 * doubling up to 1 s between attempts while requests wait and up to 5 s
 * after, for as long as the disk exists.
 * Requests wait for the new connection up to @timeout_ms after the drop;
 * after that what waits fails with EIO and new requests fail at once,
 * until a connection is back. A server whose export came back smaller
 * than @size, or read-only for a writable disk, or without the multi-conn
 * a multi-queue disk relies on, is refused (and tried again later).
 */
struct blk_nbd_link {
	const char *uri;
	bool readonly;
	uint64_t size; /* bytes, as first connected */
	bool multi_conn; /* the disk may have a connection per queue */
	unsigned int timeout_ms;
	blk_nbd_log_fn *log; /* on the worker; NULL: nothing said */
	void *log_arg;
	struct blk_nbd_link_stats stats;
	struct blk_nbd_outage outage;
};

/* Does @target name an NBD export rather than a file? */
bool blk_nbd_is_uri(const char *target);

/*
 * An export (libblk/backend.h's enum blk_cap): its data is the server's,
 * reached over the network and without a lock of its own; each ring has
 * a connection of its own, which reconnects, and which a move to another
 * worker would make anew.
 */
#define BLK_NBD_CAPS (BLK_CAP_STORES | BLK_CAP_REMOTE_OPEN | BLK_CAP_RECONNECT)

/*
 * Connect to @uri and read what it exports. -errno on failure, with libnbd's
 * explanation in @why; -ETIMEDOUT when the server has not completed the
 * handshake within 5 s (one that accepts and never answers). A read-only
 * export refuses a writable connection (-EROFS). Any thread.
 */
int blk_nbd_connect(const char *uri, bool readonly, struct nbd_handle **out,
		    struct blk_nbd_export *exp, char *why, size_t why_len);

/* Close a handle blk_nbd_connect() gave (NULL: nothing). */
void blk_nbd_close(struct nbd_handle *h);

/*
 * A backend over @h, which it takes over (closed by its destroy); it
 * reconnects as @link says. With @h NULL it has no connection yet and
 * makes its first at its first request, on the worker, without blocking
 * (a multi-conn disk's further queues: their connections must not hold up
 * the thread that creates the backend), as a reconnection is made: the
 * requests wait for it up to @link's timeout; an outage is told only once
 * a connection it had is lost. @exp is what the disk's first connection
 * found, which later ones are checked against.
 */
int blk_backend_nbd_new(struct nbd_handle *h, const struct blk_nbd_export *exp,
			struct blk_nbd_link *link, struct blk_backend **out);

#endif /* LIBBLK_BACKEND_NBD_H */

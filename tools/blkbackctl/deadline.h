/* SPDX-License-Identifier: MIT */
/*
 * blkbackctl's deadlines: no command waits for ever on a daemon that does
 * not answer (a main thread stuck, a daemon stopped). They are armed here
 * and nowhere else:
 *
 *   daemon    each request to the control socket, the whole exchange
 *             (connect, send, reply), within deadline_request_ms(): the
 *             caller polls and says what happened (request.h). A loop of
 *             requests (top, move --wait) bounds each one, not the loop.
 *
 * One answer's bound is BLKBACKCTL_TIMEOUT_MS, or DEADLINE_DEFAULT_MS.
 * Exit status 1 on expiry, as for a daemon out of reach. One thread.
 */
#ifndef BLKBACKCTL_DEADLINE_H
#define BLKBACKCTL_DEADLINE_H

#include <stddef.h>
#include <stdint.h>

/* One answer of the daemon, unless BLKBACKCTL_TIMEOUT_MS. */
#define DEADLINE_DEFAULT_MS 30000

/*
 * The bound of the requests the daemon answers once work is done: a
 * snapshot (a drain of up to 5 s, then the filesystem's FICLONE of the
 * whole image or the cluster's snapshot) and a move's start (the same
 * drain, then DEST created, an RBD image in the cluster). Their time
 * grows with the image and the storage, not with the daemon's health.
 */
#define DEADLINE_LONG_MS (10 * 60 * 1000)

/*
 * Read BLKBACKCTL_TIMEOUT_MS from the environment, before any deadline is
 * armed. Returns 0, or -EINVAL when it is set to anything but 1 to
 * 3600000 (milliseconds).
 */
int deadline_init(void);

/* The monotonic clock in milliseconds, which deadlines are counted on. */
int64_t deadline_now_ms(void);

/* @ms as people read it, "30 s" or "2500 ms", into @buf. */
void deadline_text(int64_t ms, char *buf, size_t len);

/*
 * How long @request (a control request line, "stats 1/51712") may take:
 * DEADLINE_LONG_MS for snapshot and move, one answer's bound otherwise.
 */
int deadline_request_ms(const char *request);

#endif /* BLKBACKCTL_DEADLINE_H */

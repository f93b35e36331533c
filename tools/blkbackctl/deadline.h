/* SPDX-License-Identifier: MIT */
/*
 * blkbackctl's deadlines: no command waits for ever on a daemon or a
 * xenstore that does not answer (a main thread stuck, a daemon or
 * xenstored stopped). They are armed here and nowhere else:
 *
 *   daemon    each request to the control socket, the whole exchange
 *             (connect, send, reply), within deadline_request_ms(): the
 *             caller polls and says what happened (request.h). A loop of
 *             requests (top, move --wait) bounds each one, not the loop.
 *   xenstore  libxenstore's calls block and take no timeout, so a timer
 *             (SIGALRM) bounds a stretch of them: a name lookup, or the
 *             whole of an attach or detach. On expiry its handler writes
 *             which operation did not answer and exits 1 at once; the
 *             interrupted call never returns.
 *
 * One answer's bound is BLKBACKCTL_TIMEOUT_MS, or DEADLINE_DEFAULT_MS.
 * Exit status 1 on expiry, as for a daemon out of reach. One thread.
 */
#ifndef BLKBACKCTL_DEADLINE_H
#define BLKBACKCTL_DEADLINE_H

#include <stddef.h>
#include <stdint.h>

/* One answer of the daemon or of xenstore, unless BLKBACKCTL_TIMEOUT_MS. */
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
 * A snapshot --copy is answered once the whole image is copied at its
 * rate limit: an hour, a 200 GiB disk at the default 64 MiB/s. A longer
 * one goes on in the daemon; list and stats show when it is copied.
 */
#define DEADLINE_COPY_MS (60 * 60 * 1000)

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
 * DEADLINE_LONG_MS for snapshot and move, DEADLINE_COPY_MS for
 * snapshot-copy, one answer's bound otherwise.
 */
int deadline_request_ms(const char *request);

/*
 * Bound the xenstore calls from here to deadline_store_end(): one
 * answer's bound plus @extra_s (an attach's --timeout, spent waiting for
 * blkbackd). Stretches nest: an inner one (a name looked up within an
 * attach) counts against the outer one and arms nothing of its own.
 */
void deadline_store_begin(unsigned int extra_s);

/*
 * What the stretch is doing now, printf-style ("reading domain 7's
 * name"): the operation the handler names if xenstore never answers.
 */
void deadline_store_doing(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* The stretch is over; the outermost one disarms the timer. */
void deadline_store_end(void);

#endif /* BLKBACKCTL_DEADLINE_H */

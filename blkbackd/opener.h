/* SPDX-License-Identifier: MIT */
/*
 * Opening remote images (an NBD export, an RBD image) off the main thread.
 *
 * Connecting to a store waits on something the daemon does not own: an
 * NBD server that accepts and never answers, a Ceph monitor that is away.
 * The main thread must never wait on that (it serves xenstore, the
 * control socket, the watchdog and SIGTERM for every guest), so each such
 * open runs on a thread of its own and reports back through an eventfd
 * that the main loop polls.
 *
 * Threads: opener_new(), opener_open(), opener_cancel(), opener_take_done(),
 * opener_busy() and opener_free() are the main thread's. A job's thread
 * runs blk_image_open() (libblk/image.h) and nothing else: it shares no
 * daemon state, only the job, handed back under the opener's mutex.
 *
 * Deadlines: an attempt is bounded by its store's own: blk_nbd_connect()
 * gives up after 5 s, librados after its client_mount_timeout (20 s).
 * One thread per attempt in flight, and at most one attempt per device,
 * so the threads are bounded by the devices.
 *
 * Ownership: a job belongs to the opener from opener_open() to the
 * opener_take_done() that hands its result over; the caller keeps the
 * pointer only to cancel it. A cancelled job's image is closed when its
 * attempt ends, by the main thread; nobody waits for that.
 *
 * At exit a thread may still be inside a connect (librados has no way to
 * interrupt rados_connect()): the daemon does not join it, and leaves with
 * _exit() instead of exit() while opener_busy(), so that no library's
 * destructors run under a thread still using the library.
 *
 * Local files are not opened here: they are the host's own, opened and
 * locked without waiting (a lock another process holds is refused at once).
 */
#ifndef BLKBACKD_OPENER_H
#define BLKBACKD_OPENER_H

#include <stdbool.h>
#include <stdint.h>

#include "libblk/image.h"

struct opener;
struct opener_job;

/* What to open, as blk_image_open() takes it; copied by opener_open(). */
struct opener_request {
	const char *path;
	bool readonly;
	enum blk_cache_mode cache;
	const char *owner; /* NULL: none */
	unsigned int delay_ms; /* wait this long first (a retry's backoff) */
};

/* An opener with no job; -errno without memory or an eventfd. */
int opener_new(struct opener **out);
/* After the last job ended (!opener_busy()). NULL: nothing. */
void opener_free(struct opener *o);
/* Readable when jobs have ended: call opener_take_done(). */
int opener_fd(const struct opener *o);
/* Whether a job's thread still runs. */
bool opener_busy(const struct opener *o);

/*
 * Start opening @req for the device named by @cookie; NULL and -errno in
 * @err when no thread could be started.
 */
struct opener_job *opener_open(struct opener *o, uint64_t cookie,
			       const struct opener_request *req, int *err);
/*
 * The job's result is no longer wanted (its device went away, or the
 * daemon stops): it is closed when the attempt ends. A job not begun yet
 * (still in its delay) does not begin.
 */
void opener_cancel(struct opener_job *j);

/*
 * A job ended: @ret is blk_image_open()'s, and @img the image, open when
 * @ret is 0 and else described as blk_image_open() leaves it (holder,
 * detail). Return true to take the image over (copy it; the job's copy is
 * then forgotten), false to have it closed.
 */
typedef bool opener_done_fn(void *arg, uint64_t cookie, int ret,
			    struct blk_image *img);
/* Hand every ended job that is not cancelled to @fn, and free them all. */
void opener_take_done(struct opener *o, opener_done_fn *fn, void *arg);

#endif /* BLKBACKD_OPENER_H */

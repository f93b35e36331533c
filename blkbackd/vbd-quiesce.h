/* SPDX-License-Identifier: MIT */
/*
 * Quiescing a device: its guest pauses, never fails, while an action runs
 * on an image that nothing writes. A snapshot (vbd-snapshot.c) takes its
 * copy so; a live move (vbd-move.c) switches to its new image so, and
 * starts and stops tracking the guest's writes.
 *
 * What happens, in order:
 *
 *   1. stop   every ring of the device is disconnected as for a move
 *             between workers (BLK_DISCONNECT_MOVE): the worker takes no
 *             new request from it; what the guest queues meanwhile stays
 *             on the shared ring, and the ring and its persistent grants
 *             stay mapped
 *   2. drain  the requests in flight are answered as usual; a ring whose
 *             last one was answered is closed by its worker and held here
 *   3. act    once every ring is held (the device has nothing in flight,
 *             and takes nothing), the action runs on a thread of its own:
 *             the main thread goes on serving every other guest, the
 *             control socket and xenstore meanwhile
 *      then, on the main thread, the request's hook, if any: what the
 *             rings are connected again with may change there
 *   4. resume every ring is connected again on its worker with what it
 *             kept mapped, as after a move; the guest's queued requests
 *             are served from its ring indexes and it is sent an event
 *
 * The pause is from 1 to the end of 4, measured by the daemon.
 *
 * Bounded: when the rings have not drained @drain_ms after the stop (the
 * storage does not answer), the action is not run: @done is told
 * -ETIMEDOUT at once, each ring held so far is resumed then, and each
 * other one as soon as its worker closes it. The guest never waits for a
 * quiesce longer than for its own I/O. The action itself is not bounded
 * here (FICLONE takes what the filesystem takes): choose actions with a
 * bound of their own.
 *
 * While a device is quiesced its rings count as closing (v->closing
 * when it disconnects): a detach or a daemon stop meanwhile waits for
 * the action to end, so the image the action uses stays open; then the
 * rings are closed, not resumed (@done is told -ECANCELED if the action
 * had not run). A ring that cannot be connected again fails the device.
 *
 * Threads: everything here is the main thread's, but @act, which runs on
 * a thread of its own and must touch nothing of the daemon's but the
 * image @arg names (its fd and RBD handle are usable from any thread).
 */
#ifndef BLKBACKD_VBD_QUIESCE_H
#define BLKBACKD_VBD_QUIESCE_H

#include <stddef.h>
#include <stdint.h>

#include "blkbackd/vbd-internal.h"

/* The default bound on a quiesce's draining. */
#define VBD_QUIESCE_DRAIN_MS 5000

/* Blocking work on a quiet image; 0 or -errno, with why in @why. */
typedef int vbd_quiet_fn(void *arg, char *why, size_t why_len);

/*
 * The quiesce ended: @ret is the action's, or -ETIMEDOUT (drain not
 * finished in time: not run) or -ECANCELED (the device closed first: not
 * run), with @why; @p its times so far (its rings may still be resuming
 * after -ETIMEDOUT: resumed_ns is then 0). Main thread; once per quiesce.
 * @v may not be used after it returns (it may be freed soon after).
 */
typedef void vbd_quiesced_fn(void *arg, struct vbd *v, int ret, const char *why,
			     const struct vbd_pause *p);

/*
 * The action succeeded and nothing of @v is in flight: change what the
 * rings will be connected again with (each queue's params, e.g. its dirty
 * map) or swap v->image (its old backends are destroyed as each ring is
 * connected again, before @done). Main thread; runs also when the device
 * closes meanwhile (its rings then close instead of resuming).
 */
typedef void vbd_quiet_hook_fn(void *arg, struct vbd *v);

struct vbd_quiesce_req {
	vbd_quiet_fn *act;
	vbd_quiesced_fn *done;
	vbd_quiet_hook_fn *hook; /* NULL: none */
	void *arg; /* for all three; the caller's until @done */
	unsigned int drain_ms; /* 0: VBD_QUIESCE_DRAIN_MS */
};

/*
 * Quiesce @v to run @req->act. 0: @req->done will be called, never before
 * this returned; else -errno and @why (not connected, closing, already
 * quiesced, a ring moving between workers, an NBD disk, whose rings are
 * each a connection to its server), and nothing happened.
 */
int vbd_quiesce(struct vbd *v, const struct vbd_quiesce_req *req,
		struct vbd_why *why);

/* Whether @v is quiesced (vbd_quiesce() until its last ring resumed). */
bool vbd_quiesced(const struct vbd *v);

/*
 * Queue @q's ring, quiesced, closed on its worker with @final counters
 * and @kept mappings (both taken). From vbd_rings_closed().
 */
void vbd_quiesce_ring_closed(struct vbd *v, unsigned int q,
			     const struct blk_stats *final,
			     struct blk_handover *kept);

/* @v is closing (vbd_disconnect_as()): its quiesced rings will not resume. */
void vbd_quiesce_cancel(struct vbd *v);

/*
 * Hand finished actions to their devices and time out drains past their
 * bound. Main thread: from vbd_rings_closed(), after d->closed_fd (on
 * which an action's thread signals its end) was read, and every
 * VBD_QUIESCE_TICK_MS while vbd_quiesce_pending() says so (vbd.h).
 */
void vbd_quiesce_run(struct daemon *d);

#endif /* BLKBACKD_VBD_QUIESCE_H */

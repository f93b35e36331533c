// SPDX-License-Identifier: MIT
/*
 * Quiescing a device (vbd-quiesce.h): its rings stopped and held as for a
 * move between workers, an action on a thread of its own, the rings
 * connected again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blkbackd/vbd-quiesce.h"
#include "blkbackd/worker.h"
#include "libblk/poll.h" /* blk_now_ns() */

/*
 * A ring its worker closed, held until it resumes or closes for good; its
 * counters went to v->moved when it closed, so that the disk's totals do
 * not dip during the pause.
 */
struct held_ring {
	bool closed;
	struct blk_handover *kept;
};

struct vbd_quiesce {
	struct vbd_quiesce_req req;
	struct vbd_pause pause;
	uint64_t deadline_ns;
	unsigned int pending; /* rings told to stop and not closed yet */
	bool acting; /* the action's thread runs */
	bool given_up; /* drain too slow (or a stop failed): resume them */
	bool cancelled; /* the device closes: close them, resume none */
	bool told; /* req.done was called */
	struct vbd_why lost; /* a ring that did not connect again; "" none */
	/* Written by the action's thread before it sets @finished. */
	atomic_bool finished;
	int ret;
	char why[512];
	int wake_fd; /* the thread's own copy of d->closed_fd */
	struct held_ring ring[];
};

bool vbd_quiesced(const struct vbd *v)
{
	return v->quiesce != NULL;
}

bool vbd_quiesce_pending(const struct daemon *d)
{
	for (const struct vbd *v = d->vbds; v; v = v->next)
		if (v->quiesce)
			return true;
	return false;
}

static void tell(struct vbd *v, int ret, const char *why)
{
	struct vbd_quiesce *qz = v->quiesce;

	if (qz->told)
		return;
	qz->told = true;
	qz->req.done(qz->req.arg, v, ret, why, &qz->pause);
}

/* Every ring is back on its worker, or closed: @v is no longer quiesced. */
static void finish(struct vbd *v)
{
	struct vbd_quiesce *qz = v->quiesce;
	struct vbd_why lost = qz->lost;

	v->quiesce = NULL;
	free(qz);
	/* Now that a disconnect no longer finds it quiesced. */
	if (lost.msg[0])
		vbd_ring_lost(v, lost.msg);
}

/* Ring @q connected again on its worker with what it kept mapped. */
static void resume_ring(struct vbd *v, unsigned int q)
{
	struct vbd_quiesce *qz = v->quiesce;
	struct held_ring *h = &qz->ring[q];
	struct vbd_why why;

	v->queue[q].quiesced = false;
	h->closed = false;
	if (vbd_ring_resume(v, q, h->kept, &why) < 0 && !qz->lost.msg[0])
		qz->lost = why;
	h->kept = NULL;
}

static void resume_held(struct vbd *v)
{
	struct vbd_quiesce *qz = v->quiesce;

	for (unsigned int q = 0; q < v->nr_queues; q++)
		if (qz->ring[q].closed)
			resume_ring(v, q);
	if (!qz->pending)
		qz->pause.resumed_ns = blk_now_ns();
}

/*
 * Ring @q closes for good (the device closes), with @final counters if
 * they were not kept already. From a disconnect (@now), as
 * vbd_disconnect_as() closes a ring its worker no longer has; else as
 * vbd_rings_closed() does, which may free @v.
 */
static void close_ring(struct vbd *v, unsigned int q, struct blk_handover *kept,
		       const struct blk_stats *final, bool now)
{
	v->queue[q].quiesced = false;
	blk_handover_release(kept);
	if (now)
		vbd_queue_closed(v, q, final);
	else
		vbd_ring_ended(v->d, v, q, final);
}

/*
 * The device closes: its held rings close. The quiesce ends with the
 * last of them, before it, whose close may free @v.
 */
static void close_held(struct vbd *v, bool now)
{
	struct vbd_quiesce *qz = v->quiesce;
	bool ends = !qz->pending && !qz->acting;
	unsigned int last = v->nr_queues;

	for (unsigned int q = 0; q < v->nr_queues; q++) {
		struct held_ring *h = &qz->ring[q];

		if (!h->closed)
			continue;
		if (last < v->nr_queues)
			close_ring(v, last, qz->ring[last].kept, NULL, now);
		h->closed = false;
		last = q;
	}
	if (last == v->nr_queues)
		return;
	if (ends) {
		struct blk_handover *kept = qz->ring[last].kept;

		v->quiesce = NULL;
		free(qz);
		close_ring(v, last, kept, NULL, now);
		return;
	}
	close_ring(v, last, qz->ring[last].kept, NULL, now);
}

/* Resume what is held, and the rest as it closes. */
static void give_up(struct vbd *v, int ret, const char *why)
{
	struct vbd_quiesce *qz = v->quiesce;

	qz->given_up = true;
	tell(v, ret, why);
	resume_held(v);
	if (!qz->pending)
		finish(v);
}

static void *act_thread(void *arg)
{
	struct vbd_quiesce *qz = arg;
	int fd = qz->wake_fd;
	const uint64_t one = 1;

	qz->ret = qz->req.act(qz->req.arg, qz->why, sizeof(qz->why));
	/* From here on @qz is the main thread's: it may free it at once. */
	atomic_store_explicit(&qz->finished, true, memory_order_release);
	if (write(fd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow with one write per action. */
	}
	close(fd);
	return NULL;
}

static int start_action(struct vbd_quiesce *qz, int closed_fd)
{
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	qz->wake_fd = dup(closed_fd);
	if (qz->wake_fd < 0)
		return -errno;
	ret = pthread_attr_init(&attr);
	if (!ret)
		ret = pthread_attr_setdetachstate(&attr,
						  PTHREAD_CREATE_DETACHED);
	if (!ret)
		ret = pthread_create(&t, &attr, act_thread, qz);
	pthread_attr_destroy(&attr);
	if (ret) {
		close(qz->wake_fd);
		return -ret;
	}
	pthread_setname_np(t, "blkbackd-quiet");
	qz->acting = true;
	return 0;
}

/* Every ring closed: nothing in flight. Run the action. */
static void drained(struct vbd *v)
{
	struct vbd_quiesce *qz = v->quiesce;
	char why[128];
	int ret;

	qz->pause.drained_ns = blk_now_ns();
	ret = start_action(qz, v->d->closed_fd);
	if (ret < 0) {
		snprintf(why, sizeof(why), "cannot start a thread: %s",
			 strerror(-ret));
		give_up(v, ret, why);
	}
}

void vbd_quiesce_ring_closed(struct vbd *v, unsigned int q,
			     const struct blk_stats *final,
			     struct blk_handover *kept)
{
	struct vbd_quiesce *qz = v->quiesce;
	struct held_ring *h = &qz->ring[q];

	qz->pending--;
	/* The device closes: its counters go with the rest of its last. */
	if (qz->cancelled) {
		if (!qz->pending) {
			v->quiesce = NULL;
			free(qz);
		}
		close_ring(v, q, kept, final, false);
		return;
	}
	vbd_keep_moved_stats(v, final);
	h->closed = true;
	h->kept = kept;
	if (qz->given_up) {
		resume_ring(v, q);
		if (!qz->pending) {
			qz->pause.resumed_ns = blk_now_ns();
			finish(v);
		}
	} else if (!qz->pending) {
		drained(v);
	}
}

/* The action ended: resume, or close what the device no longer wants. */
static void acted(struct vbd *v)
{
	struct vbd_quiesce *qz = v->quiesce;

	qz->acting = false;
	qz->pause.acted_ns = blk_now_ns();
	if (qz->ret == 0 && qz->req.hook)
		qz->req.hook(qz->req.arg, v);
	if (qz->cancelled) {
		tell(v, qz->ret, qz->why);
		close_held(v, false);
		return;
	}
	resume_held(v);
	tell(v, qz->ret, qz->why);
	finish(v);
}

void vbd_quiesce_cancel(struct vbd *v)
{
	struct vbd_quiesce *qz = v->quiesce;

	if (!qz || qz->cancelled)
		return;
	qz->cancelled = true;
	/* An action under way ends first; its result is told then. */
	if (qz->acting)
		return;
	tell(v, -ECANCELED, "the device closed before the action ran");
	close_held(v, true);
}

/* The drain took too long: the storage does not answer. */
static void drain_overdue(struct vbd *v)
{
	struct vbd_quiesce *qz = v->quiesce;
	char why[160];

	/* A ring did not stop (vbd_quiesce()): said here, not there. */
	if (qz->ret < 0) {
		give_up(v, qz->ret, qz->why);
		return;
	}
	snprintf(why, sizeof(why),
		 "%u of its %u rings still had I/O in flight %u ms after they "
		 "stopped taking requests (the storage is slow to answer): "
		 "nothing was done, the guest goes on",
		 qz->pending, v->nr_queues, qz->req.drain_ms);
	give_up(v, -ETIMEDOUT, why);
}

void vbd_quiesce_run(struct daemon *d)
{
	uint64_t now = blk_now_ns();
	struct vbd *v, *next;

	for (v = d->vbds; v; v = next) {
		struct vbd_quiesce *qz = v->quiesce;

		next = v->next;
		if (!qz)
			continue;
		if (qz->acting &&
		    atomic_load_explicit(&qz->finished, memory_order_acquire))
			acted(v);
		else if (!qz->acting && qz->pending && !qz->given_up &&
			 !qz->cancelled && now >= qz->deadline_ns)
			drain_overdue(v);
	}
}

/* Why @v cannot be quiesced now; 0 when it can. */
static int cannot_quiesce(const struct vbd *v, struct vbd_why *why)
{
	if (v->quiesce)
		return vbd_why(why, -EBUSY,
			       "it is paused already (a snapshot of it, or a "
			       "move's start or switch, is under way): try "
			       "again in a moment");
	if (v->closing)
		return vbd_why(why, -EBUSY,
			       "its rings are closing (the guest detaches)");
	if (!v->nr_queues || !vbd_image_open(v))
		return vbd_why(why, -ENOTCONN,
			       "no guest is connected to it: nothing to pause "
			       "(copy its image while nothing uses it)");
	/* Resuming would connect each of its rings to the server anew. */
	if (v->image.nbd_uri)
		return vbd_why(why, -EOPNOTSUPP,
			       "an NBD disk's rings are connections to its "
			       "server: it is not paused");
	for (unsigned int q = 0; q < v->nr_queues; q++)
		if (v->queue[q].moving_to)
			return vbd_why(why, -EBUSY,
				       "queue %u is moving between workers "
				       "this instant: try again",
				       q);
	return 0;
}

int vbd_quiesce(struct vbd *v, const struct vbd_quiesce_req *req,
		struct vbd_why *why)
{
	struct vbd_quiesce *qz;
	int ret = cannot_quiesce(v, why);

	if (ret < 0)
		return ret;
	qz = calloc(1, sizeof(*qz) + v->nr_queues * sizeof(qz->ring[0]));
	if (!qz)
		return vbd_why(why, -ENOMEM, "out of memory");
	qz->req = *req;
	if (!qz->req.drain_ms)
		qz->req.drain_ms = VBD_QUIESCE_DRAIN_MS;
	atomic_init(&qz->finished, false);
	qz->wake_fd = -1;
	v->quiesce = qz;
	qz->pause.stopped_ns = blk_now_ns();
	qz->deadline_ns =
		qz->pause.stopped_ns + (uint64_t)qz->req.drain_ms * 1000000;
	for (unsigned int q = 0; q < v->nr_queues; q++) {
		ret = worker_disconnect(v->queue[q].w, queue_cookie(v, q),
					BLK_DISCONNECT_MOVE);
		if (ret < 0)
			break;
		v->queue[q].quiesced = true;
		qz->pending++;
	}
	if (ret < 0 && !qz->pending) {
		v->quiesce = NULL;
		free(qz);
		return vbd_why(why, ret, "cannot stop its queue 0: %s",
			       strerror(-ret));
	}
	/* Given up at the next vbd_quiesce_run(), not before we return. */
	if (ret < 0) {
		qz->ret = ret;
		snprintf(qz->why, sizeof(qz->why),
			 "a worker did not know one of its rings");
		qz->deadline_ns = qz->pause.stopped_ns;
	}
	vbd_log(v, LOG_DEBUG, 0, "paused: %u rings stop taking requests",
		qz->pending);
	return 0;
}

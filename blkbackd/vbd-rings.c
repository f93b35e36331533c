// SPDX-License-Identifier: MIT
/*
 * A device's rings on the workers: each placed on the worker with the
 * fewest, its backend (one per ring, made from the image) lent to that
 * worker until the ring closes; disconnected without waiting, moved
 * between workers for balance.c, and all closed at shutdown.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blkbackd/stats-log.h"
#include "blkbackd/vbd-internal.h"
#include "blkbackd/vbd-move.h"
#include "blkbackd/vbd-quiesce.h"
#include "blkbackd/worker.h"
#include "libblk/poll.h" /* blk_now_ns() */

bool vbd_queue_closed(struct vbd *v, unsigned int q,
		      const struct blk_stats *final)
{
	blk_backend_destroy(v->queue[q].backend);
	v->queue[q].backend = NULL;
	if (v->final && final)
		blk_stats_add(v->final, final);
	if (--v->closing)
		return false;
	free(v->queue);
	v->queue = NULL;
	v->nr_queues = 0;
	free(v->moved);
	v->moved = NULL;
	vbd_log(v, LOG_INFO, 0, "disconnected");
	/* Its counters, and its stage times when they are timed. */
	if (v->final &&
	    vbd_log_pass(v, LOG_INFO, v->d->opts.stage_timing ? 3 : 2)) {
		const struct log_disk who = vbd_who(v);

		stats_log(&who, v->name, v->final);
	}
	free(v->final);
	v->final = NULL;
	return true;
}

/*
 * Each worker answers the ring's started I/O, then unmaps and unbinds it;
 * returning at once means a guest with deep queues on slow storage does
 * not hold up the others' attach and detach. Until vbd_rings_closed() has
 * seen the last ring closed, v->closing says so and the device waits.
 */
void vbd_disconnect_as(struct vbd *v, enum blk_disconnect_mode mode)
{
	unsigned int n = v->nr_queues;

	if (!n || v->closing)
		return;
	/* Its counters are logged once all are in; without memory, not. */
	v->final = calloc(1, sizeof(*v->final));
	if (v->final && v->moved)
		blk_stats_add(v->final, v->moved);
	v->closing = n;
	for (unsigned int q = 0; q < n; q++) {
		struct vbd_queue *vq = &v->queue[q];

		/* Quiesced: closing already, or held (vbd_quiesce_cancel()). */
		if (vq->quiesced)
			continue;
		/* A ring on its way to another worker is closing already. */
		if (vq->moving_to) {
			vq->moving_to = NULL;
			v->d->moving_rings--;
			continue;
		}
		if (worker_disconnect(vq->w, queue_cookie(v, q), mode) < 0)
			vbd_queue_closed(v, q, NULL);
	}
	vbd_quiesce_cancel(v);
}

void vbd_disconnect(struct vbd *v)
{
	vbd_disconnect_as(v, BLK_DISCONNECT_CLOSE);
}

static struct worker *least_loaded_worker(struct daemon *d)
{
	struct worker *best = d->workers[0];

	for (unsigned int i = 1; i < d->nr_workers; i++)
		if (worker_nr_rings(d->workers[i]) < worker_nr_rings(best))
			best = d->workers[i];
	return best;
}

void vbd_cap_rings(struct vbd *v)
{
	unsigned int cap = v->d->opts.max_ring_pages_per_disk;
	struct blk_backend_features *f = &v->features;

	while (f->max_ring_order > 0 && 1u << f->max_ring_order > cap)
		f->max_ring_order--;
	if (f->max_queues << f->max_ring_order > cap)
		f->max_queues = cap >> f->max_ring_order;
}

bool vbd_connect_due(struct vbd *v)
{
	if (rate_take(&v->connects, VBD_CONNECT_BURST, VBD_CONNECT_PER_S, 1,
		      blk_now_ns())) {
		v->connect_waits = false;
		return true;
	}
	if (!v->connect_waits)
		vbd_log(v, LOG_NOTICE, 0,
			"the frontend connects more often than %u times at "
			"once and %u a second after: its connect waits",
			VBD_CONNECT_BURST, VBD_CONNECT_PER_S);
	v->connect_waits = true;
	return false;
}

bool vbd_connects_waiting(const struct daemon *d)
{
	for (const struct vbd *v = d->vbds; v; v = v->next)
		if (v->connect_waits)
			return true;
	return false;
}

/* Looked at again, each connects if its frontend still wants it. */
void vbd_retry_connects(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		if (!v->connect_waits)
			continue;
		v->connect_waits = false;
		v->stale = true;
	}
	vbd_reconcile_stale(d);
}

/* Why @q's ring could not be connected, in words for the operator. */
static int vbd_queue_refused(struct vbd *v, const struct blk_frontend *fe,
			     unsigned int q, int err, struct vbd_why *why)
{
	const struct blk_frontend_queue *fq = &fe->queue[q];
	struct blk_budget *b = &v->d->mappings;

	if (err == -EDQUOT)
		return vbd_why(why, err,
			       "queue %u: its %u-page ring does not fit in the "
			       "grant mapping budget: rings already map %ld of "
			       "its %ld pages (max-mapped-grants); raise "
			       "max-mapped-grants, or lower max-queues or "
			       "max-ring-pages-per-disk",
			       q, 1u << fe->ring_order,
			       blk_budget_ring_pages(b), b->total);
	return vbd_why(why, err,
		       "queue %u: cannot map ring-ref %u (%u pages) or bind "
		       "event-channel %u: %s",
		       q, (unsigned int)fq->ring_refs[0], 1u << fe->ring_order,
		       (unsigned int)fq->event_channel, strerror(-err));
}

/* Connecting failed: without a ring connected, the device has none. */
static int vbd_queues_failed(struct vbd *v, int err)
{
	if (!v->nr_queues) {
		free(v->queue);
		v->queue = NULL;
	}
	return err;
}

int vbd_connect_queues(struct vbd *v, const struct blk_frontend *fe,
		       struct vbd_why *why)
{
	struct blk_conn_params p = {
		.domid = v->fe_domid,
		.ring_order = fe->ring_order,
		.abi = fe->abi,
		.limits = {
			.sectors = vbd_capacity(v),
			.sector_size = v->sector_size,
			.max_indirect_segments =
				v->features.max_indirect_segments,
			.readonly = v->image.readonly,
			.discard = v->features.discard,
			.barrier = v->features.barrier,
		},
		.persistent = fe->persistent,
		.throttle = &v->throttle,
		/* A live move tracks the writes of a guest that reconnects. */
		.dirty = vbd_move_map(v),
	};

	v->queue = calloc(fe->nr_queues, sizeof(*v->queue));
	if (!v->queue)
		return vbd_why(why, -ENOMEM, "out of memory for %u rings",
			       fe->nr_queues);
	for (unsigned int q = 0; q < fe->nr_queues; q++) {
		const struct blk_frontend_queue *fq = &fe->queue[q];
		struct worker *w = least_loaded_worker(v->d);
		int ret;

		memcpy(p.ring_refs, fq->ring_refs, sizeof(p.ring_refs));
		p.remote_port = fq->event_channel;
		p.owner = (void *)(uintptr_t)queue_cookie(v, q);
		ret = blk_image_new_backend(&v->image, &p.backend);
		if (ret < 0) {
			vbd_why(why, ret,
				"queue %u: cannot reach image %s: %s%s%s", q,
				v->image_path, strerror(-ret),
				v->image.detail[0] ? ": " : "",
				v->image.detail);
			return vbd_queues_failed(v, ret);
		}
		ret = worker_connect(w, &p);
		if (ret < 0) {
			blk_backend_destroy(p.backend);
			vbd_queue_refused(v, fe, q, ret, why);
			return vbd_queues_failed(v, ret);
		}
		v->queue[q] = (struct vbd_queue){ .w = w,
						  .backend = p.backend,
						  .params = p };
		v->nr_queues = q + 1;
		vbd_log(v, LOG_DEBUG, 0, "queue %u on worker %u", q,
			worker_index(w));
	}
	return 0;
}

/* ---- moving rings between workers (balance.c decides which) ---- */

int vbd_move_ring(struct daemon *d, uint64_t cookie, struct worker *to)
{
	struct vbd *v = vbd_by_cookie(d, cookie);
	unsigned int q = cookie & QUEUE_MASK;
	struct vbd_queue *vq;
	uint64_t start_ns;
	int ret;

	/*
	 * Not while the device closes; not a ring whose backend cannot be
	 * made anew on another worker unnoticed (BLK_CAP_MOVE: an NBD
	 * disk's is a connection to its server).
	 */
	if (!v || q >= v->nr_queues || v->closing ||
	    !(v->image.caps & BLK_CAP_MOVE))
		return -EBUSY;
	vq = &v->queue[q];
	if (vq->moving_to || vq->quiesced || vq->w == to)
		return -EBUSY;
	/*
	 * As for a restart, what it has not started stays on the ring; but
	 * the ring and its persistent grants stay mapped for the new worker.
	 */
	/*
	 * Before the command: the worker may begin closing it at once, and
	 * its draining and releasing are parts of this closing.
	 */
	start_ns = blk_now_ns();
	ret = worker_disconnect(vq->w, cookie, BLK_DISCONNECT_MOVE);
	if (ret < 0)
		return ret;
	vq->moving_to = to;
	vq->move_start_ns = start_ns;
	d->moving_rings++;
	vbd_log(v, LOG_DEBUG, 0, "queue %u moves from worker %u to worker %u",
		q, worker_index(vq->w), worker_index(to));
	return 0;
}

bool vbd_rings_moving(const struct daemon *d)
{
	return d->moving_rings > 0;
}

void vbd_keep_moved_stats(struct vbd *v, const struct blk_stats *final)
{
	if (!v->moved)
		v->moved = calloc(1, sizeof(*v->moved));
	if (v->moved && final)
		blk_stats_add(v->moved, final);
	else
		vbd_log(v, LOG_WARNING, 0,
			"out of memory: its counters restart");
}

int vbd_ring_reconnect(struct vbd *v, unsigned int q, struct blk_handover *kept)
{
	struct vbd_queue *vq = &v->queue[q];
	int ret;

	blk_backend_destroy(vq->backend);
	vq->backend = NULL;
	ret = blk_image_new_backend(&v->image, &vq->backend);
	if (ret < 0) {
		blk_handover_release(kept);
		return ret;
	}
	vq->params.backend = vq->backend;
	vq->params.limits.sectors = vbd_capacity(v);
	/* Taken by the connect, whatever it returns; used once. */
	vq->params.handover = kept;
	ret = worker_connect(vq->w, &vq->params);
	vq->params.handover = NULL;
	if (ret < 0) {
		blk_backend_destroy(vq->backend);
		vq->backend = NULL;
	}
	return ret;
}

int vbd_ring_resume(struct vbd *v, unsigned int q, struct blk_handover *kept,
		    struct vbd_why *why)
{
	int ret = vbd_ring_reconnect(v, q, kept);

	if (ret < 0)
		return vbd_why(why, ret,
			       "queue %u: cannot connect its ring again on "
			       "worker %u after a pause: %s",
			       q, worker_index(v->queue[q].w), strerror(-ret));
	return 0;
}

/*
 * Connected on the new worker as a restarted daemon would connect it
 * (blk_engine_connect() resumes from the ring's indexes and sends the
 * event the guest may be waiting for).
 */
int vbd_ring_moved(struct vbd *v, unsigned int q, const struct blk_stats *final,
		   struct blk_handover *kept, struct vbd_why *why)
{
	struct vbd_queue *vq = &v->queue[q];
	struct worker *to = vq->moving_to;
	/* Closing it took from its stop until now. */
	uint64_t closing_ns = blk_now_ns() - vq->move_start_ns, pause_ns;
	/* Of it, the old worker's (struct blk_stats' close). */
	uint64_t drain_ns = final ? final->close.drain_ns : 0;
	uint64_t release_ns = final ? final->close.release_ns : 0;
	/* Read before the connect takes it. */
	bool mapped = kept != NULL;
	int ret;

	vq->moving_to = NULL;
	v->d->moving_rings--;
	vbd_keep_moved_stats(v, final);
	/* Even on failure: vbd_disconnect() then finds it gone from there. */
	vq->w = to;
	ret = vbd_ring_reconnect(v, q, kept);
	/* The ring served nothing from its stop until it is connected again. */
	pause_ns = blk_now_ns() - vq->move_start_ns;
	v->moves.count++;
	v->moves.kept += ret == 0 && mapped;
	v->moves.paused_ns += pause_ns;
	v->moves.closing_ns += closing_ns;
	v->moves.draining_ns += drain_ns;
	v->moves.releasing_ns += release_ns;
	vbd_log(v, LOG_DEBUG, 0,
		"queue %u on worker %u after a pause of %.1f ms (%.1f "
		"to close it on the other: %.1f draining, %.1f releasing)",
		q, worker_index(to), (double)pause_ns / 1e6,
		(double)closing_ns / 1e6, (double)drain_ns / 1e6,
		(double)release_ns / 1e6);
	if (ret < 0)
		return vbd_why(why, ret,
			       "queue %u: cannot connect its ring on worker %u "
			       "after moving it: %s",
			       q, worker_index(to), strerror(-ret));
	return 0;
}

static bool vbd_any_closing(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->closing)
			return true;
	return false;
}

/*
 * The guests stay (a pause, not an error, blkbackd(8)); devices whose
 * detach was still under way finish it first.
 */
void vbd_close_all_rings(struct daemon *d)
{
	struct pollfd pfd = { .fd = d->closed_fd, .events = POLLIN };
	uint64_t count;

	d->stopping = true;
	for (struct vbd *v = d->vbds; v; v = v->next)
		vbd_disconnect_as(v, BLK_DISCONNECT_STOP);
	/* Leaving earlier would free backends the workers still use. */
	while (vbd_any_closing(d)) {
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			log_err("waiting for the rings to close: %m");
		if (read(d->closed_fd, &count, sizeof(count)) < 0 &&
		    errno != EAGAIN)
			log_err("reading the workers' closed rings: %m");
		vbd_rings_closed(d);
	}
}

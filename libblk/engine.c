// SPDX-License-Identifier: MIT
/*
 * The per-thread I/O engine: the pass that turns event-channel
 * notifications into consumed requests, and io_uring completions into
 * responses.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/engine-internal.h"

#define SQ_ENTRIES 256
#define CQ_ENTRIES 4096
/* Ring pages plus the persistent-grant caches of many connections. */
#define MAX_GRANTS 65536
/*
 * What one ring may put into one pass, so that a guest with a deep queue
 * cannot push the others' requests behind all of its own: a ring with more
 * stays kicked and is served again in the next pass, after the others.
 */
#define PASS_BUDGET_REQUESTS 32u
#define PASS_BUDGET_SEGMENTS 1024u /* 4 MiB */

/* io_uring user_data: an I/O pointer, or one of these tags in low bits. */
#define TAG_MASK 3ull
#define TAG_IO 0ull
#define TAG_EVTCHN 1ull
#define TAG_FD 2ull
/* A backend's watch: its pointer (16-byte aligned) | which << 2 | tag. */
#define TAG_BACKEND 3ull
#define BACKEND_PTR_MASK (~15ull)
#define WATCH_CANCEL 3u /* which of a cancel's own completion */

/* ---- setup ---- */

/*
 * Completions are posted only when the worker enters the ring
 * (DEFER_TASKRUN), and TASKRUN_FLAG says in the shared ring when there are
 * some to post, so that a polling worker enters only then.
 */
static int setup_uring(struct io_uring *ring, bool *taskrun_flag)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER |
			 IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		.cq_entries = CQ_ENTRIES,
	};
	int ret;

	*taskrun_flag = true;
	ret = io_uring_queue_init_params(SQ_ENTRIES, ring, &p);
	if (ret == -EINVAL) {
		/* Kernels before 6.1 lack the single-issuer flags. */
		p.flags = IORING_SETUP_CQSIZE;
		*taskrun_flag = false;
		ret = io_uring_queue_init_params(SQ_ENTRIES, ring, &p);
	}
	if (ret == 0)
		/* Saves an fd lookup per submit; optional. */
		io_uring_register_ring_fd(ring);
	return ret;
}

xengnttab_handle *blk_grants_open(void)
{
	xengnttab_handle *xgt = xengnttab_open(NULL, 0);

	/*
	 * Old kernels limit the grants a handle maps, and an engine sharing
	 * it shares that limit; current ones limit only one call's.
	 */
	if (xgt)
		xengnttab_set_max_grants(xgt, MAX_GRANTS);
	return xgt;
}

void blk_grants_close(xengnttab_handle *xgt)
{
	if (xgt)
		xengnttab_close(xgt);
}

static int open_xen_handles(struct blk_engine *e, xengnttab_handle *shared)
{
	e->own_xgt = !shared;
	e->xgt = shared ? shared : blk_grants_open();
	if (!e->xgt)
		return -errno;
	return blk_evtchn_open(&e->evtchn, &e->uring);
}

int blk_engine_create(struct blk_engine **out, xengnttab_handle *xgt,
		      const struct blk_engine_ops *ops, void *arg)
{
	struct blk_engine *e = calloc(1, sizeof(*e));
	int ret;

	if (!e)
		return -ENOMEM;
	e->ops = ops;
	e->arg = arg;
	e->mem = (struct blk_memory_limits){
		.max_pgrants = BLK_DEFAULT_MAX_PGRANTS,
		.max_bounce_pages = BLK_DEFAULT_MAX_BOUNCE_PAGES,
	};
	ret = setup_uring(&e->uring, &e->taskrun_flag);
	if (ret < 0) {
		free(e);
		return ret;
	}
	blk_fixed_init(&e->fixed, &e->uring);
	ret = open_xen_handles(e, xgt);
	if (ret < 0) {
		blk_engine_destroy(e);
		return ret;
	}
	*out = e;
	return 0;
}

void blk_engine_destroy(struct blk_engine *e)
{
	if (!e)
		return;
	blk_fixed_destroy(&e->fixed);
	if (e->uring.ring_fd >= 0)
		io_uring_queue_exit(&e->uring);
	blk_evtchn_close(&e->evtchn);
	if (e->own_xgt)
		blk_grants_close(e->xgt);
	blk_copy_batch_free(&e->copies);
	free(e->by_port);
	free(e);
}

unsigned int blk_engine_nr_conns(const struct blk_engine *e)
{
	return e->nr_conns;
}

/* SQEs are queued until the next wait submits them in one call. */
struct io_uring_sqe *engine_get_sqe(struct blk_engine *e)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->uring);

	if (!sqe) {
		io_uring_submit(&e->uring);
		sqe = io_uring_get_sqe(&e->uring);
	}
	return sqe;
}

int blk_engine_watch_fd(struct blk_engine *e, int fd, uint64_t tag)
{
	struct io_uring_sqe *sqe = engine_get_sqe(e);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, (tag << 2) | TAG_FD);
	return 0;
}

/* Keep a read of the event channel queued (libblk/evtchn.h). */
static void arm_evtchn(struct blk_engine *e)
{
	/* The kernel takes no SQEs for now: retry after reaping. */
	if (blk_evtchn_arm(&e->evtchn, &e->uring, TAG_EVTCHN) < 0)
		e->come_back = true;
}

/* ---- the rings a pass looks at ---- */

static bool conn_needs_pass(const struct blk_conn *c)
{
	return c->kicked || c->event_off || c->must_push || conn_closing(c) ||
	       c->in_flight || c->parked.nr;
}

/*
 * Put @c at the end of the list of rings the passes look at. Called where
 * a ring gets something to do from outside its own requests: an event, a
 * connect, a close. Everything else that needs a pass (answers, parked
 * requests, polling) happens to a ring that is on the list already.
 */
void engine_activate(struct blk_engine *e, struct blk_conn *c)
{
	if (c->on_active)
		return;
	c->on_active = true;
	c->active_next = NULL;
	if (e->active_tail)
		e->active_tail->active_next = c;
	else
		e->active = c;
	e->active_tail = c;
}

/* Take @c off the list; @prev is the one before it, NULL if it is first. */
static void unlink_active(struct blk_engine *e, struct blk_conn *prev,
			  struct blk_conn *c)
{
	if (prev)
		prev->active_next = c->active_next;
	else
		e->active = c->active_next;
	if (e->active_tail == c)
		e->active_tail = prev;
	c->active_next = NULL;
	c->on_active = false;
}

void engine_deactivate(struct blk_engine *e, struct blk_conn *c)
{
	struct blk_conn *prev = NULL;

	if (!c->on_active)
		return;
	for (struct blk_conn *a = e->active; a != c; a = a->active_next)
		prev = a;
	unlink_active(e, prev, c);
}

/*
 * After a pass: rings with nothing left to do leave the list, and the first
 * goes to the end, so that no ring is always first to the buffers and the
 * submission queue.
 */
static void end_pass(struct blk_engine *e)
{
	struct blk_conn *prev = NULL, *c, *next;

	for (c = e->active; c; c = next) {
		next = c->active_next;
		if (conn_needs_pass(c))
			prev = c;
		else
			unlink_active(e, prev, c);
	}
	c = e->active;
	if (c && c != e->active_tail) {
		unlink_active(e, NULL, c);
		engine_activate(e, c);
	}
}

void blk_engine_resize(struct blk_engine *e, struct blk_conn *c,
		       uint64_t sectors)
{
	c->limits.sectors = sectors;
}

void blk_engine_set_timing(struct blk_engine *e, bool on)
{
	e->timing = on;
}

void blk_engine_set_precise_clock(struct blk_engine *e, bool precise)
{
	e->precise_clock = precise;
}

uint64_t engine_busy_clock(const struct blk_engine *e)
{
	return e->precise_clock || e->timing ? blk_now_ns()
					     : blk_coarse_now_ns();
}

void blk_engine_set_memory(struct blk_engine *e,
			   const struct blk_memory_limits *lim)
{
	e->mem = *lim;
}

void blk_engine_set_state_dir(struct blk_engine *e, const char *dir)
{
	e->state_dir = dir;
}

void blk_engine_set_poll(struct blk_engine *e, unsigned int max_us)
{
	blk_poll_init(&e->poll, max_us);
}

void blk_engine_conn_stats(const struct blk_conn *c, struct blk_stats *out)
{
	*out = c->stats;
	out->in_flight = c->in_flight;
	out->queued = conn_serving(c) ? blk_ring_waiting(&c->ring) : 0;
	out->mapped_grants = blk_pgrant_count(&c->pgrants);
	out->registered_grants = c->pgrants.nr_registered;
	out->grant_map_errors = c->pgrants.map_errors;
}

/* ---- responses ---- */

void engine_account_published(struct blk_engine *e, struct blk_conn *c,
			      uint64_t now)
{
	for (unsigned int op = 0; op < BLK_STAT_NR_OPS; op++) {
		uint64_t n = c->published_n[op];
		/* Exact modulo 2^64, however large the sums grew. */
		uint64_t busy = n * now - c->published_taken_sum[op];

		/* No request was in the daemon longer than the clock has run:
		 * a sum that says so would be a mistake, not a time. */
		if (n && busy / n <= now)
			c->stats.time_ns[op] += busy;
		c->published_n[op] = 0;
		c->published_taken_sum[op] = 0;
	}
	if (!c->answered_n)
		return;
	if (e->timing) {
		uint64_t n = c->answered_n;

		blk_stage_add(&c->stats.stage[BLK_STAGE_PUBLISH],
			      (n * now - c->answered_ns_sum) / n, n);
	}
	c->answered_n = 0;
	c->answered_ns_sum = 0;
}

/* Publish the answers written; one reading of the clock serves them all. */
static void push_responses(struct blk_engine *e)
{
	struct blk_conn *c, *next;
	uint64_t now = 0;

	for (c = e->active; c; c = next) {
		next = c->active_next;
		if (c->must_push) {
			c->must_push = false;
			if (io_publish(c))
				xenevtchn_notify(e->evtchn.xce, c->port);
			if (!now)
				now = engine_busy_clock(e);
			engine_account_published(e, c, now);
		}
		conn_try_finish_close(e, c);
	}
}

/* ---- backends ---- */

static uint64_t watch_data(const struct blk_backend *b, unsigned int which)
{
	return (uint64_t)(uintptr_t)b | (uint64_t)which << 2 | TAG_BACKEND;
}

int blk_backend_watch(struct blk_backend *b, int fd, unsigned int events,
		      unsigned int which)
{
	struct io_uring_sqe *sqe;

	if (which >= BLK_BACKEND_MAX_WATCH ||
	    ((uintptr_t)b & ~BACKEND_PTR_MASK))
		return -EINVAL;
	sqe = engine_get_sqe(b->e);
	if (!sqe)
		return -EBUSY;
	if (fd < 0)
		io_uring_prep_nop(sqe);
	else
		io_uring_prep_poll_add(sqe, fd, events);
	io_uring_sqe_set_data64(sqe, watch_data(b, which));
	b->armed++;
	return 0;
}

int blk_backend_unwatch(struct blk_backend *b, unsigned int which)
{
	struct io_uring_sqe *sqe = engine_get_sqe(b->e);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_remove(sqe, watch_data(b, which));
	io_uring_sqe_set_data64(sqe, watch_data(b, WATCH_CANCEL));
	return 0;
}

void blk_backend_complete(struct blk_engine *e, void *cookie, int res)
{
	io_complete(e, cookie, res);
}

static void backend_event(uint64_t data, int res)
{
	struct blk_backend *b = (void *)(uintptr_t)(data & BACKEND_PTR_MASK);
	unsigned int which = (unsigned int)(data >> 2) & 3u;

	if (which == WATCH_CANCEL)
		return;
	b->armed--;
	if (b->ops->event)
		b->ops->event(b, which, res);
}

/* ---- events ---- */

/* Mark every ring whose guest notified it, as one read of ports says. */
static int evtchn_event(struct blk_engine *e, uint64_t data, int res)
{
	int n = blk_evtchn_complete(&e->evtchn,
				    (enum blk_evtchn_sqe)(data >> 2), res);

	for (int i = 0; i < n; i++) {
		struct blk_conn *c = conn_by_port(e, e->evtchn.got[i]);

		if (c && conn_serving(c)) {
			c->kicked = true;
			engine_activate(e, c);
		}
	}
	return n < 0 ? n : 0;
}

/* Returns 0, or -errno when the event channel failed. */
static int reap_cqes(struct blk_engine *e)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;
	int err = 0;

	io_uring_for_each_cqe(&e->uring, head, cqe)
	{
		uint64_t data = io_uring_cqe_get_data64(cqe);

		seen++;
		switch (data & TAG_MASK) {
		case TAG_IO:
			io_complete(e, (struct blk_io *)(uintptr_t)data,
				    cqe->res);
			break;
		case TAG_EVTCHN:
			if (!err)
				err = evtchn_event(e, data, cqe->res);
			break;
		case TAG_FD:
			e->ops->fd_ready(e->arg, data >> 2);
			break;
		case TAG_BACKEND:
			backend_event(data, cqe->res);
			break;
		}
	}
	io_uring_cq_advance(&e->uring, seen);
	return err;
}

/* ---- per-disk I/O limits (libblk/throttle.h) ---- */

/*
 * May @c's next request start? When its disk's limit says not yet, the
 * request stays on the ring, the ring stays kicked, and the engine's sleep
 * ends no later than the wait (throttle_sleep_ns()).
 */
static bool throttle_admits(struct blk_engine *e, struct blk_conn *c)
{
	uint64_t now, wait;

	if (!blk_throttle_limited(c->throttle) ||
	    !blk_ring_has_requests(&c->ring))
		return true;
	now = blk_now_ns();
	wait = blk_throttle_admit(c->throttle, now);
	if (!wait)
		return true;
	if (!e->throttle_wake_ns || now + wait < e->throttle_wake_ns)
		e->throttle_wake_ns = now + wait;
	return false;
}

/*
 * The data a request moves, as far as its ring slot tells: an indirect
 * request's segments are read later, so each counts as a full page (what
 * Linux's blkfront sends). Its checks come later too: a malformed segment
 * counts nothing here.
 */
static uint64_t request_bytes(const struct blk_request *req,
			      uint32_t sector_size)
{
	unsigned int n = req->nr_segments;
	uint64_t bytes = 0;

	if (blk_request_op(req) == BLKIF_OP_DISCARD)
		return 0;
	if (req->operation == BLKIF_OP_INDIRECT)
		return (uint64_t)n * BLKIF_PAGE_SIZE;
	if (n > BLKIF_MAX_SEGMENTS_PER_REQUEST)
		n = BLKIF_MAX_SEGMENTS_PER_REQUEST;
	for (unsigned int i = 0; i < n; i++)
		if (req->seg[i].last_sect >= req->seg[i].first_sect)
			bytes += blk_segment_bytes(&req->seg[i], sector_size);
	return bytes;
}

static void throttle_charge(struct blk_conn *c, const struct blk_request *req)
{
	if (blk_throttle_limited(c->throttle))
		blk_throttle_charge(c->throttle,
				    request_bytes(req, c->limits.sector_size));
}

/* ---- new requests ---- */

/*
 * The ring ran dry. A polling worker leaves the guest's req_event where it
 * is, so the guest sends no event for its next requests; the worker sees
 * them by polling, and asks for an event only before it sleeps
 * (arm_ring_events()). Returns true when requests arrived meanwhile.
 */
static bool ring_ran_dry(struct blk_engine *e, struct blk_conn *c)
{
	if (blk_poll_window(&e->poll)) {
		c->event_off = true;
		return false;
	}
	return blk_ring_final_check(&c->ring);
}

/*
 * Take the requests the ring holds, as far as free slots and this pass's
 * budget allow.
 */
static void consume_ring(struct blk_engine *e, struct blk_conn *c)
{
	unsigned int taken = 0, segments = 0;

	for (;;) {
		struct blk_io *io;
		int ret;

		if (!c->free_ios)
			conn_grow_ios(c);
		io = c->free_ios;

		/*
		 * Out of slots, or a ring's worth taken while an early request
		 * holds back the answers after it, or the budget spent: stay
		 * kicked, and come back in a later pass. (Checked here, not
		 * left to blk_ring_next_request(), whose 0 must mean "ring
		 * empty" for the final check below.)
		 */
		if (!io || blk_ring_full(&c->ring))
			return;
		if (taken >= PASS_BUDGET_REQUESTS ||
		    segments >= PASS_BUDGET_SEGMENTS) {
			/* No completion need wake us for these. */
			e->come_back = true;
			return;
		}
		if (!throttle_admits(e, c))
			return;
		ret = blk_ring_next_request(&c->ring, &io->req);
		if (ret < 0) {
			conn_set_state(c, BLK_CONN_BROKEN);
			c->kicked = false;
			e->ops->conn_broken(e->arg, c->owner, ret);
			return;
		}
		if (ret == 0) {
			if (ring_ran_dry(e, c))
				continue;
			c->kicked = false;
			return;
		}
		c->free_ios = io->next;
		c->in_flight++;
		taken++;
		segments += io->req.nr_segments;
		io->slot = blk_ring_req_cons(&c->ring) - 1;
		throttle_charge(c, &io->req);
		io_consume(e, c, io);
	}
}

/*
 * A ring whose guest was not asked for events and has posted requests:
 * mark it kicked. True when it had.
 */
static bool notice_polled(struct blk_conn *c)
{
	if (!c->event_off || !blk_ring_has_requests(&c->ring))
		return false;
	c->event_off = false;
	c->kicked = true;
	return true;
}

static void serve_one(struct blk_engine *e, struct blk_conn *c)
{
	if (!conn_serving(c))
		return;
	/* A polled ring is looked at every pass, busy or not. */
	notice_polled(c);
	if (c->parked.nr)
		io_unpark(e, c);
	if (c->kicked)
		consume_ring(e, c);
}

/* The rings that may have work, in this pass's order (see end_pass()). */
static void serve_rings(struct blk_engine *e)
{
	for (struct blk_conn *c = e->active; c; c = c->active_next)
		serve_one(e, c);
	io_fetch_indirect_pages(e);
	io_prepare_ready(e);
	io_start_all(e);
}

/* ---- waiting for work ---- */

/* Rings that took requests without sending an event; marks them kicked. */
static bool rings_posted(struct blk_engine *e)
{
	bool found = false;

	for (struct blk_conn *c = e->active; c; c = c->active_next)
		if (conn_serving(c) && notice_polled(c))
			found = true;
	return found;
}

/*
 * Completions the kernel holds for us: without the flag, only entering
 * the ring can tell.
 */
static bool completions_waiting(const struct blk_engine *e)
{
	return !e->taskrun_flag ||
	       IO_URING_READ_ONCE(*e->uring.sq.kflags) & IORING_SQ_TASKRUN;
}

/*
 * Spin for the polling window, reaping completions and watching the rings
 * whose guests send no events. Returns true when work was found. The
 * ring is entered only when the kernel has completions to post.
 */
static bool poll_for_work(struct blk_engine *e)
{
	uint64_t window = blk_poll_window(&e->poll), start;

	if (!window)
		return false;
	io_uring_submit(&e->uring);
	start = blk_now_ns();
	do {
		if (!e->io_in_flight)
			sched_yield(); /* let guests and other workers run */
		else if (completions_waiting(e))
			/* Completions are posted only when the ring is entered.
			 */
			io_uring_get_events(&e->uring);
		if (io_uring_cq_ready(&e->uring) || rings_posted(e)) {
			blk_poll_hit(&e->poll);
			return true;
		}
	} while (blk_now_ns() - start < window);
	blk_poll_miss(&e->poll);
	return false;
}

/*
 * Before sleeping, ask every polled ring's guest for an event again.
 * Returns true when requests arrived meanwhile (no sleep then).
 */
static bool arm_ring_events(struct blk_engine *e)
{
	bool more = false;

	for (struct blk_conn *c = e->active; c; c = c->active_next) {
		if (!c->event_off)
			continue;
		c->event_off = false;
		if (conn_serving(c) && blk_ring_final_check(&c->ring)) {
			c->kicked = true;
			more = true;
		}
	}
	return more;
}

/*
 * A connection that has used no bounce page for this long gives its pool
 * back: idle guests cost the host no buffer memory.
 */
#define BOUNCE_IDLE_NS 1000000000ull
/* Every connection's memory is looked at this often, not at every sleep. */
#define TRIM_INTERVAL_NS (BOUNCE_IDLE_NS / 4)

static void trim_idle_bounce(struct blk_engine *e, uint64_t now)
{
	for (struct blk_conn *c = e->conns; c; c = c->next) {
		/* Stamped here, not per request. */
		if (c->bounce_used) {
			c->bounce_used = false;
			c->bounce_used_ns = now;
		} else if (c->bounce.nr_slabs && blk_bounce_idle(&c->bounce) &&
			   now - c->bounce_used_ns > BOUNCE_IDLE_NS) {
			blk_bounce_trim(&c->bounce);
		}
	}
}

/*
 * When some ring went without a mapping for lack of host budget since
 * the last look, this worker's rings holding more than an equal share
 * unmap idle grants down to it: the budget ends up divided among the
 * rings that use it, whoever mapped first.
 */
static void share_grant_budget(struct blk_engine *e)
{
	struct blk_budget *b = e->mem.grant_budget;
	unsigned long refusals;
	long share;

	if (!b)
		return;
	refusals = blk_budget_refusals(b);
	if (refusals == e->grant_refusals_seen)
		return;
	e->grant_refusals_seen = refusals;
	share = blk_budget_share(b);
	for (struct blk_conn *c = e->conns; c; c = c->next)
		if (c->pgrants.budget == b)
			blk_pgrant_shrink(&c->pgrants, (uint32_t)share);
}

static void trim_idle_memory(struct blk_engine *e, uint64_t now)
{
	if (now < e->next_trim_ns)
		return;
	e->next_trim_ns = now + TRIM_INTERVAL_NS;
	trim_idle_bounce(e, now);
	share_grant_budget(e);
}

/* While a ring waits for the host's budget, retry at this interval. */
#define STARVED_RETRY_NS 1000000ll

/*
 * How long a sleep may last for the rings held by their disks' limits:
 * until the earliest may go on, or -1 when none is held.
 */
static int64_t throttle_sleep_ns(struct blk_engine *e)
{
	uint64_t wake = e->throttle_wake_ns, now;

	if (!wake)
		return -1;
	e->throttle_wake_ns = 0;
	now = blk_now_ns();
	return wake > now ? (int64_t)(wake - now) : 0;
}

static int wait_cqe(struct blk_engine *e)
{
	int64_t timeout = throttle_sleep_ns(e);
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;

	if (e->starved && (timeout < 0 || timeout > STARVED_RETRY_NS))
		timeout = STARVED_RETRY_NS;
	e->starved = false;
	if (timeout < 0)
		return io_uring_submit_and_wait(&e->uring, 1);
	ts = (struct __kernel_timespec){ .tv_sec = timeout / 1000000000,
					 .tv_nsec = timeout % 1000000000 };
	return io_uring_submit_and_wait_timeout(&e->uring, &cqe, 1, &ts, NULL);
}

static int sleep_for_work(struct blk_engine *e)
{
	uint64_t start = 0;
	int ret;

	if (arm_ring_events(e))
		return 0;
	/* Only polling needs the sleep's length: the clock may cost a call. */
	if (e->poll.max_ns)
		start = blk_now_ns();
	trim_idle_memory(e, blk_coarse_now_ns());
	ret = wait_cqe(e);
	if (ret == -ETIME)
		ret = 0;
	if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		return ret;
	if (e->poll.max_ns)
		blk_poll_woke(&e->poll, blk_now_ns() - start);
	return 0;
}

/* ---- the pass ---- */

int blk_engine_run(struct blk_engine *e)
{
	int ret;

	arm_evtchn(e);
	if (e->come_back) {
		/* Requests were left behind: serve them without waiting. */
		e->come_back = false;
		io_uring_submit_and_get_events(&e->uring);
	} else if (!poll_for_work(e)) {
		ret = sleep_for_work(e);
		if (ret < 0)
			return ret;
	}
	/* The requests this pass takes, and the I/O it reaps, start here. */
	e->pass_ns = engine_busy_clock(e);
	ret = reap_cqes(e);
	if (ret < 0)
		return ret;
	io_finish_done(e);
	/* The guests waiting for these answers need not wait for the pass. */
	push_responses(e);
	serve_rings(e);
	/* Answers to requests refused on sight. */
	push_responses(e);
	end_pass(e);
	/* I/O that failed as it was submitted waits to be answered. */
	if (e->done.head)
		e->come_back = true;
	return 0;
}

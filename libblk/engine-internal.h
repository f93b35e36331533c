/* SPDX-License-Identifier: MIT */
/*
 * The engine's private structures, shared by engine.c (the pass loop),
 * conn.c (connections) and io.c (the life of one request).
 */
#ifndef LIBBLK_ENGINE_INTERNAL_H
#define LIBBLK_ENGINE_INTERNAL_H

#include <liburing.h>
#include <stdbool.h>
#include <sys/uio.h>
#include <xenevtchn.h>
#include <xengnttab.h>

#include "libblk/backend.h"
#include "libblk/bounce.h"
#include "libblk/engine.h"
#include "libblk/evtchn.h"
#include "libblk/fixed.h"
#include "libblk/grant_copy.h"
#include "libblk/journal.h"
#include "libblk/pgrant.h"
#include "libblk/poll.h"
#include "libblk/ring.h"
#include "libblk/stats.h"

/* A singly linked FIFO of requests. */
struct blk_io_list {
	struct blk_io *head, *tail;
	unsigned int nr;
};

/*
 * Where a request is in its life. It changes in one place, io_set_stage(),
 * which keeps the connection's count of started requests and its barrier
 * state in step:
 *
 *   FREE -> TAKEN      consume_ring(): copied off the ring and checked; it
 *                      waits on the engine's ready list or its connection's
 *                      parked list
 *   TAKEN -> STARTED   prepare_one(): its buffers are held and its I/O is
 *                      queued or under way (counted in nr_active)
 *   STARTED -> TAKEN   retry_bounced(): the host refused I/O on mapped
 *                      grants; it waits to run again by copy
 *   TAKEN|STARTED -> FREE  io_respond() (answered) or io_drop() (left on
 *                      the ring for the next daemon)
 */
enum blk_io_stage {
	BLK_IO_FREE,
	BLK_IO_TAKEN,
	BLK_IO_STARTED,
};

struct blk_io {
	struct blk_conn *conn;
	struct blk_io *next;
	RING_IDX slot; /* where on the ring the request was taken */
	struct blk_request req;
	struct blk_segment *segs; /* req.seg, or ind_segs */

	/* Grow-only per-request arrays, sized by the largest request seen. */
	struct blk_segment *ind_segs;
	struct blkif_request_segment *ind_raw; /* copies of indirect pages */
	void **pages; /* bounce page or mapped grant, per segment */
	struct iovec *iov; /* per segment */
	unsigned int cap_segs;
	unsigned int cap_ind; /* segments ind_raw can hold */
	/* Requests merged into this one's I/O, and their segments with its. */
	struct blk_io *rider;
	struct iovec *merge_iov;

	enum blk_io_stage stage; /* moved only by io_set_stage() (io.c) */
	bool bounced; /* its buffers are bounce pages, not mapped grants */
	bool timed; /* its stage times are being taken */
	/* The first error of its I/O (-errno), 0 while none. */
	int error;
	uint8_t cqes_left;
	uint64_t own_bytes; /* its data, merged or not */
	uint64_t expect; /* bytes the data SQEs must move */
	uint64_t moved;
	unsigned int copy_first; /* this pass's grant-copy segments */
	uint64_t stage_start_ns; /* when its current stage began */
	uint64_t taken_ns; /* the pass that took it off the ring woke then */
};

/* An answer waiting for the ones before it (see io_respond()). */
struct blk_answer {
	struct blk_journal_rec rsp; /* what goes on the ring */
	bool ready;
	uint64_t ready_ns; /* when it was answered, if timed; else 0 */
	uint64_t taken_ns; /* its request's taken_ns */
};

/*
 * Where a connection is in its life. It changes in one place,
 * conn_set_state() (conn.c), which checks each move against its table:
 *
 *   SERVING -> BROKEN    consume_ring(): the guest broke the ring protocol;
 *                        it takes no more requests, and its owner is told
 *                        (conn_broken()) so that it disconnects
 *   SERVING|BROKEN -> CLOSING  blk_engine_disconnect(): no new requests;
 *                        those under way finish, and are answered or left
 *                        for the next daemon as close_mode says
 *   CLOSING -> DETACHED  conn_try_finish_close(): all answered, and the
 *                        backend told to stop watching; the connection goes
 *                        (finish_close()) once no watch of it is armed
 */
enum blk_conn_state {
	BLK_CONN_SERVING,
	BLK_CONN_BROKEN,
	BLK_CONN_CLOSING,
	BLK_CONN_DETACHED,
};

struct blk_conn {
	struct blk_engine *e;
	struct blk_conn *next;
	/* On the engine's list of rings its passes look at (engine.c). */
	struct blk_conn *active_next;
	bool on_active; /* on that list: membership, not a stage of life */
	void *owner;

	struct blk_ring ring;
	void *sring;
	unsigned int nr_ring_pages;
	/* Paid nr_ring_pages for the mapping (budget.h); NULL: nothing. */
	struct blk_budget *ring_budget;
	uint32_t ring_ref; /* its first page's grant */
	uint32_t domid;
	evtchn_port_t port;
	struct blk_backend *backend; /* borrowed; see libblk/backend.h */
	struct blk_limits limits;
	struct blk_throttle *throttle; /* borrowed; NULL: unlimited */
	struct blk_dirty *dirty; /* borrowed; NULL: writes are not tracked */

	struct blk_io_chunk *chunks; /* the request slots, see conn_grow_ios()
				      */
	unsigned int nr_alloc; /* slots allocated so far */
	struct blk_answer *answers; /* by ring slot, nr_ios of them */
	struct blk_journal journal;
	unsigned int nr_ios; /* the ring's size: most slots ever needed */
	struct blk_io *free_ios;
	unsigned int in_flight; /* consumed and not yet answered */
	unsigned int nr_active; /* of those, started */
	struct blk_io_list parked; /* waiting for pages or a barrier */

	struct blk_bounce bounce;
	bool bounce_used; /* a bounce page was taken since the last look */
	uint64_t bounce_used_ns; /* the look after the last such pass */
	bool persistent;
	struct blk_pgrant_cache pgrants;

	struct blk_stats stats;
	/*
	 * Answers published since the last push and the sum of the times
	 * they were ready (see BLK_STAGE_PUBLISH): an answer held back by an
	 * earlier one counts from when it was ready, not when it went out.
	 */
	uint32_t answered_n;
	uint64_t answered_ns_sum;
	/*
	 * The same for the operations' busy time (struct blk_stats'
	 * time_ns): answers published since the last push, by operation,
	 * and the sum of the times their requests were taken.
	 */
	uint32_t published_n[BLK_STAT_NR_OPS];
	uint64_t published_taken_sum[BLK_STAT_NR_OPS];

	bool barrier_active; /* a barrier is executing: start nothing else */
	bool kicked; /* the ring may hold new requests */
	/*
	 * The guest was not asked for an event after the ring ran dry, since
	 * the worker polls it; ask (blk_ring_final_check()) before sleeping.
	 */
	bool event_off;
	bool must_push; /* responses to publish */
	enum blk_conn_state state; /* moved only by conn_set_state() */
	/* How blk_engine_disconnect() asked it to close, and when. */
	enum blk_disconnect_mode close_mode;
	uint64_t close_start_ns;
};

struct blk_engine {
	struct io_uring uring;
	/* The kernel flags completions waiting to be posted (setup_uring()). */
	bool taskrun_flag;
	xengnttab_handle *xgt;
	bool own_xgt; /* not shared with the process's other engines */
	struct blk_evtchn evtchn; /* its handle: evtchn.xce */
	struct blk_fixed fixed; /* registered buffers (bounce slabs, grants) */

	const struct blk_engine_ops *ops;
	void *arg;

	struct blk_memory_limits mem;
	const char *state_dir; /* where ring journals live; NULL: none */
	bool starved; /* a ring waits for the host's budget: wake up to retry */
	/* A ring waits for its disk's I/O limit: wake by then (0: none). */
	uint64_t throttle_wake_ns;
	bool timing; /* take stage times (blk_engine_set_timing()) */
	bool precise_clock; /* blk_engine_set_precise_clock() */
	uint64_t pass_ns; /* when this pass woke, on engine_busy_clock() */
	struct blk_poll poll;

	struct blk_conn *conns; /* all of them */
	unsigned int nr_conns;
	/*
	 * The connections a pass looks at: those kicked, polled, closing, or
	 * with requests in flight, parked or answered. An idle ring is not
	 * on it, so that a thousand idle guests cost the busy ones nothing.
	 * The first goes to the end after each pass (see end_pass()).
	 */
	struct blk_conn *active, *active_tail;
	/* Connections by their local event-channel port (set_port_owner()). */
	struct blk_conn **by_port;
	unsigned int nr_by_port;
	uint64_t next_trim_ns; /* when idle pools are looked at next */
	/* The grant budget's refusals at that look (share_grant_budget()). */
	unsigned long grant_refusals_seen;
	unsigned int io_in_flight; /* requests with SQEs in the kernel */
	/*
	 * Serve again without sleeping: a ring stopped on its pass budget, or
	 * checked requests wait for room in the submission queue.
	 */
	bool come_back;

	/* Per-pass scratch, reused. */
	struct blk_copy_batch copies;
	struct blk_io_list done; /* finished: copy out, then answer */
	struct blk_io_list ready; /* consumed, in ring order */
	struct blk_io_list starting; /* buffers held: submit after copy-in */
	struct blk_io_list unsubmitted; /* checked; the SQ had no room */
};

static inline void io_list_add(struct blk_io_list *l, struct blk_io *io)
{
	io->next = NULL;
	if (l->tail)
		l->tail->next = io;
	else
		l->head = io;
	l->tail = io;
	l->nr++;
}

static inline struct blk_io *io_list_take_all(struct blk_io_list *l)
{
	struct blk_io *head = l->head;

	*l = (struct blk_io_list){ 0 };
	return head;
}

/* io.c */
void io_consume(struct blk_engine *e, struct blk_conn *c, struct blk_io *io);
void io_fetch_indirect_pages(struct blk_engine *e);
void io_prepare_ready(struct blk_engine *e);
/* Give parked requests of @c another chance, oldest first. */
void io_unpark(struct blk_engine *e, struct blk_conn *c);
void io_start_all(struct blk_engine *e);
void io_complete(struct blk_engine *e, struct blk_io *io, int res);
void io_finish_done(struct blk_engine *e);
void io_respond(struct blk_io *io, int16_t status);
/* Write the answers ready in ring order and publish them; notify? */
bool io_publish(struct blk_conn *c);
/*
 * A request that will not run on a closing connection: answered with an
 * error when the guest is going away, left unanswered on the ring for the
 * next daemon when this one stops (blk_engine_disconnect()).
 */
void io_set_aside(struct blk_io *io);

static inline bool conn_serving(const struct blk_conn *c)
{
	return c->state == BLK_CONN_SERVING;
}

/* blk_engine_disconnect() came: closing, or closed and going. */
static inline bool conn_closing(const struct blk_conn *c)
{
	return c->state >= BLK_CONN_CLOSING;
}

/* conn.c */
void conn_set_state(struct blk_conn *c, enum blk_conn_state to);
/* The connection whose event channel is local @port, or NULL. */
struct blk_conn *conn_by_port(struct blk_engine *e, evtchn_port_t port);
/*
 * A closing connection goes once its requests are answered and its
 * backend watches nothing more (conn_closed() is called).
 */
void conn_try_finish_close(struct blk_engine *e, struct blk_conn *c);
int conn_create(struct blk_engine *e, const struct blk_conn_params *p,
		struct blk_conn **out);
/*
 * Unmap and free @c; with @kept, its ring and persistent grants stay
 * mapped and go to a handover there instead (*kept NULL: unmapped, for
 * want of memory).
 */
void conn_destroy(struct blk_conn *c, struct blk_handover **kept);
/* Make sure @io can hold @nr segments (and their indirect pages). */
int conn_io_reserve(struct blk_io *io, unsigned int nr, bool indirect);
/* More free request slots; -ENOBUFS when the ring's size is reached. */
int conn_grow_ios(struct blk_conn *c);

/* engine.c */
struct io_uring_sqe *engine_get_sqe(struct blk_engine *e);
/*
 * Put @c on the list of rings the passes look at (if it is not), or take
 * it off: called where a ring gets work from outside its own requests.
 */
void engine_activate(struct blk_engine *e, struct blk_conn *c);
void engine_deactivate(struct blk_engine *e, struct blk_conn *c);
/* The clock of the requests' busy time (see blk_engine_set_precise_clock). */
uint64_t engine_busy_clock(const struct blk_engine *e);
/*
 * The answers io_publish() wrote since @c's last push went out at @now:
 * add their operations' busy time, and BLK_STAGE_PUBLISH when timed.
 */
void engine_account_published(struct blk_engine *e, struct blk_conn *c,
			      uint64_t now);

#endif /* LIBBLK_ENGINE_INTERNAL_H */

// SPDX-License-Identifier: MIT
/*
 * The engine's pass loop (blk_engine_run() and what it calls), driven in
 * one thread against xensim's grant table and event channels through the
 * simulator's fake libxengnttab and libxenevtchn, with guests on the
 * shared test guest's ring (tools/xensim/guest-ring.h) over their own
 * simulated memory and a file image served by the real file backend. Each test
 * checks a promise of libblk/engine.h or of the pass in libblk/engine.c that
 * the shell tests see only as a whole:
 *
 *  - a ring with a deep queue takes a bounded share of a pass: another
 *    ring's request reaches the backend before the deep ring's last, and
 *    the deep ring is finished in later passes without a new event;
 *  - each pass starts one ring further down the list;
 *  - requests parked for bounce pages resume in ring order, none of the
 *    later ones overtaking them;
 *  - a ring whose indexes are impossible is reported broken, and the
 *    other rings of the pass are served as if nothing happened;
 *  - a disconnected ring closes only once its I/O under way is answered,
 *    and its parked requests are answered with an error (the guest goes)
 *    or left on the ring for the next daemon (the daemon stops);
 *  - answers are published with no further event from the guest (a pass
 *    that kept one back would sleep on it), and each ring is notified in
 *    the pass that publishes them, only when its guest asked (rsp_event);
 *  - busy-polling spins for at most the window it was given;
 *  - a ring moved between engines that share a grant handle keeps its
 *    mappings, and the other engine serves what was left on it;
 *  - a ring the guest did not grant is refused at connect, leaving
 *    nothing behind;
 *  - after a resize, new requests are checked against the new size;
 *  - a host failure of a merged I/O is reported once (host_error()) and
 *    answered to each request in it;
 *  - with persistent grants, a page the engine cannot map is copied: a
 *    write from a page granted read-only is served, a read into it is
 *    refused, and the refused mapping is counted.
 *  - a ring given a dirty map (a live move's) marks there the chunks of
 *    each write, write-barrier and discard, failed or not, by the time
 *    its answer is published, and nothing for a read or a flush.
 *
 * Every blk_engine_run() here has work waiting (an event, a completion
 * or a ring left on its budget): one without would sleep, and an alarm
 * turns a pass that never returns into a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "libblk/backend.h"
#include "libblk/dirty.h"
#include "libblk/engine.h"
#include "libblk/poll.h"
#include "tests/check.h"
#include "tools/xensim/guest-ring.h"
#include "tools/xensim/xensim.h"

#define IMAGE_BYTES (16u << 20)
#define SECTORS_PER_PAGE 8u
/* Requests sit this far apart on the image, so that none merge. */
#define REQUEST_STRIDE 128u
#define MAX_LOG 1024u
#define MAX_IDS 256u

static const char *dir;
static int image_fd;
static unsigned int pass; /* the blk_engine_run() call under way */

/*
 * What reached a backend, in order: whose, which sector, in which pass,
 * and whether its data was one range of a registered buffer.
 */
struct submission {
	const struct guest *g;
	uint64_t sector;
	unsigned int pass;
	bool fixed;
};

static struct submission sub_log[MAX_LOG];
static unsigned int nr_subs;

/* One simulated guest with one ring, and the engine's side of it. */
struct guest {
	uint32_t domid;
	struct xensim_domain *dom;
	struct guest_ring ring; /* x86_64, at frame 0, granted to dom0 */
	unsigned int order;
	uint32_t data_ref; /* one page, the buffer of every request */
	uint32_t ro_ref; /* another, granted read-only */

	struct blk_conn *conn;
	struct blk_backend *backend;
	struct blk_dirty *dirty; /* given at connect; NULL: none */
	int broken_err; /* from conn_broken(), 0 until then */
	bool closed; /* conn_closed() came */
	struct blk_stats final; /* and the counters it handed over */
	struct blk_handover *kept; /* and, after a move, the mappings */
	unsigned int host_errors; /* host_error() calls, and the last one's */
	uint8_t host_error_op;
	int host_error;

	/* Responses taken off the ring, in ring order. */
	uint64_t rsp_id[MAX_IDS];
	int16_t rsp_status[MAX_IDS];
	unsigned int nr_rsps;
};

/* ---- a backend that logs each I/O and hands it to the file backend ---- */

struct logging_backend {
	struct blk_backend base;
	struct blk_backend *file;
	const struct guest *g;
};

/* While not 0, every I/O fails with it at submission (a failing host). */
static int submit_error;

static int logging_submit(struct blk_backend *b,
			  const struct blk_backend_io *io, void *cookie)
{
	struct logging_backend *lb = (struct logging_backend *)b;

	REQUIRE(nr_subs < MAX_LOG);
	sub_log[nr_subs++] = (struct submission){ .g = lb->g,
						  .sector = io->offset / 512,
						  .pass = pass,
						  .fixed = io->fixed };
	if (submit_error)
		return submit_error;
	lb->file->e = b->e;
	return lb->file->ops->submit(lb->file, io, cookie);
}

static void logging_destroy(struct blk_backend *b)
{
	struct logging_backend *lb = (struct logging_backend *)b;

	blk_backend_destroy(lb->file);
	free(lb);
}

static const struct blk_backend_ops logging_ops = {
	.submit = logging_submit,
	.destroy = logging_destroy,
};

static struct blk_backend *logging_backend_new(const struct guest *g)
{
	struct logging_backend *lb = calloc(1, sizeof(*lb));

	REQUIRE(lb != NULL);
	*lb = (struct logging_backend){ .base.ops = &logging_ops, .g = g };
	REQUIRE_EQ(blk_backend_file_new(image_fd, &lb->file), 0);
	return &lb->base;
}

/* ---- the engine's callbacks ---- */

static uint64_t fd_ready_tag; /* the last fd_ready() */

static void on_fd_ready(void *arg, uint64_t tag)
{
	fd_ready_tag = tag;
}

static void on_conn_broken(void *arg, void *owner, int err)
{
	((struct guest *)owner)->broken_err = err;
}

static void on_conn_closed(void *arg, void *owner,
			   const struct blk_stats *final,
			   struct blk_handover *kept)
{
	struct guest *g = owner;

	g->kept = kept;
	g->closed = true;
	g->final = *final;
}

static void on_host_error(void *arg, void *owner, uint8_t op, int err)
{
	struct guest *g = owner;

	g->host_errors++;
	g->host_error_op = op;
	g->host_error = err;
}

static const struct blk_engine_ops ops = {
	.fd_ready = on_fd_ready,
	.conn_broken = on_conn_broken,
	.conn_closed = on_conn_closed,
	.host_error = on_host_error,
};

static void run_pass(struct blk_engine *e)
{
	pass++;
	REQUIRE_EQ(blk_engine_run(e), 0);
}

/* ---- guests ---- */

/* Did the engine send this guest an event since the last look? */
static bool took_event(struct guest *g)
{
	int port = xensim_evtchn_pending(g->dom);

	if (port < 0)
		return false;
	REQUIRE_EQ(port, g->ring.port);
	REQUIRE_EQ(xensim_evtchn_unmask(g->dom, (uint32_t)port), 0);
	return true;
}

/*
 * Connect @g's ring to @e, with its persistent grants or not, taking the
 * mappings @kept from another engine (NULL: none).
 */
static void guest_connect(struct blk_engine *e, struct guest *g,
			  bool persistent, struct blk_handover *kept)
{
	struct blk_conn_params p = {
		.domid = g->domid,
		.ring_order = g->order,
		.remote_port = (uint32_t)g->ring.port,
		.abi = BLKIF_ABI_X86_64,
		.backend = g->backend,
		.limits = { .sectors = IMAGE_BYTES / 512,
			    .sector_size = 512,
			    .discard = true,
			    .barrier = true },
		.persistent = persistent,
		.dirty = g->dirty,
		.owner = g,
		.handover = kept,
	};

	for (unsigned int i = 0; i < BLK_MAX_RING_PAGES; i++)
		p.ring_refs[i] = g->ring.grefs[i];
	g->closed = false;
	REQUIRE_EQ(blk_engine_connect(e, &p, &g->conn), 0);
	/* A connection starts with one event to its guest (conn.c). */
	CHECK(took_event(g));
}

/* Domain @domid with a ring of 2^@order pages, not yet connected. */
static void guest_make(struct guest *g, uint32_t domid, unsigned int order)
{
	unsigned int pages = 1u << order;
	int ref;

	*g = (struct guest){ .domid = domid, .order = order };
	REQUIRE_EQ(xensim_domain_create(dir, domid, pages + 2), 0);
	REQUIRE_EQ(xensim_domain_open(dir, domid, &g->dom), 0);
	REQUIRE_EQ(guest_ring_init(&g->ring, g->dom, 0, 0, order, true), 0);
	ref = xensim_grant_access(g->dom, 0, pages, false);
	REQUIRE(ref > 0);
	g->data_ref = (uint32_t)ref;
	ref = xensim_grant_access(g->dom, 0, pages + 1, true);
	REQUIRE(ref > 0);
	g->ro_ref = (uint32_t)ref;
	g->backend = logging_backend_new(g);
}

/* Domain @domid with a ring of 2^@order pages, connected to @e. */
static void guest_start(struct blk_engine *e, struct guest *g, uint32_t domid,
			unsigned int order)
{
	guest_make(g, domid, order);
	guest_connect(e, g, false, NULL);
}

static unsigned int ring_slots(const struct guest *g)
{
	return guest_ring_size(&g->ring);
}

/* Queue @op of @nr_segs pages at @sector, every segment on @gref. */
static void queue_rw(struct guest *g, uint8_t op, uint64_t id, uint64_t sector,
		     unsigned int nr_segs, uint32_t gref)
{
	struct frontend_request r = {
		.operation = op,
		.nr_segments = (uint8_t)nr_segs,
		.id = id,
		.sector_number = sector,
	};

	for (unsigned int i = 0; i < nr_segs; i++) {
		r.seg[i].gref = gref;
		r.seg[i].last_sect = SECTORS_PER_PAGE - 1;
	}
	guest_ring_put_rw(&g->ring, &r);
}

/* Queue a read of @nr_segs pages at @sector. */
static void queue_read_at(struct guest *g, uint64_t id, uint64_t sector,
			  unsigned int nr_segs)
{
	queue_rw(g, BLKIF_OP_READ, id, sector, nr_segs, g->data_ref);
}

/* Queue a read of @nr_segs pages at request @id's own place on the image. */
static void queue_read(struct guest *g, uint64_t id, unsigned int nr_segs)
{
	queue_read_at(g, id, id * REQUEST_STRIDE, nr_segs);
}

/* Publish the queued requests and send an event, asked for or not. */
static void push_and_notify(struct guest *g)
{
	guest_ring_push(&g->ring);
	REQUIRE_EQ(guest_ring_notify(&g->ring), 0);
}

/* Requests @first.. @first+@n-1, one page each, pushed and notified. */
static void queue_reads(struct guest *g, uint64_t first, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		queue_read(g, first + i, 1);
	push_and_notify(g);
}

/* The guest's view of how many responses the backend has published. */
static unsigned int published(const struct guest *g)
{
	return guest_ring_rsp_prod(&g->ring);
}

/*
 * Take every published response without asking for another event (as a
 * guest that is not done with its ring yet).
 */
static void take_responses(struct guest *g)
{
	struct frontend_response r;
	int ret;

	while ((ret = guest_ring_take(&g->ring, &r)) > 0) {
		REQUIRE(g->nr_rsps < MAX_IDS);
		g->rsp_id[g->nr_rsps] = r.id;
		g->rsp_status[g->nr_rsps++] = r.status;
	}
	REQUIRE_EQ(ret, 0);
}

/* Take the responses and ask for an event at the next one. */
static void take_responses_and_rearm(struct guest *g)
{
	take_responses(g);
	REQUIRE(!guest_ring_final_check(&g->ring));
}

/* Run passes until @g has @n responses published (at most 50 passes). */
static void run_until_published(struct blk_engine *e, struct guest *g,
				unsigned int n)
{
	for (unsigned int i = 0; i < 50 && published(g) < n; i++)
		run_pass(e);
	REQUIRE_EQ(published(g), n);
}

/* Every response taken so far is OKAY, for ids 0..n-1 in ring order. */
static void check_answers_in_order(const struct guest *g, unsigned int n)
{
	CHECK_EQ(g->nr_rsps, n);
	for (unsigned int i = 0; i < g->nr_rsps && i < n; i++) {
		CHECK_EQ(g->rsp_id[i], i);
		CHECK_EQ(g->rsp_status[i], BLKIF_RSP_OKAY);
	}
}

/* Run passes until the engine says @g's ring, disconnected, is closed. */
static void wait_closed(struct blk_engine *e, struct guest *g)
{
	for (unsigned int i = 0; i < 50 && !g->closed; i++)
		run_pass(e);
	REQUIRE(g->closed);
}

static void guest_disconnect(struct blk_engine *e, struct guest *g,
			     enum blk_disconnect_mode mode)
{
	blk_engine_disconnect(e, g->conn, mode);
	wait_closed(e, g);
}

static void guest_stop(struct blk_engine *e, struct guest *g)
{
	if (!g->closed)
		guest_disconnect(e, g, BLK_DISCONNECT_CLOSE);
	blk_backend_destroy(g->backend);
	xensim_domain_close(g->dom);
	REQUIRE_EQ(xensim_domain_destroy(dir, g->domid), 0);
}

/* Serve @g until its @n requests are answered, check them, and stop it. */
static void finish_guest(struct blk_engine *e, struct guest *g, unsigned int n)
{
	run_until_published(e, g, n);
	take_responses(g);
	check_answers_in_order(g, n);
	guest_stop(e, g);
}

/* Where @g's first and last submissions are in the log (-1: none). */
static void log_span(const struct guest *g, int *first, int *last)
{
	*first = *last = -1;
	for (unsigned int i = 0; i < nr_subs; i++) {
		if (sub_log[i].g != g)
			continue;
		if (*first < 0)
			*first = (int)i;
		*last = (int)i;
	}
}

static void clear_log(void)
{
	nr_subs = 0;
}

/* ---- the tests ---- */

/*
 * A deep queue (a 4-page ring, full) and a single request on another ring,
 * both notified before the pass: the single request reaches the backend
 * before the deep ring's last one, and the deep ring is finished in later
 * passes with no new event (the engine comes back by itself).
 */
static void test_deep_queue_shares_the_pass(struct blk_engine *e)
{
	struct guest deep, one;
	int deep_first, deep_last, one_first, unused;
	unsigned int depth;

	/* Connected first: first on the engine's list, served first. */
	guest_start(e, &deep, 12, 2);
	guest_start(e, &one, 11, 0);
	depth = ring_slots(&deep);
	REQUIRE(depth > 64);
	queue_reads(&deep, 0, depth);
	queue_reads(&one, 0, 1);
	clear_log();

	run_pass(e);
	log_span(&deep, &deep_first, &unused);
	log_span(&one, &one_first, &unused);
	REQUIRE(deep_first >= 0);
	CHECK(one_first >= 0); /* in the same pass */
	/* And not only in the same pass: ahead of the deep ring's last. */
	CHECK(deep_first < one_first);

	run_until_published(e, &deep, depth);
	log_span(&deep, &unused, &deep_last);
	CHECK(one_first < deep_last);
	CHECK(sub_log[deep_last].pass > sub_log[one_first].pass);
	finish_guest(e, &deep, depth);
	finish_guest(e, &one, 1);
}

/*
 * Two deep rings: the ring served first in one pass is not served first
 * in the next.
 */
static void test_passes_rotate(struct blk_engine *e)
{
	struct guest a, b;
	unsigned int depth, first_pass;
	const struct guest *leader[2];

	guest_start(e, &a, 21, 2);
	guest_start(e, &b, 22, 2);
	depth = ring_slots(&a);
	queue_reads(&a, 0, depth);
	queue_reads(&b, 0, depth);
	clear_log();

	run_pass(e);
	first_pass = pass;
	run_pass(e);
	REQUIRE(nr_subs > 0);
	leader[0] = sub_log[0].g;
	leader[1] = NULL;
	for (unsigned int i = 0; i < nr_subs; i++) {
		if (sub_log[i].pass == first_pass + 1) {
			leader[1] = sub_log[i].g;
			break;
		}
	}
	REQUIRE(leader[1] != NULL);
	CHECK(leader[0] != leader[1]);
	finish_guest(e, &a, depth);
	finish_guest(e, &b, depth);
}

/* A guest whose ring may hold 12 bounce pages: one 11-page read at a time. */
static void guest_start_small(struct blk_engine *e, struct guest *g,
			      uint32_t domid)
{
	struct blk_memory_limits small = { .max_pgrants = 16,
					   .max_bounce_pages = 12 };
	struct blk_memory_limits dflt = {
		.max_pgrants = BLK_DEFAULT_MAX_PGRANTS,
		.max_bounce_pages = BLK_DEFAULT_MAX_BOUNCE_PAGES
	};

	blk_engine_set_memory(e, &small);
	guest_start(e, g, domid, 0);
	blk_engine_set_memory(e, &dflt);
}

/*
 * With 12 bounce pages per ring: an 11-page read takes 11, the next
 * 11-page read must wait, and the 1-page read after it, which would fit,
 * waits behind it. All three reach the backend in ring order.
 */
static void test_parked_resume_in_order(struct blk_engine *e)
{
	struct blk_stats st;
	struct guest g;

	guest_start_small(e, &g, 31);
	queue_read(&g, 0, BLKIF_MAX_SEGMENTS_PER_REQUEST);
	queue_read(&g, 1, BLKIF_MAX_SEGMENTS_PER_REQUEST);
	queue_read(&g, 2, 1);
	push_and_notify(&g);
	clear_log();

	run_until_published(e, &g, 3);
	blk_engine_conn_stats(g.conn, &st);
	CHECK(st.parked_no_buffers >= 1); /* or this proves nothing */
	REQUIRE_EQ(nr_subs, 3);
	for (unsigned int i = 0; i < 3; i++)
		CHECK_EQ(sub_log[i].sector, i * REQUEST_STRIDE);
	CHECK(sub_log[1].pass > sub_log[0].pass); /* it did wait */
	finish_guest(e, &g, 3);
}

/*
 * Disconnecting a ring with one read under way and one parked for bounce
 * pages: conn_closed() comes only once the read under way is answered;
 * the parked one is answered with an error when the guest goes away
 * (CLOSE), and left on the ring unanswered, for the next daemon, when
 * this one stops (STOP).
 */
static void disconnect_with_parked(struct blk_engine *e, uint32_t domid,
				   enum blk_disconnect_mode mode)
{
	struct blk_stats st;
	struct guest g;

	guest_start_small(e, &g, domid);
	queue_read(&g, 0, BLKIF_MAX_SEGMENTS_PER_REQUEST);
	queue_read(&g, 1, BLKIF_MAX_SEGMENTS_PER_REQUEST);
	push_and_notify(&g);
	run_pass(e);
	blk_engine_conn_stats(g.conn, &st);
	REQUIRE_EQ(st.parked_no_buffers, 1);
	REQUIRE_EQ(published(&g), 0);

	blk_engine_disconnect(e, g.conn, mode);
	CHECK(!g.closed); /* the first read is still under way */
	wait_closed(e, &g);
	/* The last counters count the read answered after the disconnect. */
	CHECK(g.final.requests[BLK_STAT_READ] >= 1);
	CHECK_EQ(g.final.in_flight, 0);
	take_responses(&g);
	REQUIRE(g.nr_rsps >= 1);
	CHECK_EQ(g.rsp_id[0], 0);
	CHECK_EQ(g.rsp_status[0], BLKIF_RSP_OKAY);
	if (mode == BLK_DISCONNECT_CLOSE) {
		REQUIRE_EQ(g.nr_rsps, 2);
		CHECK_EQ(g.rsp_id[1], 1);
		CHECK_EQ(g.rsp_status[1], BLKIF_RSP_ERROR);
	} else {
		CHECK_EQ(g.nr_rsps, 1);
	}
	guest_stop(e, &g);
}

/*
 * A ring the guest did not grant is refused at connect with -EINVAL; the
 * engine keeps no connection and calls nothing back.
 */
static void test_connect_refuses_ungranted_ring(struct blk_engine *e)
{
	struct blk_conn_params p = {
		.domid = 71,
		.ring_refs = { 4000 },
		.abi = BLKIF_ABI_X86_64,
		.limits = { .sectors = IMAGE_BYTES / 512, .sector_size = 512 },
	};
	struct xensim_domain *dom;
	struct blk_conn *c = NULL;
	unsigned int before = blk_engine_nr_conns(e);
	struct guest owner = { 0 };

	REQUIRE_EQ(xensim_domain_create(dir, 71, 2), 0);
	REQUIRE_EQ(xensim_domain_open(dir, 71, &dom), 0);
	p.remote_port = (uint32_t)xensim_evtchn_alloc_unbound(dom, 0);
	p.backend = logging_backend_new(&owner);
	p.owner = &owner;
	CHECK_EQ(blk_engine_connect(e, &p, &c), -EINVAL);
	CHECK_EQ(blk_engine_nr_conns(e), before);
	CHECK(!owner.closed && !owner.broken_err);
	blk_backend_destroy(p.backend);
	xensim_domain_close(dom);
	REQUIRE_EQ(xensim_domain_destroy(dir, 71), 0);
}

/* @g's first two requests are answered: the first served, the second not. */
static void check_served_then_refused(struct blk_engine *e, struct guest *g)
{
	run_until_published(e, g, 2);
	take_responses(g);
	REQUIRE_EQ(g->nr_rsps, 2);
	CHECK_EQ(g->rsp_status[0], BLKIF_RSP_OKAY);
	CHECK_EQ(g->rsp_status[1], BLKIF_RSP_ERROR);
}

/*
 * After blk_engine_resize() the ring's requests are checked against the
 * new size: a read past the new end is refused, one inside it is served.
 */
static void test_resize_applies_to_new_requests(struct blk_engine *e)
{
	struct guest g;

	guest_start(e, &g, 72, 0);
	blk_engine_resize(e, g.conn, 1024);
	queue_read_at(&g, 0, 1024 - SECTORS_PER_PAGE, 1); /* the last page */
	queue_read_at(&g, 1, 1024, 1); /* just past the end */
	push_and_notify(&g);
	check_served_then_refused(e, &g);
	guest_stop(e, &g);
}

/*
 * Four reads that follow each other on the image go to the backend as one
 * I/O; when the host fails it, host_error() comes once, with the
 * operation and the error, and each of the four is answered with an error.
 */
static void test_host_error_once_per_io(struct blk_engine *e)
{
	struct guest g;

	guest_start(e, &g, 73, 0);
	for (unsigned int i = 0; i < 4; i++)
		queue_read_at(&g, i, i * SECTORS_PER_PAGE, 1);
	push_and_notify(&g);
	clear_log();
	submit_error = -EIO;
	run_until_published(e, &g, 4);
	submit_error = 0;
	CHECK_EQ(nr_subs, 1); /* merged: or this proves nothing */
	CHECK_EQ(g.host_errors, 1);
	CHECK_EQ(g.host_error_op, BLKIF_OP_READ);
	CHECK_EQ(g.host_error, -EIO);
	take_responses(&g);
	REQUIRE_EQ(g.nr_rsps, 4);
	for (unsigned int i = 0; i < 4; i++) {
		CHECK_EQ(g.rsp_id[i], i);
		CHECK_EQ(g.rsp_status[i], BLKIF_RSP_ERROR);
	}
	guest_stop(e, &g);
}

/*
 * Persistent grants are mapped writable (blkif.h), so a page the guest
 * granted read-only cannot be mapped; the engine copies instead, and the
 * copy decides: a write from the page is served, a read into it refused.
 */
static void test_unmappable_grant_is_copied(struct blk_engine *e)
{
	struct blk_stats st;
	struct guest g;

	guest_make(&g, 74, 0);
	guest_connect(e, &g, true, NULL);
	queue_rw(&g, BLKIF_OP_WRITE, 0, 0, 1, g.ro_ref);
	push_and_notify(&g);
	run_until_published(e, &g, 1);
	queue_rw(&g, BLKIF_OP_READ, 1, REQUEST_STRIDE, 1, g.ro_ref);
	push_and_notify(&g);
	check_served_then_refused(e, &g);
	blk_engine_conn_stats(g.conn, &st);
	CHECK_EQ(st.grant_map_errors, 1); /* paused after the first */
	CHECK_EQ(st.mapped_grants, 0);
	guest_stop(e, &g);
}

/* The chunks of @dm dirty now, taken, in order, into @out (at most @max). */
static unsigned int take_dirty(struct blk_dirty *dm, int64_t *out,
			       unsigned int max)
{
	unsigned int n = 0;
	int64_t c = 0;

	while (n < max && (c = blk_dirty_take(dm, (uint64_t)c)) >= 0)
		out[n++] = c++;
	return n;
}

/*
 * With a dirty map of 4 KiB chunks (a page each), a read of chunk 0, a
 * write of chunks 10-11, a discard of sectors that straddle chunks 20-21,
 * a write-barrier of chunk 30 and a flush: by the time the five answers
 * are published, the map holds exactly 10, 11, 20, 21 and 30. Then a
 * write the host fails still marks its chunk: it may have changed part
 * of it.
 */
static void test_writes_mark_dirty(struct blk_engine *e)
{
	const int64_t want[] = { 10, 11, 20, 21, 30 };
	struct blk_dirty *dm;
	int64_t got[8];
	unsigned int n;
	struct guest g;

	REQUIRE_EQ(blk_dirty_new(IMAGE_BYTES, 4096, &dm), 0);
	REQUIRE_EQ(blk_dirty_chunk(dm), 4096);
	guest_make(&g, 75, 0);
	g.dirty = dm;
	guest_connect(e, &g, false, NULL);
	queue_read_at(&g, 0, 0, 1);
	queue_rw(&g, BLKIF_OP_WRITE, 1, 10 * SECTORS_PER_PAGE, 2, g.data_ref);
	guest_ring_put_discard(&g.ring, 0, 2, 20 * SECTORS_PER_PAGE + 4,
			       SECTORS_PER_PAGE, 0);
	queue_rw(&g, BLKIF_OP_WRITE_BARRIER, 3, 30 * SECTORS_PER_PAGE, 1,
		 g.data_ref);
	queue_rw(&g, BLKIF_OP_FLUSH_DISKCACHE, 4, 0, 0, g.data_ref);
	push_and_notify(&g);
	run_until_published(e, &g, 5);
	take_responses(&g);
	check_answers_in_order(&g, 5);
	CHECK_EQ(blk_dirty_count(dm), 5);
	n = take_dirty(dm, got, 8);
	CHECK_EQ(n, 5);
	for (unsigned int i = 0; i < n && i < 5; i++)
		CHECK_EQ(got[i], want[i]);

	submit_error = -EIO;
	queue_rw(&g, BLKIF_OP_WRITE, 5, 40 * SECTORS_PER_PAGE, 1, g.data_ref);
	push_and_notify(&g);
	run_until_published(e, &g, 6);
	submit_error = 0;
	take_responses(&g);
	CHECK_EQ(g.rsp_status[5], BLKIF_RSP_ERROR);
	n = take_dirty(dm, got, 8);
	CHECK_EQ(n, 1);
	CHECK_EQ(got[0], 40);
	guest_stop(e, &g);
	blk_dirty_free(dm);
}

static void test_disconnect_sets_parked_aside(struct blk_engine *e)
{
	disconnect_with_parked(e, 61, BLK_DISCONNECT_CLOSE);
	disconnect_with_parked(e, 62, BLK_DISCONNECT_STOP);
}

/* How many of @g's grants the engines hold mapped. */
static uint32_t mapped_grants(const struct guest *g)
{
	struct xensim_domain_stats st;

	REQUIRE_EQ(xensim_domain_stats(dir, g->domid, &st), 0);
	return st.mapped_grants;
}

/*
 * Serve reads 0..3 of @g (persistent grants on) on @from, leave reads 4
 * and 5 queued, and move the ring off @from: it closes with the two
 * unanswered on the ring for whoever serves it next.
 */
static void serve_then_move(struct blk_engine *from, struct guest *g)
{
	queue_reads(g, 0, 4);
	run_until_published(from, g, 4);
	take_responses_and_rearm(g);
	/* The ring's page and the one data page, mapped once for all four. */
	REQUIRE_EQ(mapped_grants(g), 2);
	queue_reads(g, 4, 2);
	guest_disconnect(from, g, BLK_DISCONNECT_MOVE);
	CHECK_EQ(published(g), 4);
}

/*
 * Between two engines sharing a grant handle, BLK_DISCONNECT_MOVE keeps
 * the ring's and the persistent grants' mappings: nothing is unmapped at
 * the close, nothing mapped again at the connect on the other engine,
 * which serves the two requests left on the ring and the ones after.
 * Released instead, a kept ring unmaps all. On an engine with a handle of
 * its own, a move is a stop: everything is unmapped and nothing kept.
 */
static void test_move_keeps_mappings(struct blk_engine *own)
{
	xengnttab_handle *xgt = blk_grants_open();
	struct blk_engine *a, *b;
	struct guest g;

	REQUIRE(xgt != NULL);
	REQUIRE_EQ(blk_engine_create(&a, xgt, &ops, NULL), 0);
	REQUIRE_EQ(blk_engine_create(&b, xgt, &ops, NULL), 0);

	guest_make(&g, 81, 0);
	guest_connect(a, &g, true, NULL);
	serve_then_move(a, &g);
	REQUIRE(g.kept != NULL);
	CHECK_EQ(mapped_grants(&g), 2);
	CHECK_EQ(blk_engine_nr_conns(a), 0);

	guest_connect(b, &g, true, g.kept);
	CHECK_EQ(mapped_grants(&g), 2);
	run_until_published(b, &g, 6);
	queue_reads(&g, 6, 2);
	run_until_published(b, &g, 8);
	take_responses(&g);
	check_answers_in_order(&g, 8);
	CHECK_EQ(mapped_grants(&g), 2);
	guest_disconnect(b, &g, BLK_DISCONNECT_CLOSE);
	CHECK(g.kept == NULL);
	CHECK_EQ(mapped_grants(&g), 0);
	guest_stop(b, &g);

	guest_make(&g, 82, 0);
	guest_connect(a, &g, true, NULL);
	serve_then_move(a, &g);
	REQUIRE(g.kept != NULL);
	blk_handover_release(g.kept);
	CHECK_EQ(mapped_grants(&g), 0);
	guest_stop(a, &g);

	guest_make(&g, 83, 0);
	guest_connect(own, &g, true, NULL);
	serve_then_move(own, &g);
	CHECK(g.kept == NULL);
	CHECK_EQ(mapped_grants(&g), 0);
	guest_stop(own, &g);

	blk_engine_destroy(a);
	blk_engine_destroy(b);
	blk_grants_close(xgt);
}

/*
 * Ring pages are paid from the grant mapping budget: with 3 pages, one
 * 2-page ring fits and a second is refused (-EDQUOT), nothing mapped for
 * it. Moved to another engine, the ring brings its payment along (the
 * budget is not charged twice), and closed there, or its kept mappings
 * released, it pays back.
 */
static void test_ring_pages_paid(void)
{
	xengnttab_handle *xgt = blk_grants_open();
	struct blk_budget budget;
	struct blk_memory_limits mem = {
		.max_pgrants = BLK_DEFAULT_MAX_PGRANTS,
		.max_bounce_pages = BLK_DEFAULT_MAX_BOUNCE_PAGES,
		.grant_budget = &budget,
	};
	struct blk_conn_params p = { .ring_order = 1 };
	struct blk_engine *a, *b;
	struct blk_conn *conn = NULL;
	struct guest g, late;

	REQUIRE(xgt != NULL);
	blk_budget_init(&budget, 3);
	REQUIRE_EQ(blk_engine_create(&a, xgt, &ops, NULL), 0);
	REQUIRE_EQ(blk_engine_create(&b, xgt, &ops, NULL), 0);
	blk_engine_set_memory(a, &mem);
	blk_engine_set_memory(b, &mem);

	guest_make(&g, 91, 1);
	guest_connect(a, &g, false, NULL);
	CHECK_EQ(blk_budget_ring_pages(&budget), 2);
	guest_make(&late, 92, 1);
	p.domid = late.domid;
	p.remote_port = (uint32_t)late.ring.port;
	p.backend = late.backend;
	for (unsigned int i = 0; i < BLK_MAX_RING_PAGES; i++)
		p.ring_refs[i] = late.ring.grefs[i];
	CHECK_EQ(blk_engine_connect(a, &p, &conn), -EDQUOT);
	CHECK_EQ(mapped_grants(&late), 0);
	CHECK_EQ(blk_budget_ring_pages(&budget), 2);

	guest_disconnect(a, &g, BLK_DISCONNECT_MOVE);
	REQUIRE(g.kept != NULL);
	CHECK_EQ(blk_budget_ring_pages(&budget), 2);
	guest_connect(b, &g, false, g.kept);
	CHECK_EQ(blk_budget_ring_pages(&budget), 2);
	CHECK_EQ(mapped_grants(&g), 2);
	guest_disconnect(b, &g, BLK_DISCONNECT_CLOSE);
	CHECK_EQ(blk_budget_ring_pages(&budget), 0);
	CHECK_EQ(atomic_load(&budget.left), 3);

	guest_connect(a, &g, false, NULL);
	guest_disconnect(a, &g, BLK_DISCONNECT_MOVE);
	REQUIRE(g.kept != NULL);
	blk_handover_release(g.kept);
	CHECK_EQ(blk_budget_ring_pages(&budget), 0);
	CHECK_EQ(atomic_load(&budget.left), 3);
	guest_stop(a, &g);
	late.closed = true;
	guest_stop(a, &late);

	blk_engine_destroy(a);
	blk_engine_destroy(b);
	blk_grants_close(xgt);
}

/*
 * A guest publishes more requests than its ring holds: the engine calls
 * conn_broken() for it and serves the other ring in the same pass; the
 * broken ring is never answered, and once disconnected the other ring
 * goes on.
 */
static void test_broken_ring_alone_is_dropped(struct blk_engine *e)
{
	struct guest good, bad;
	unsigned int pass_broken;
	int first, last;

	guest_start(e, &good, 41, 0);
	guest_start(e, &bad, 42, 0); /* served first */
	guest_ring_set_req_prod(&bad.ring, ring_slots(&bad) + 5);
	REQUIRE_EQ(guest_ring_notify(&bad.ring), 0);
	queue_reads(&good, 0, 1);
	clear_log();

	run_pass(e);
	pass_broken = pass;
	CHECK_EQ(bad.broken_err, -EPROTO);
	log_span(&good, &first, &last);
	REQUIRE(first >= 0);
	CHECK_EQ(sub_log[first].pass, pass_broken);
	log_span(&bad, &first, &last);
	CHECK_EQ(first, -1);

	/* The owner disconnects it, as the daemon does. */
	guest_disconnect(e, &bad, BLK_DISCONNECT_CLOSE);
	queue_reads(&good, 1, 1);
	finish_guest(e, &good, 2);
	CHECK(bad.closed);
	CHECK_EQ(published(&bad), 0);
	guest_stop(e, &bad);
}

/*
 * The responses of a pass are published by its end, and each ring with
 * new responses is notified in that pass, once, and only if its guest
 * asked (rsp_event past its last look).
 */
/* Does this kernel give an io_uring a table of registered buffers? */
static bool kernel_registers_buffers(void)
{
	struct io_uring ring;
	bool ok;

	REQUIRE_EQ(io_uring_queue_init(2, &ring, 0), 0);
	ok = io_uring_register_buffers_sparse(&ring, 1) == 0;
	io_uring_queue_exit(&ring);
	return ok;
}

/*
 * Requests served by copy read into bounce pages registered with the
 * engine's ring: a one-page read and a four-page one (its pages one range)
 * each reach the backend as one registered range, and the guest gets the
 * image's data.
 */
static void test_bounced_reads_registered(struct blk_engine *e)
{
	uint8_t page[XENSIM_PAGE_SIZE];
	const uint8_t *data;
	struct guest g;
	int first, last;

	for (unsigned int i = 0; i < 5; i++) {
		memset(page, 0x40 + (int)i, sizeof(page));
		REQUIRE_EQ(pwrite(image_fd, page, sizeof(page),
				  (off_t)(1000 + i) * XENSIM_PAGE_SIZE),
			   (ssize_t)sizeof(page));
	}
	guest_start(e, &g, 92, 0);
	data = xensim_domain_page(g.dom, 1);
	clear_log();
	queue_read_at(&g, 0, 1000 * SECTORS_PER_PAGE, 1);
	push_and_notify(&g);
	run_until_published(e, &g, 1);
	CHECK_EQ(data[100], 0x40);
	queue_read_at(&g, 1, 1001 * SECTORS_PER_PAGE, 4);
	push_and_notify(&g);
	run_until_published(e, &g, 2);
	/* Each segment lands on the one data page: the last one's stays. */
	CHECK_EQ(data[100], 0x44);
	log_span(&g, &first, &last);
	REQUIRE_EQ(last - first, 1);
	if (kernel_registers_buffers()) {
		CHECK(sub_log[first].fixed);
		CHECK(sub_log[last].fixed);
	} else {
		printf("no registered buffers on this kernel: not checked\n");
	}
	finish_guest(e, &g, 2);
}

/*
 * Does the kernel pin the simulated guest's memory? Only where it is not a
 * file on disk: Linux refuses long-term pins of shared file pages, and a
 * persistent grant's mapping is then served unregistered.
 */
static bool guest_memory_pinnable(void)
{
	struct statfs fs;

	REQUIRE_EQ(statfs(dir, &fs), 0);
	return fs.f_type == TMPFS_MAGIC && kernel_registers_buffers();
}

/*
 * A one-page read on a persistent grant reaches the backend as the
 * grant's registered buffer where the kernel pins guest memory, and as a
 * plain iovec where it does not; the guest gets the data either way.
 */
static void test_persistent_read_registered(struct blk_engine *e)
{
	uint8_t page[XENSIM_PAGE_SIZE];
	struct guest g;
	int first, last;

	memset(page, 0x5a, sizeof(page));
	REQUIRE_EQ(pwrite(image_fd, page, sizeof(page),
			  (off_t)1010 * XENSIM_PAGE_SIZE),
		   (ssize_t)sizeof(page));
	guest_make(&g, 93, 0);
	guest_connect(e, &g, true, NULL);
	clear_log();
	queue_read_at(&g, 0, 1010 * SECTORS_PER_PAGE, 1);
	push_and_notify(&g);
	run_until_published(e, &g, 1);
	CHECK_EQ(((const uint8_t *)xensim_domain_page(g.dom, 1))[9], 0x5a);
	CHECK_EQ(mapped_grants(&g), 2);
	log_span(&g, &first, &last);
	REQUIRE(first >= 0);
	CHECK_EQ(sub_log[first].fixed, guest_memory_pinnable());
	finish_guest(e, &g, 1);
}

static void test_notified_once_when_asked(struct blk_engine *e)
{
	struct guest a, b;

	guest_start(e, &a, 51, 0);
	guest_start(e, &b, 52, 0);
	queue_reads(&a, 0, 8);
	queue_reads(&b, 0, 8);
	run_pass(e); /* consumed and submitted; nothing answered yet */
	CHECK_EQ(published(&a), 0);
	CHECK(!took_event(&a));
	CHECK(!took_event(&b));

	/* Both guests asked for an event at their first response. */
	run_until_published(e, &a, 8);
	run_until_published(e, &b, 8);
	CHECK(took_event(&a));
	CHECK(took_event(&b));

	/* a looks without asking again, b asks: only b hears of the next. */
	take_responses(&a);
	take_responses_and_rearm(&b);
	queue_reads(&a, 8, 8);
	queue_reads(&b, 8, 8);
	run_until_published(e, &a, 16);
	run_until_published(e, &b, 16);
	CHECK(!took_event(&a));
	CHECK(took_event(&b));
	finish_guest(e, &a, 16);
	finish_guest(e, &b, 16);
}

/* The CPU this thread has used, in nanoseconds. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * With polling on and nothing to do, a pass spins for at most its window
 * and then sleeps: a watched timer firing 300 ms later ends the pass,
 * which has used the CPU for a few milliseconds, not for 300.
 */
static void test_poll_window_bounded(struct blk_engine *e)
{
	struct itimerspec in_300ms = { .it_value.tv_nsec = 300000000 };
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	uint64_t cpu, wall;

	REQUIRE(tfd >= 0);
	blk_engine_set_poll(e, 5000); /* 5 ms */
	REQUIRE_EQ(blk_engine_watch_fd(e, tfd, 77), 0);
	REQUIRE_EQ(timerfd_settime(tfd, 0, &in_300ms, NULL), 0);
	fd_ready_tag = 0;
	cpu = thread_cpu_ns();
	wall = blk_now_ns();
	run_pass(e);
	cpu = thread_cpu_ns() - cpu;
	wall = blk_now_ns() - wall;
	CHECK_EQ(fd_ready_tag, 77);
	CHECK(wall >= 250000000u);
	/* 5 ms of spinning, and room for a slow host's system calls. */
	if (cpu >= 60000000u)
		fprintf(stderr, "the pass spun for %llu ms of CPU\n",
			(unsigned long long)(cpu / 1000000));
	CHECK(cpu < 60000000u);
	blk_engine_set_poll(e, 0);
	close(tfd);
}

/*
 * The pass is asleep in io_uring_enter(), holding no lock: exit()'s
 * handlers (which remove the scratch directory) may run from here.
 */
static void on_alarm(int sig)
{
	static const char msg[] = "test-engine: FAIL: a pass never returned "
				  "(it slept with work left undone)\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		exit(2);
	exit(1);
}

static int make_image(void)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/image", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(fd >= 0);
	REQUIRE_EQ(ftruncate(fd, IMAGE_BYTES), 0);
	return fd;
}

int main(void)
{
	struct blk_engine *e;
	int ret;

	/* A pass that never returns fails the test (it takes 0.3 s). */
	signal(SIGALRM, on_alarm);
	alarm(30);
	dir = check_make_dir("test-engine");
	setenv("XENSIM_DIR", dir, 1);
	unsetenv("XENSIM_DOMID");
	REQUIRE_EQ(xensim_host_init(dir), 0);
	image_fd = make_image();

	ret = blk_engine_create(&e, NULL, &ops, NULL);
	if (ret == -ENOSYS || ret == -EPERM) {
		printf("test-engine: no io_uring here (%s): skipped\n",
		       strerror(-ret));
		return 77;
	}
	REQUIRE_EQ(ret, 0);

	test_deep_queue_shares_the_pass(e);
	test_passes_rotate(e);
	test_parked_resume_in_order(e);
	test_broken_ring_alone_is_dropped(e);
	test_disconnect_sets_parked_aside(e);
	test_move_keeps_mappings(e);
	test_ring_pages_paid();
	test_connect_refuses_ungranted_ring(e);
	test_resize_applies_to_new_requests(e);
	test_host_error_once_per_io(e);
	test_unmappable_grant_is_copied(e);
	test_writes_mark_dirty(e);
	test_notified_once_when_asked(e);
	test_bounced_reads_registered(e);
	test_persistent_read_registered(e);
	test_poll_window_bounded(e);

	CHECK_EQ(blk_engine_nr_conns(e), 0);
	blk_engine_destroy(e);
	close(image_fd);
	return check_done("test-engine");
}

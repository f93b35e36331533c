// SPDX-License-Identifier: MIT
/*
 * Connections: one shared ring, its event channel, and the per-request
 * state that serves it.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libblk/engine-internal.h"

/*
 * Bounce memory a connection may hold: a full ring of 11-segment requests,
 * or four of the largest indirect requests, whichever is more, within the
 * engine's per-ring cap.
 */
static unsigned int bounce_cap(const struct blk_conn *c)
{
	unsigned int direct = c->nr_ios * BLKIF_MAX_SEGMENTS_PER_REQUEST;
	unsigned int indirect = 4u * c->limits.max_indirect_segments;
	unsigned int cap = direct > indirect ? direct : indirect;
	unsigned int max = c->e->mem.max_bounce_pages;

	return cap < max ? cap : max;
}

/* blkif.h: the ideal cache holds RING_SIZE * 11 grants; capped. */
static unsigned int pgrant_cap(const struct blk_conn *c)
{
	unsigned int ideal = c->nr_ios * BLKIF_MAX_SEGMENTS_PER_REQUEST;
	unsigned int max = c->e->mem.max_pgrants;

	return ideal < max ? ideal : max;
}

int conn_io_reserve(struct blk_io *io, unsigned int nr, bool indirect)
{
	struct blk_segment *segs;
	struct iovec *iov;
	void **pages;

	if (indirect && nr > io->cap_ind) {
		struct blkif_request_segment *raw = reallocarray(
			io->ind_raw, blk_indirect_pages((uint16_t)nr),
			BLKIF_PAGE_SIZE);

		if (!raw)
			return -ENOMEM;
		io->ind_raw = raw;
		io->cap_ind = nr;
	}
	if (nr <= io->cap_segs)
		return 0;
	segs = reallocarray(io->ind_segs, nr, sizeof(*segs));
	if (segs)
		io->ind_segs = segs;
	iov = reallocarray(io->iov, nr, sizeof(*iov));
	if (iov)
		io->iov = iov;
	pages = reallocarray(io->pages, nr, sizeof(*pages));
	if (pages)
		io->pages = pages;
	if (!segs || !iov || !pages)
		return -ENOMEM;
	io->cap_segs = nr;
	return 0;
}

/*
 * Request slots are allocated as the guest's queue depth asks for them, a
 * chunk at a time, up to the ring's size: an idle guest with a large ring
 * costs little.
 */
#define IO_CHUNK 32u

struct blk_io_chunk {
	struct blk_io_chunk *next;
	struct blk_io ios[IO_CHUNK];
};

int conn_grow_ios(struct blk_conn *c)
{
	struct blk_io_chunk *chunk;

	if (c->nr_alloc >= c->nr_ios)
		return -ENOBUFS;
	chunk = calloc(1, sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	chunk->next = c->chunks;
	c->chunks = chunk;
	for (unsigned int i = 0; i < IO_CHUNK; i++) {
		struct blk_io *io = &chunk->ios[i];

		io->conn = c;
		if (conn_io_reserve(io, BLKIF_MAX_SEGMENTS_PER_REQUEST, false) <
		    0)
			return -ENOMEM;
		io->next = c->free_ios;
		c->free_ios = io;
	}
	c->nr_alloc += IO_CHUNK;
	return 0;
}

static int alloc_ios(struct blk_conn *c)
{
	c->nr_ios = blk_ring_size(&c->ring);
	c->answers = calloc(c->nr_ios, sizeof(*c->answers));
	if (!c->answers)
		return -ENOMEM;
	return conn_grow_ios(c);
}

static void free_ios(struct blk_conn *c)
{
	struct blk_io_chunk *chunk, *next;

	for (chunk = c->chunks; chunk; chunk = next) {
		next = chunk->next;
		for (unsigned int i = 0; i < IO_CHUNK; i++) {
			free(chunk->ios[i].ind_segs);
			free(chunk->ios[i].ind_raw);
			free(chunk->ios[i].iov);
			free(chunk->ios[i].pages);
			free(chunk->ios[i].merge_iov);
		}
		free(chunk);
	}
	free(c->answers);
}

/*
 * What a ring moving between engines keeps (BLK_DISCONNECT_MOVE): its
 * mappings, made through the grant handle the engines share, what they
 * were paid from, and what says which ring they are.
 */
struct blk_handover {
	xengnttab_handle *xgt;
	uint32_t domid;
	uint32_t ring_ref; /* its first page's grant */
	unsigned int nr_ring_pages;
	void *sring;
	struct blk_budget *ring_budget; /* as struct blk_conn's */
	bool has_pgrants;
	struct blk_pgrant_cache pgrants;
};

void blk_handover_release(struct blk_handover *h)
{
	if (!h)
		return;
	if (h->has_pgrants)
		blk_pgrant_destroy(&h->pgrants);
	xengnttab_unmap(h->xgt, h->sring, h->nr_ring_pages);
	if (h->ring_budget)
		blk_budget_give_ring(h->ring_budget, h->nr_ring_pages);
	free(h);
}

/* Is @h the ring @p describes, mapped through @e's handle? */
static bool handover_fits(const struct blk_handover *h,
			  const struct blk_engine *e,
			  const struct blk_conn_params *p)
{
	return h->xgt == e->xgt && h->domid == p->domid &&
	       h->ring_ref == p->ring_refs[0] &&
	       h->nr_ring_pages == 1u << p->ring_order;
}

/*
 * Take the ring's mapping from @h, when it is the same ring; otherwise
 * (a caller's mistake) unmap it and map the ring anew. False: map it.
 */
static bool take_handover(struct blk_engine *e, struct blk_conn *c,
			  const struct blk_conn_params *p)
{
	struct blk_handover *h = p->handover;

	if (!h)
		return false;
	if (!handover_fits(h, e, p)) {
		blk_handover_release(h);
		return false;
	}
	/* Paid for already: the payment comes along, not a second one. */
	c->sring = h->sring;
	c->ring_budget = h->ring_budget;
	if (h->has_pgrants && c->persistent) {
		c->pgrants = h->pgrants;
		blk_pgrant_set_fixed(&c->pgrants, &e->fixed);
	} else if (h->has_pgrants)
		blk_pgrant_destroy(&h->pgrants);
	free(h);
	return true;
}

/* Keep @c's mappings for the engine it moves to; NULL: no memory. */
static struct blk_handover *give_handover(struct blk_conn *c)
{
	struct blk_handover *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	*h = (struct blk_handover){
		.xgt = c->e->xgt,
		.domid = c->domid,
		.ring_ref = c->ring_ref,
		.nr_ring_pages = c->nr_ring_pages,
		.sring = c->sring,
		.ring_budget = c->ring_budget,
		.has_pgrants = c->pgrants.entries != NULL,
		.pgrants = c->pgrants,
	};
	/* Registered in this engine's ring, which it leaves. */
	blk_pgrant_set_fixed(&h->pgrants, NULL);
	c->sring = NULL;
	c->ring_budget = NULL;
	c->pgrants = (struct blk_pgrant_cache){ 0 };
	return h;
}

/*
 * The ring's pages are grant mappings like persistent grants' and draw
 * on the same budget; -EDQUOT when rings would take more than all of it
 * (what persistent grants would give back cannot help then).
 */
static int pay_for_ring(struct blk_engine *e, struct blk_conn *c)
{
	struct blk_budget *b = e->mem.grant_budget;

	if (!b)
		return 0;
	if (!blk_budget_take_ring(b, c->nr_ring_pages))
		return -EDQUOT;
	c->ring_budget = b;
	return 0;
}

static void unmap_ring(struct blk_engine *e, struct blk_conn *c)
{
	if (c->sring)
		xengnttab_unmap(e->xgt, c->sring, c->nr_ring_pages);
	c->sring = NULL;
	if (c->ring_budget)
		blk_budget_give_ring(c->ring_budget, c->nr_ring_pages);
	c->ring_budget = NULL;
}

static int map_ring(struct blk_engine *e, struct blk_conn *c,
		    const struct blk_conn_params *p)
{
	uint32_t refs[BLK_MAX_RING_PAGES];
	int ret;

	if (p->ring_order > BLK_MAX_RING_ORDER) {
		blk_handover_release(p->handover);
		return -EINVAL;
	}
	c->nr_ring_pages = 1u << p->ring_order;
	c->ring_ref = p->ring_refs[0];
	if (take_handover(e, c, p))
		return 0;
	ret = pay_for_ring(e, c);
	if (ret < 0)
		return ret;
	memcpy(refs, p->ring_refs, c->nr_ring_pages * sizeof(refs[0]));
	/* All pages at once, virtually contiguous, or nothing. */
	c->sring = xengnttab_map_domain_grant_refs(e->xgt, c->nr_ring_pages,
						   p->domid, refs,
						   PROT_READ | PROT_WRITE);
	if (!c->sring) {
		ret = errno ? -errno : -EINVAL;
		unmap_ring(e, c);
		return ret;
	}
	return 0;
}

static int bind_port(struct blk_engine *e, struct blk_conn *c,
		     const struct blk_conn_params *p)
{
	xenevtchn_port_or_error_t port;

	port = xenevtchn_bind_interdomain(e->evtchn.xce, p->domid,
					  p->remote_port);
	if (port < 0)
		return errno ? -errno : -EINVAL;
	c->port = (evtchn_port_t)port;
	return 0;
}

/*
 * An earlier daemon died between writing answers into the ring and
 * publishing them: publish them now (the slots hold them, or part of
 * them: write them all again), then resume after them. The guest's event
 * comes from conn_create().
 */
static void finish_unfinished_push(struct blk_conn *c,
				   const struct blk_conn_params *p)
{
	const struct blk_journal_rec *recs;
	RING_IDX first;
	unsigned int n = blk_journal_unfinished(&c->journal, &first, &recs);

	if (!n || first != blk_ring_rsp_prod(&c->ring))
		return;
	for (unsigned int i = 0; i < n; i++)
		blk_ring_put_response(&c->ring, recs[i].id, recs[i].operation,
				      recs[i].status);
	blk_ring_push_responses(&c->ring);
	blk_journal_done(&c->journal);
	blk_ring_attach(&c->ring, c->sring, p->abi,
			(size_t)c->nr_ring_pages * BLKIF_PAGE_SIZE);
}

int conn_create(struct blk_engine *e, const struct blk_conn_params *p,
		struct blk_conn **out)
{
	struct blk_conn *c = calloc(1, sizeof(*c));
	int ret;

	if (!c) {
		blk_handover_release(p->handover);
		return -ENOMEM;
	}
	c->e = e;
	c->owner = p->owner;
	c->domid = p->domid;
	c->backend = p->backend;
	c->backend->e = e;
	c->limits = p->limits;
	c->persistent = p->persistent;
	c->pgrants.free_head = -1;

	/* Takes p->handover, if any. */
	ret = map_ring(e, c, p);
	if (ret == 0)
		ret = bind_port(e, c, p);
	if (ret == 0) {
		blk_ring_attach(&c->ring, c->sring, p->abi,
				(size_t)c->nr_ring_pages * BLKIF_PAGE_SIZE);
		ret = alloc_ios(c);
	}
	if (ret == 0)
		ret = blk_journal_open(&c->journal, e->state_dir, c->domid,
				       p->ring_refs[0], p->remote_port,
				       c->nr_ios);
	if (ret == 0) {
		finish_unfinished_push(c, p);
		/*
		 * An earlier daemon may have died after publishing answers and
		 * before the event the guest asked for (rsp_event): the guest
		 * waits for it, and no later push sends one, since each sees
		 * rsp_event already passed. Nothing records whether it went
		 * out, so send it; to a frontend a spurious event is only a
		 * look at its ring.
		 */
		xenevtchn_notify(e->evtchn.xce, c->port);
	}
	if (ret == 0)
		ret = blk_bounce_init(&c->bounce, bounce_cap(c), e->mem.budget,
				      &e->fixed);
	/* Unless a handover brought the cache along. */
	if (ret == 0 && c->persistent && !c->pgrants.entries)
		ret = blk_pgrant_init(&c->pgrants, pgrant_cap(c),
				      e->mem.grant_budget, e->xgt, c->domid,
				      &e->fixed);
	if (ret < 0) {
		conn_destroy(c, NULL);
		return ret;
	}
	*out = c;
	return 0;
}

void conn_destroy(struct blk_conn *c, struct blk_handover **kept)
{
	struct blk_engine *e = c->e;

	if (kept && c->sring)
		*kept = give_handover(c);
	/* Even after a fall-back to copying: its old mappings are still held.
	 */
	blk_pgrant_destroy(&c->pgrants);
	blk_bounce_destroy(&c->bounce);
	/* Closed cleanly: nothing is left for a successor to finish. */
	blk_journal_close(&c->journal, 1);
	free_ios(c);
	if (c->port)
		xenevtchn_unbind(e->evtchn.xce, c->port);
	unmap_ring(e, c);
	free(c);
}

/* ---- lifecycle ---- */

/*
 * The moves conn_set_state() allows (see enum blk_conn_state): a row per
 * state, a bit per state it may go to.
 */
static const uint8_t conn_moves[] = {
	[BLK_CONN_SERVING] = 1u << BLK_CONN_BROKEN | 1u << BLK_CONN_CLOSING,
	[BLK_CONN_BROKEN] = 1u << BLK_CONN_CLOSING,
	[BLK_CONN_CLOSING] = 1u << BLK_CONN_DETACHED,
	[BLK_CONN_DETACHED] = 0,
};

void conn_set_state(struct blk_conn *c, enum blk_conn_state to)
{
	assert(conn_moves[c->state] & 1u << to);
	c->state = to;
}

/* Remember which connection owns @port (NULL: none now). */
static int set_port_owner(struct blk_engine *e, evtchn_port_t port,
			  struct blk_conn *c)
{
	if (port >= e->nr_by_port) {
		unsigned int n = e->nr_by_port ? e->nr_by_port : 64;
		struct blk_conn **grown;

		if (!c)
			return 0;
		while (n <= port)
			n *= 2;
		grown = realloc(e->by_port, n * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + e->nr_by_port, 0,
		       (n - e->nr_by_port) * sizeof(*grown));
		e->by_port = grown;
		e->nr_by_port = n;
	}
	e->by_port[port] = c;
	return 0;
}

struct blk_conn *conn_by_port(struct blk_engine *e, evtchn_port_t port)
{
	return port < e->nr_by_port ? e->by_port[port] : NULL;
}

/* ---- connecting and closing ---- */

int blk_engine_connect(struct blk_engine *e, const struct blk_conn_params *p,
		       struct blk_conn **out)
{
	struct blk_conn *c;
	int ret = conn_create(e, p, &c);

	if (ret < 0)
		return ret;
	ret = set_port_owner(e, c->port, c);
	if (ret < 0) {
		conn_destroy(c, NULL);
		return ret;
	}
	c->throttle = p->throttle;
	c->dirty = p->dirty;
	c->next = e->conns;
	e->conns = c;
	e->nr_conns++;
	/* Serve whatever the guest queued before we got here. */
	c->kicked = true;
	engine_activate(e, c);
	*out = c;
	return 0;
}

/* Another engine can take the mappings only through a shared handle. */
static bool keeps_mappings(const struct blk_engine *e, const struct blk_conn *c)
{
	return c->close_mode == BLK_DISCONNECT_MOVE && !e->own_xgt;
}

static void finish_close(struct blk_engine *e, struct blk_conn *c)
{
	void *owner = c->owner;
	struct blk_stats final;
	struct blk_handover *kept = NULL;
	uint64_t drained_ns = blk_now_ns();

	blk_engine_conn_stats(c, &final);
	if (c->close_start_ns)
		final.close.drain_ns = drained_ns - c->close_start_ns;

	engine_deactivate(e, c);
	if (conn_by_port(e, c->port) == c)
		set_port_owner(e, c->port, NULL);
	for (struct blk_conn **pp = &e->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	e->nr_conns--;
	conn_destroy(c, keeps_mappings(e, c) ? &kept : NULL);
	final.close.release_ns = blk_now_ns() - drained_ns;
	e->ops->conn_closed(e->arg, owner, &final, kept);
}

/*
 * A closing connection goes once its requests are answered and its
 * backend watches nothing more; the backend is told to stop watching the
 * first time its requests are all answered.
 */
void conn_try_finish_close(struct blk_engine *e, struct blk_conn *c)
{
	struct blk_backend *b = c->backend;

	if (!conn_closing(c) || c->in_flight)
		return;
	if (c->state == BLK_CONN_CLOSING) {
		conn_set_state(c, BLK_CONN_DETACHED);
		if (b->ops->detach)
			b->ops->detach(b);
	}
	if (!b->armed)
		finish_close(e, c);
}

/* Parked requests never started: answer them or leave them. */
static void set_aside_parked(struct blk_conn *c)
{
	struct blk_io *io = io_list_take_all(&c->parked);

	while (io) {
		struct blk_io *next = io->next;

		io_set_aside(io);
		io = next;
	}
}

void blk_engine_disconnect(struct blk_engine *e, struct blk_conn *c,
			   enum blk_disconnect_mode mode)
{
	if (!conn_closing(c)) {
		c->close_start_ns = blk_now_ns();
		conn_set_state(c, BLK_CONN_CLOSING);
	}
	c->close_mode = mode;
	c->kicked = false;
	engine_activate(e, c);
	set_aside_parked(c);
	if (c->must_push) {
		if (io_publish(c))
			xenevtchn_notify(e->evtchn.xce, c->port);
		engine_account_published(e, c, engine_busy_clock(e));
	}
	c->must_push = false;
	conn_try_finish_close(e, c);
}

// SPDX-License-Identifier: MIT
/*
 * The simulated blkfront's ring I/O (frontend-internal.h): request slots,
 * the grants each request needs, queueing, pushing, and matching each
 * response with its request. The guest trusts its backend more than the
 * backend trusts the guest, but this frontend still checks every
 * response (id outstanding, operation matching, as Linux blkfront has
 * since 5.14) because catching a backend that answers wrongly is what
 * the tests are for.
 */
#include "tools/xensim/frontend-internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/xenbus.h"
#include "tools/xensim/xensim.h"

#define ID_SLOT_BITS 16
#define ID_SLOT_MASK ((1ull << ID_SLOT_BITS) - 1)
#define GRANT_END_WAIT_MS 1000

uint32_t frontend_nr_data_pages(const struct frontend *fe)
{
	return fe->cfg.nr_data_pages;
}

void *frontend_data_page(struct frontend *fe, uint32_t page)
{
	if (page >= fe->cfg.nr_data_pages)
		return NULL;
	return xensim_domain_page(fe->dom, fe->data_pfn + page);
}

grant_ref_t frontend_data_gref(const struct frontend *fe, uint32_t page)
{
	return fe->data_grefs && page < fe->nr_data_granted
		       ? fe->data_grefs[page]
		       : 0;
}

unsigned int frontend_queue_free(const struct frontend *fe, unsigned int q)
{
	const struct fe_queue *fq = &fe->queue[q];
	unsigned int room = guest_ring_room(&fq->gr);
	unsigned int slots = fq->nr_slots - fq->nr_busy;

	return room < slots ? room : slots;
}

unsigned int frontend_queue_in_flight(const struct frontend *fe, unsigned int q)
{
	return fe->queue[q].nr_busy;
}

int fe_take_slot(struct fe_queue *fq, uint64_t raw_id, bool raw,
		 uint8_t expect_op, struct slot **out)
{
	for (unsigned int n = 0; n < fq->nr_slots; n++) {
		unsigned int i = (fq->free_hint + n) % fq->nr_slots;
		struct slot *s = &fq->slots[i];

		if (s->busy)
			continue;
		s->busy = true;
		s->expect_op = expect_op;
		s->nr_grefs = 0;
		s->id = raw ? raw_id
			    : (++fq->generation << ID_SLOT_BITS) | (uint64_t)i;
		fq->nr_busy++;
		fq->free_hint = i + 1;
		*out = s;
		return 0;
	}
	return -EBUSY;
}

static struct slot *find_slot(struct fe_queue *fq, uint64_t id)
{
	uint64_t i = id & ID_SLOT_MASK;

	if (i < fq->nr_slots && fq->slots[i].busy && fq->slots[i].id == id)
		return &fq->slots[i];
	for (unsigned int n = 0; n < fq->nr_slots; n++) {
		if (fq->slots[n].busy && fq->slots[n].id == id)
			return &fq->slots[n];
	}
	return NULL;
}

/* End a slot's per-request grants, waiting briefly while still in use. */
static int end_slot_grants(struct fe_queue *fq, struct slot *s)
{
	int64_t deadline = xenbus_now_ms() + GRANT_END_WAIT_MS;
	int first = 0;

	for (unsigned int i = 0; i < s->nr_grefs; i++) {
		int ret;

		while ((ret = xensim_grant_end(fq->dom, s->grefs[i])) ==
			       -EBUSY &&
		       xenbus_now_ms() < deadline)
			poll(NULL, 0, 1);
		if (ret < 0 && !first)
			first = ret;
	}
	s->nr_grefs = 0;
	return first;
}

void fe_release_slot(struct fe_queue *fq, struct slot *s)
{
	end_slot_grants(fq, s);
	s->busy = false;
	fq->nr_busy--;
}

static uint32_t sectors_per_page(const struct frontend *fe)
{
	return XENSIM_PAGE_SIZE / fe->disk.sector_size;
}

static int check_segments(const struct frontend *fe,
			  const struct frontend_segment *segs, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		if (segs[i].page >= fe->cfg.nr_data_pages ||
		    segs[i].first_sect > segs[i].last_sect ||
		    segs[i].last_sect >= sectors_per_page(fe))
			return -EINVAL;
	}
	return 0;
}

static bool writes_data(uint8_t op)
{
	return op != BLKIF_OP_READ;
}

/*
 * The grant of each segment's page: the persistent one, or a new grant
 * for this request only (read-only when the backend only reads it).
 */
static int segment_grefs(struct frontend *fe, struct fe_queue *fq,
			 struct slot *s, uint8_t op,
			 const struct frontend_segment *segs, unsigned int nr,
			 grant_ref_t *out)
{
	for (unsigned int i = 0; i < nr; i++) {
		int ret;

		if (fe->disk.persistent) {
			out[i] = fe->data_grefs[segs[i].page];
			continue;
		}
		ret = fe_grant_page(fe, fq->dom, fe->data_pfn + segs[i].page,
				    writes_data(op), &out[i]);
		if (ret < 0)
			return ret;
		s->grefs[s->nr_grefs++] = out[i];
	}
	return 0;
}

static int indirect_grefs(struct frontend *fe, struct fe_queue *fq,
			  struct slot *s, unsigned int npages, uint32_t first,
			  grant_ref_t *out)
{
	unsigned int base =
		(unsigned int)(s - fq->slots) * fe->ind_pages_per_req;

	for (unsigned int i = 0; i < npages; i++) {
		int ret;

		if (fe->disk.persistent) {
			out[i] = fq->ind_grefs[base + i];
			continue;
		}
		ret = fe_grant_page(fe, fq->dom, first + i, true, &out[i]);
		if (ret < 0)
			return ret;
		s->grefs[s->nr_grefs++] = out[i];
	}
	return 0;
}

static void write_segments(struct blkif_request_segment *pages[],
			   const struct frontend_segment *segs,
			   const grant_ref_t *grefs, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		struct blkif_request_segment *e =
			&pages[i / SEGS_PER_IND_PAGE][i % SEGS_PER_IND_PAGE];

		e->gref = grefs[i];
		e->first_sect = segs[i].first_sect;
		e->last_sect = segs[i].last_sect;
	}
}

static int queue_indirect(struct frontend *fe, struct fe_queue *fq,
			  struct slot *s, struct frontend_indirect_request *ir,
			  const struct frontend_segment *segs, unsigned int nr,
			  grant_ref_t *seg_grefs)
{
	unsigned int npages = (nr + SEGS_PER_IND_PAGE - 1) / SEGS_PER_IND_PAGE;
	unsigned int idx = (unsigned int)(s - fq->slots);
	uint32_t first = fq->ind_pfn + idx * fe->ind_pages_per_req;
	struct blkif_request_segment *pages[RAW_IND_PAGES];
	int ret;

	for (unsigned int i = 0; i < npages; i++)
		pages[i] = xensim_domain_page(fe->dom, first + i);
	write_segments(pages, segs, seg_grefs, nr);
	ret = indirect_grefs(fe, fq, s, npages, first, ir->indirect_grefs);
	if (ret < 0)
		return ret;
	guest_ring_put_indirect(&fq->gr, ir);
	return 0;
}

int frontend_queue_io(struct frontend *fe, unsigned int q, uint8_t op,
		      uint64_t sector, const struct frontend_segment *segs,
		      unsigned int nr, uint64_t *id)
{
	struct fe_queue *fq = &fe->queue[q];
	bool indirect = nr > BLKIF_MAX_SEGMENTS_PER_REQUEST;
	struct slot *s = NULL;
	grant_ref_t *grefs;
	int ret;

	if (check_segments(fe, segs, nr) < 0)
		return -EINVAL;
	if (indirect && (nr > fe->max_indirect ||
			 (op != BLKIF_OP_READ && op != BLKIF_OP_WRITE)))
		return -E2BIG;
	if (!frontend_queue_free(fe, q))
		return -EBUSY;
	grefs = malloc((nr + 1) * sizeof(*grefs));
	if (!grefs)
		return -ENOMEM;
	ret = fe_take_slot(fq, 0, false, op, &s);
	if (ret == 0)
		ret = segment_grefs(fe, fq, s, op, segs, nr, grefs);
	if (ret == 0 && indirect) {
		struct frontend_indirect_request ir = {
			.indirect_op = op,
			.nr_segments = (uint16_t)nr,
			.handle = (uint16_t)fe->cfg.devid,
			.id = s->id,
			.sector_number = sector,
		};

		ret = queue_indirect(fe, fq, s, &ir, segs, nr, grefs);
	} else if (ret == 0) {
		struct frontend_request req = { .operation = op,
						.nr_segments = (uint8_t)nr,
						.handle =
							(uint16_t)fe->cfg.devid,
						.id = s->id,
						.sector_number = sector };

		for (unsigned int i = 0; i < nr; i++) {
			req.seg[i].gref = grefs[i];
			req.seg[i].first_sect = segs[i].first_sect;
			req.seg[i].last_sect = segs[i].last_sect;
		}
		guest_ring_put_rw(&fq->gr, &req);
	}
	free(grefs);
	if (ret < 0) {
		if (s)
			fe_release_slot(fq, s);
		return ret;
	}
	if (id)
		*id = s->id;
	return 0;
}

int frontend_queue_discard(struct frontend *fe, unsigned int q, uint64_t sector,
			   uint64_t nr_sectors, uint8_t flags, uint64_t *id)
{
	struct fe_queue *fq = &fe->queue[q];
	struct slot *s;
	int ret;

	if (!frontend_queue_free(fe, q))
		return -EBUSY;
	ret = fe_take_slot(fq, 0, false, BLKIF_OP_DISCARD, &s);
	if (ret < 0)
		return ret;
	guest_ring_put_discard(&fq->gr, (uint16_t)fe->cfg.devid, s->id, sector,
			       nr_sectors, flags);
	if (id)
		*id = s->id;
	return 0;
}

int frontend_push_on(struct frontend *fe, unsigned int q)
{
	struct fe_queue *fq = &fe->queue[q];

	return guest_ring_push(&fq->gr) ? guest_ring_notify(&fq->gr) : 0;
}

/* Match a response with its request; -EPROTO for a stray or wrong one. */
static int retire_request(struct fe_queue *fq,
			  const struct frontend_response *rsp)
{
	struct slot *s = find_slot(fq, rsp->id);
	bool op_ok;
	int ret;

	if (!s)
		return -EPROTO;
	op_ok = s->expect_op == rsp->operation;
	ret = end_slot_grants(fq, s);
	s->busy = false;
	fq->nr_busy--;
	if (!op_ok)
		return -EPROTO;
	return ret < 0 ? -EIO : 0;
}

/*
 * Acknowledge every event the queue's domain has pending: one read takes
 * them all (fewer than asked for means there were no more), as an upcall
 * finds them all.
 */
static void ack_events(struct fe_queue *fq)
{
	uint32_t ports[64];
	int n;

	do {
		n = xensim_evtchn_read(fq->dom, ports, 64);
		for (int i = 0; i < n; i++)
			xensim_evtchn_unmask(fq->dom, ports[i]);
	} while (n == 64);
}

/* Wait for the queue's event channel and acknowledge it. */
static int wait_event(struct fe_queue *fq, int timeout_ms)
{
	struct pollfd pfd = { .fd = xensim_evtchn_fd(fq->dom),
			      .events = POLLIN };
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	ack_events(fq);
	return 0;
}

void frontend_take_events(struct frontend *fe)
{
	for (unsigned int q = 0; q < fe->nr_queues_open; q++)
		ack_events(&fe->queue[q]);
}

int frontend_wait_on(struct frontend *fe, unsigned int q,
		     struct frontend_response *rsp, int timeout_ms)
{
	struct fe_queue *fq = &fe->queue[q];
	int64_t deadline = xenbus_now_ms() + timeout_ms;
	bool ran_out = false;

	for (;;) {
		int ret = guest_ring_take(&fq->gr, rsp);
		int64_t left;

		if (ret > 0) {
			fq->unannounced += ran_out;
			ret = retire_request(fq, rsp);
			return ret < 0 ? ret : 1;
		}
		if (ret < 0)
			return ret;
		if (guest_ring_final_check(&fq->gr))
			continue;
		left = deadline - xenbus_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		ret = wait_event(fq, (int)left);
		if (ret == -ETIMEDOUT)
			ran_out = true;
		else if (ret < 0)
			return ret;
	}
}

uint64_t frontend_unannounced(const struct frontend *fe)
{
	uint64_t n = 0;

	for (unsigned int q = 0; q < FRONTEND_MAX_QUEUES; q++)
		n += fe->queue[q].unannounced;
	return n;
}

unsigned int frontend_free_slots(const struct frontend *fe)
{
	return frontend_queue_free(fe, 0);
}

unsigned int frontend_in_flight(const struct frontend *fe)
{
	return frontend_queue_in_flight(fe, 0);
}

int frontend_queue_rw(struct frontend *fe, uint8_t op, uint64_t sector,
		      const struct frontend_segment *segs, unsigned int nr,
		      uint64_t *id)
{
	return frontend_queue_io(fe, 0, op, sector, segs, nr, id);
}

int frontend_queue_flush(struct frontend *fe, uint64_t *id)
{
	return frontend_queue_io(fe, 0, BLKIF_OP_FLUSH_DISKCACHE, 0, NULL, 0,
				 id);
}

int frontend_push(struct frontend *fe)
{
	return frontend_push_on(fe, 0);
}

int frontend_wait(struct frontend *fe, struct frontend_response *rsp,
		  int timeout_ms)
{
	return frontend_wait_on(fe, 0, rsp, timeout_ms);
}

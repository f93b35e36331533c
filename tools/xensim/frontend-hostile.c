// SPDX-License-Identifier: MIT
/*
 * The simulated blkfront's hostile hooks (frontend.h, frontend-internal.h):
 * what a misbehaving guest does to its own ring, for the attack checks.
 * Requests go out exactly as given; the ring's indexes and a published
 * request can be rewritten behind the backend's back. The same thread
 * rules as the ring I/O: one thread per queue.
 */
#include "tools/xensim/frontend-internal.h"

#include <errno.h>
#include <string.h>

#include "tools/xensim/xensim.h"

/* A slot on queue @q for a raw request with @id, or -EBUSY. */
static int take_raw_slot(struct frontend *fe, unsigned int q, uint64_t id,
			 uint8_t expect_op)
{
	struct slot *s;

	if (!frontend_queue_free(fe, q))
		return -EBUSY;
	return fe_take_slot(&fe->queue[q], id, true, expect_op, &s);
}

int frontend_queue_raw_on(struct frontend *fe, unsigned int q,
			  const struct frontend_request *req)
{
	int ret = take_raw_slot(fe, q, req->id, req->operation);

	if (ret == 0)
		guest_ring_put_rw(&fe->queue[q].gr, req);
	return ret;
}

/* For an indirect request blkfront expects its indirect_op back. */
int frontend_queue_raw_indirect(struct frontend *fe, unsigned int q,
				const struct frontend_indirect_request *req)
{
	int ret = take_raw_slot(fe, q, req->id, req->indirect_op);

	if (ret == 0)
		guest_ring_put_indirect(&fe->queue[q].gr, req);
	return ret;
}

int frontend_queue_raw(struct frontend *fe, const struct frontend_request *req)
{
	return frontend_queue_raw_on(fe, 0, req);
}

int frontend_raw_indirect_pages(struct frontend *fe, unsigned int q,
				const struct blkif_request_segment *entries,
				unsigned int nr, grant_ref_t *grefs)
{
	struct fe_queue *fq = &fe->queue[q];
	uint32_t pfn = fq->ind_pfn + fq->nr_slots * fe->ind_pages_per_req;

	if (nr > BLKIF_MAX_INDIRECT_SEGMENTS)
		return -EINVAL;
	for (unsigned int i = 0; i < RAW_IND_PAGES; i++) {
		struct blkif_request_segment *page =
			xensim_domain_page(fe->dom, pfn + i);
		unsigned int from = i * SEGS_PER_IND_PAGE;

		memset(page, 0, XENSIM_PAGE_SIZE);
		for (unsigned int k = 0; from + k < nr && k < SEGS_PER_IND_PAGE;
		     k++)
			page[k] = entries[from + k];
		grefs[i] = fq->raw_grefs[i];
	}
	return 0;
}

struct xensim_domain *frontend_domain(struct frontend *fe)
{
	return fe->dom;
}

uint32_t frontend_data_pfn(const struct frontend *fe, uint32_t page)
{
	return fe->data_pfn + page;
}

uint32_t frontend_req_prod_pvt(const struct frontend *fe, unsigned int q)
{
	return guest_ring_req_prod_pvt(&fe->queue[q].gr);
}

int frontend_notify(struct frontend *fe, unsigned int q)
{
	return guest_ring_notify(&fe->queue[q].gr);
}

int frontend_set_req_prod(struct frontend *fe, unsigned int q, uint32_t value)
{
	guest_ring_set_req_prod(&fe->queue[q].gr, value);
	return frontend_notify(fe, q);
}

void frontend_rewrite_last(struct frontend *fe, unsigned int q,
			   const struct frontend_request *req)
{
	guest_ring_rewrite_last(&fe->queue[q].gr, req);
}

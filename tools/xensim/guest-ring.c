// SPDX-License-Identifier: MIT
/*
 * The shared test guest's ring (guest-ring.h). Both ABIs name the same
 * fields, so each operation is one macro body applied to the x86_64 or
 * the x86_32 ring.
 */
#include "tools/xensim/guest-ring.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "tools/xensim/xensim.h"

int64_t guest_ring_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int guest_grant_end(struct xensim_domain *dom, grant_ref_t ref,
		    int64_t deadline_ms)
{
	int ret;

	if (!ref)
		return 0;
	while ((ret = xensim_grant_end(dom, ref)) == -EBUSY &&
	       guest_ring_now_ms() < deadline_ms)
		poll(NULL, 0, 10);
	return ret;
}

int guest_ring_init(struct guest_ring *gr, struct xensim_domain *dom,
		    uint32_t backend_domid, uint32_t pfn, unsigned int order,
		    bool x86_64)
{
	size_t bytes = (size_t)XENSIM_PAGE_SIZE << order;
	void *page = xensim_domain_page(dom, pfn);
	int ret;

	*gr = (struct guest_ring){
		.dom = dom, .x86_64 = x86_64, .order = order, .port = -1
	};
	if (order > GUEST_RING_MAX_ORDER)
		return -EINVAL;
	if (!page)
		return -ENOMEM;
	memset(page, 0, bytes);
	if (x86_64) {
		SHARED_RING_INIT((struct blkif_x86_64_sring *)page);
		FRONT_RING_INIT(&gr->ring.r64,
				(struct blkif_x86_64_sring *)page, bytes);
	} else {
		SHARED_RING_INIT((struct blkif_x86_32_sring *)page);
		FRONT_RING_INIT(&gr->ring.r32,
				(struct blkif_x86_32_sring *)page, bytes);
	}
	for (unsigned int i = 0; i < (1u << order); i++) {
		ret = xensim_grant_access(dom, backend_domid, pfn + i, false);
		if (ret < 0)
			return ret;
		gr->grefs[i] = (grant_ref_t)ret;
	}
	ret = xensim_evtchn_alloc_unbound(dom, backend_domid);
	if (ret < 0)
		return ret;
	gr->port = ret;
	return 0;
}

int guest_ring_end_grants(struct guest_ring *gr, int64_t deadline_ms)
{
	int first = 0;

	for (unsigned int i = 0; i < GUEST_RING_MAX_PAGES; i++) {
		int ret = guest_grant_end(gr->dom, gr->grefs[i], deadline_ms);

		if (ret < 0 && !first)
			first = ret;
		gr->grefs[i] = 0;
	}
	return first;
}

void guest_ring_close_port(struct guest_ring *gr)
{
	if (gr->port > 0)
		xensim_evtchn_close(gr->dom, (uint32_t)gr->port);
	gr->port = -1;
}

unsigned int guest_ring_size(const struct guest_ring *gr)
{
	return 32u << gr->order;
}

/* The ABI's front ring of @gr, as @r, for one statement. */
#define WITH_RING(gr, r, stmt)                                           \
	do {                                                             \
		if ((gr)->x86_64) {                                      \
			__typeof__(&(gr)->ring.r64) r = &(gr)->ring.r64; \
			stmt;                                            \
		} else {                                                 \
			__typeof__(&(gr)->ring.r32) r = &(gr)->ring.r32; \
			stmt;                                            \
		}                                                        \
	} while (0)

unsigned int guest_ring_room(const struct guest_ring *gr)
{
	unsigned int used =
		guest_ring_req_prod_pvt(gr) -
		(gr->x86_64 ? gr->ring.r64.rsp_cons : gr->ring.r32.rsp_cons);
	unsigned int size = guest_ring_size(gr);

	return used >= size ? 0 : size - used;
}

uint32_t guest_ring_req_prod_pvt(const struct guest_ring *gr)
{
	return gr->x86_64 ? gr->ring.r64.req_prod_pvt
			  : gr->ring.r32.req_prod_pvt;
}

uint32_t guest_ring_rsp_prod(const struct guest_ring *gr)
{
	return gr->x86_64 ? gr->ring.r64.sring->rsp_prod
			  : gr->ring.r32.sring->rsp_prod;
}

/*
 * The sector and the segments are the fields no response overlaps (the
 * response's 12 or 16 bytes cover operation to id).
 */
#define FILL_SECTOR_AND_SEGMENTS(r, req)                                       \
	do {                                                                   \
		(r)->sector_number = (req)->sector_number;                     \
		for (unsigned int i_ = 0; i_ < BLKIF_MAX_SEGMENTS_PER_REQUEST; \
		     i_++) {                                                   \
			(r)->seg[i_].gref = (req)->seg[i_].gref;               \
			(r)->seg[i_].first_sect = (req)->seg[i_].first_sect;   \
			(r)->seg[i_].last_sect = (req)->seg[i_].last_sect;     \
		}                                                              \
	} while (0)

/* The request slot type (union blkif_x86_*_slot) of ring @r. */
#define SLOT_OF(r) __typeof__((r)->sring->ring[0].req)

/* The next request slot of ring @r, zeroed and taken, as @slot. */
#define NEXT_SLOT(r, slot)                                             \
	do {                                                           \
		slot = (void *)RING_GET_REQUEST(r, (r)->req_prod_pvt); \
		memset(slot, 0, sizeof(*slot));                        \
		(r)->req_prod_pvt++;                                   \
	} while (0)

#define PUT_RW(r, req)                                   \
	do {                                             \
		SLOT_OF(r) * s_;                         \
		NEXT_SLOT(r, s_);                        \
		s_->rw.operation = (req)->operation;     \
		s_->rw.nr_segments = (req)->nr_segments; \
		s_->rw.handle = (req)->handle;           \
		s_->rw.id = (req)->id;                   \
		FILL_SECTOR_AND_SEGMENTS(&s_->rw, req);  \
	} while (0)

void guest_ring_put_rw(struct guest_ring *gr,
		       const struct frontend_request *req)
{
	WITH_RING(gr, r, PUT_RW(r, req));
}

#define PUT_INDIRECT(r, req)                                               \
	do {                                                               \
		SLOT_OF(r) * s_;                                           \
		NEXT_SLOT(r, s_);                                          \
		s_->indirect.operation = BLKIF_OP_INDIRECT;                \
		s_->indirect.indirect_op = (req)->indirect_op;             \
		s_->indirect.nr_segments = (req)->nr_segments;             \
		s_->indirect.handle = (req)->handle;                       \
		s_->indirect.id = (req)->id;                               \
		s_->indirect.sector_number = (req)->sector_number;         \
		memcpy(s_->indirect.indirect_grefs, (req)->indirect_grefs, \
		       sizeof(s_->indirect.indirect_grefs));               \
	} while (0)

void guest_ring_put_indirect(struct guest_ring *gr,
			     const struct frontend_indirect_request *req)
{
	WITH_RING(gr, r, PUT_INDIRECT(r, req));
}

#define PUT_DISCARD(r)                                    \
	do {                                              \
		SLOT_OF(r) * s_;                          \
		NEXT_SLOT(r, s_);                         \
		s_->discard.operation = BLKIF_OP_DISCARD; \
		s_->discard.flag = flags;                 \
		s_->discard.handle = handle;              \
		s_->discard.id = id;                      \
		s_->discard.sector_number = sector;       \
		s_->discard.nr_sectors = nr_sectors;      \
	} while (0)

void guest_ring_put_discard(struct guest_ring *gr, uint16_t handle, uint64_t id,
			    uint64_t sector, uint64_t nr_sectors, uint8_t flags)
{
	WITH_RING(gr, r, PUT_DISCARD(r));
}

bool guest_ring_push(struct guest_ring *gr)
{
	int notify;

	WITH_RING(gr, r, RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(r, notify));
	return notify;
}

int guest_ring_notify(struct guest_ring *gr)
{
	return xensim_evtchn_notify(gr->dom, (uint32_t)gr->port);
}

#define TAKE(r, rsp, size, ret)                                             \
	do {                                                                \
		RING_IDX prod_ = (r)->sring->rsp_prod;                      \
		xen_rmb();                                                  \
		if (prod_ == (r)->rsp_cons) {                               \
			ret = 0;                                            \
		} else if (prod_ - (r)->rsp_cons > (size)) {                \
			ret = -EPROTO;                                      \
		} else {                                                    \
			__typeof__(RING_GET_RESPONSE(r, 0)) b_ =            \
				RING_GET_RESPONSE(r, (r)->rsp_cons);        \
			*(rsp) = (struct frontend_response){ b_->id,        \
							     b_->operation, \
							     b_->status };  \
			(r)->rsp_cons++;                                    \
			ret = 1;                                            \
		}                                                           \
	} while (0)

int guest_ring_take(struct guest_ring *gr, struct frontend_response *rsp)
{
	unsigned int size = guest_ring_size(gr);
	int ret;

	WITH_RING(gr, r, TAKE(r, rsp, size, ret));
	return ret;
}

bool guest_ring_final_check(struct guest_ring *gr)
{
	int more;

	WITH_RING(gr, r, RING_FINAL_CHECK_FOR_RESPONSES(r, more));
	return more;
}

void guest_ring_set_req_prod(struct guest_ring *gr, uint32_t value)
{
	xen_wmb();
	WITH_RING(gr, r, r->sring->req_prod = value);
}

#define REWRITE_LAST(r, req)                                                \
	do {                                                                \
		SLOT_OF(r) *s_ =                                            \
			(void *)RING_GET_REQUEST(r, (r)->req_prod_pvt - 1); \
		FILL_SECTOR_AND_SEGMENTS(&s_->rw, req);                     \
	} while (0)

void guest_ring_rewrite_last(struct guest_ring *gr,
			     const struct frontend_request *req)
{
	WITH_RING(gr, r, REWRITE_LAST(r, req));
}

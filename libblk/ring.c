// SPDX-License-Identifier: MIT
/*
 * Shared-ring consumption and response production for both ABIs.
 */
#include <errno.h>
#include <string.h>

#include "libblk/ring.h"

/* Reads a guest-owned index exactly once. */
#define READ_SHARED(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void blk_ring_attach(struct blk_ring *ring, void *sring, enum blkif_abi abi,
		     size_t bytes)
{
	memset(ring, 0, sizeof(*ring));
	ring->abi = abi;
	if (abi == BLKIF_ABI_X86_32) {
		blkif_x86_32_sring_t *s = sring;

		BACK_RING_ATTACH(&ring->r32, s, READ_SHARED(s->rsp_prod),
				 bytes);
		ring->req_prod = ring->r32.req_cons;
	} else {
		blkif_x86_64_sring_t *s = sring;

		BACK_RING_ATTACH(&ring->r64, s, READ_SHARED(s->rsp_prod),
				 bytes);
		ring->req_prod = ring->r64.req_cons;
	}
}

unsigned int blk_ring_size(const struct blk_ring *ring)
{
	return ring->abi == BLKIF_ABI_X86_32 ? RING_SIZE(&ring->r32)
					     : RING_SIZE(&ring->r64);
}

static void copy_segments(struct blk_request *req,
			  const struct blkif_request_segment *seg)
{
	for (unsigned int i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++) {
		req->seg[i].gref = seg[i].gref;
		req->seg[i].first_sect = seg[i].first_sect;
		req->seg[i].last_sect = seg[i].last_sect;
	}
}

/*
 * Both ABIs carry the same fields at different offsets; one macro keeps
 * the two conversions identical. @slot is already a private copy, and the
 * layout is chosen by its operation byte.
 */
#define CONVERT_SLOT(req, slot)                                            \
	do {                                                               \
		memset((req), 0, sizeof(*(req)));                          \
		(req)->operation = (slot)->rw.operation;                   \
		switch ((req)->operation) {                                \
		case BLKIF_OP_DISCARD:                                     \
			(req)->discard_flags = (slot)->discard.flag;       \
			(req)->handle = (slot)->discard.handle;            \
			(req)->id = (slot)->discard.id;                    \
			(req)->sector = (slot)->discard.sector_number;     \
			(req)->nr_sectors = (slot)->discard.nr_sectors;    \
			break;                                             \
		case BLKIF_OP_INDIRECT:                                    \
			(req)->indirect_op = (slot)->indirect.indirect_op; \
			(req)->nr_segments = (slot)->indirect.nr_segments; \
			(req)->handle = (slot)->indirect.handle;           \
			(req)->id = (slot)->indirect.id;                   \
			(req)->sector = (slot)->indirect.sector_number;    \
			memcpy((req)->indirect_grefs,                      \
			       (slot)->indirect.indirect_grefs,            \
			       sizeof((req)->indirect_grefs));             \
			break;                                             \
		default:                                                   \
			(req)->nr_segments = (slot)->rw.nr_segments;       \
			(req)->handle = (slot)->rw.handle;                 \
			(req)->id = (slot)->rw.id;                         \
			(req)->sector = (slot)->rw.sector_number;          \
			copy_segments((req), (slot)->rw.seg);              \
			break;                                             \
		}                                                          \
	} while (0)

static RING_IDX *req_cons(struct blk_ring *ring)
{
	return ring->abi == BLKIF_ABI_X86_32 ? &ring->r32.req_cons
					     : &ring->r64.req_cons;
}

static bool cons_overflow(struct blk_ring *ring, RING_IDX cons)
{
	return ring->abi == BLKIF_ABI_X86_32
		       ? RING_REQUEST_CONS_OVERFLOW(&ring->r32, cons)
		       : RING_REQUEST_CONS_OVERFLOW(&ring->r64, cons);
}

static RING_IDX read_req_prod(struct blk_ring *ring)
{
	RING_IDX prod = ring->abi == BLKIF_ABI_X86_32
				? READ_SHARED(ring->r32.sring->req_prod)
				: READ_SHARED(ring->r64.sring->req_prod);

	xen_rmb(); /* read requests only after reading the index */
	return prod;
}

int blk_ring_next_request(struct blk_ring *ring, struct blk_request *req)
{
	RING_IDX *cons = req_cons(ring);

	if (*cons == ring->req_prod) {
		RING_IDX prod = read_req_prod(ring);

		/* More than a ring's worth of new requests is a lie. */
		if (prod - *cons > blk_ring_size(ring))
			return -EPROTO;
		ring->req_prod = prod;
		if (*cons == prod)
			return 0;
	}
	if (cons_overflow(ring, *cons))
		return 0;

	if (ring->abi == BLKIF_ABI_X86_32) {
		union blkif_x86_32_slot slot;

		RING_COPY_REQUEST(&ring->r32, *cons, &slot);
		CONVERT_SLOT(req, &slot);
	} else {
		union blkif_x86_64_slot slot;

		RING_COPY_REQUEST(&ring->r64, *cons, &slot);
		CONVERT_SLOT(req, &slot);
	}
	(*cons)++;
	return 1;
}

/* The guest's req_prod, as it is now: anything, the guest writes it. */
static RING_IDX guest_req_prod(const struct blk_ring *ring)
{
	return ring->abi == BLKIF_ABI_X86_32
		       ? READ_SHARED(ring->r32.sring->req_prod)
		       : READ_SHARED(ring->r64.sring->req_prod);
}

bool blk_ring_has_requests(const struct blk_ring *ring)
{
	return guest_req_prod(ring) != blk_ring_req_cons(ring);
}

unsigned int blk_ring_waiting(const struct blk_ring *ring)
{
	RING_IDX waiting = guest_req_prod(ring) - blk_ring_req_cons(ring);
	/* No more can wait than the slots the daemon has answered. */
	RING_IDX room = blk_ring_size(ring) -
			(blk_ring_req_cons(ring) - blk_ring_rsp_prod(ring));

	return waiting < room ? waiting : room;
}

void blk_ring_put_response(struct blk_ring *ring, uint64_t id,
			   uint8_t operation, int16_t status)
{
	if (ring->abi == BLKIF_ABI_X86_32) {
		struct blkif_x86_32_response *rsp =
			RING_GET_RESPONSE(&ring->r32, ring->r32.rsp_prod_pvt);

		rsp->id = id;
		rsp->operation = operation;
		rsp->status = status;
		ring->r32.rsp_prod_pvt++;
	} else {
		struct blkif_x86_64_response *rsp =
			RING_GET_RESPONSE(&ring->r64, ring->r64.rsp_prod_pvt);

		rsp->id = id;
		rsp->operation = operation;
		rsp->status = status;
		ring->r64.rsp_prod_pvt++;
	}
}

bool blk_ring_push_responses(struct blk_ring *ring)
{
	int notify;

	if (ring->abi == BLKIF_ABI_X86_32)
		RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&ring->r32, notify);
	else
		RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&ring->r64, notify);
	return notify;
}

bool blk_ring_final_check(struct blk_ring *ring)
{
	int more;

	/*
	 * The macro reads req_prod itself; the value it saw is re-read and
	 * bounds-checked by the next blk_ring_next_request().
	 */
	if (ring->abi == BLKIF_ABI_X86_32)
		RING_FINAL_CHECK_FOR_REQUESTS(&ring->r32, more);
	else
		RING_FINAL_CHECK_FOR_REQUESTS(&ring->r64, more);
	return more;
}

/* SPDX-License-Identifier: MIT */
/*
 * The backend end of one shared blkif ring, in either ABI.
 *
 * The ring page is guest memory: its indexes may change at any moment and
 * may be lies. Requests are copied into struct blk_request before use, the
 * producer index is checked against the ring size, and the consumer never
 * runs more than a ring's worth ahead of the responses it has produced.
 */
#ifndef LIBBLK_RING_H
#define LIBBLK_RING_H

#include <stdbool.h>
#include <stddef.h>

#include "libblk/blkif_abi.h"
#include "libblk/request.h"

struct blk_ring {
	enum blkif_abi abi;
	union {
		blkif_x86_32_back_ring_t r32;
		blkif_x86_64_back_ring_t r64;
	};
	/* Cached copy of req_prod, read once per batch. */
	RING_IDX req_prod;
};

/*
 * Attach to a shared ring of @bytes bytes at @sring (mapped from the
 * guest). Consumption resumes after the last response the guest has seen,
 * so requests left unanswered by an earlier backend instance are served
 * again rather than lost.
 */
void blk_ring_attach(struct blk_ring *ring, void *sring, enum blkif_abi abi,
		     size_t bytes);

/* Number of request slots in the ring. */
unsigned int blk_ring_size(const struct blk_ring *ring);

/*
 * Copy the next request off the ring into @req. Returns 1 when a request
 * was copied, 0 when none is available (or the backend already has a
 * ring's worth in flight), and -EPROTO when the guest's indexes are
 * impossible: the ring is then broken and must be disconnected.
 */
int blk_ring_next_request(struct blk_ring *ring, struct blk_request *req);

/* Index of the next request to consume, and of the next response. */
static inline RING_IDX blk_ring_req_cons(const struct blk_ring *ring)
{
	return ring->abi == BLKIF_ABI_X86_32 ? ring->r32.req_cons
					     : ring->r64.req_cons;
}

static inline RING_IDX blk_ring_rsp_prod(const struct blk_ring *ring)
{
	return ring->abi == BLKIF_ABI_X86_32 ? ring->r32.rsp_prod_pvt
					     : ring->r64.rsp_prod_pvt;
}

/*
 * True when a ring's worth of requests has been taken without its answers
 * published: nothing more may be taken until they are.
 */
static inline bool blk_ring_full(const struct blk_ring *ring)
{
	return blk_ring_req_cons(ring) - blk_ring_rsp_prod(ring) >=
	       blk_ring_size(ring);
}

/*
 * A peek for pollers: does the guest's req_prod show requests not yet
 * taken? Nothing is checked here; blk_ring_next_request() does that.
 */
bool blk_ring_has_requests(const struct blk_ring *ring);

/*
 * How many requests the guest's req_prod shows not yet taken, for a
 * gauge: at most the free slots, whatever the guest wrote there.
 */
unsigned int blk_ring_waiting(const struct blk_ring *ring);

/* Queue a response privately; it becomes visible at the next push. */
void blk_ring_put_response(struct blk_ring *ring, uint64_t id,
			   uint8_t operation, int16_t status);

/* Publish queued responses. Returns true when the guest must be notified. */
bool blk_ring_push_responses(struct blk_ring *ring);

/*
 * Before sleeping: re-arm the guest's notification and report whether
 * requests arrived meanwhile.
 */
bool blk_ring_final_check(struct blk_ring *ring);

#endif /* LIBBLK_RING_H */

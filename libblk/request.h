/* SPDX-License-Identifier: MIT */
/*
 * A blkif request in the backend's own form.
 *
 * Requests are copied off the shared ring into this structure before
 * anything looks at them, so the guest cannot change a value between the
 * check and the use. Every field here is still guest-chosen: nothing is
 * trusted until the checks below have accepted it.
 */
#ifndef LIBBLK_REQUEST_H
#define LIBBLK_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "libblk/blkif_abi.h"

struct blk_segment {
	uint32_t gref;
	uint8_t first_sect;
	uint8_t last_sect;
};

struct blk_request {
	uint64_t id;
	uint64_t sector; /* in units of the device's sector size */
	uint64_t nr_sectors; /* discard only */
	uint8_t operation; /* as on the ring, BLKIF_OP_INDIRECT included */
	uint8_t indirect_op; /* indirect only */
	uint8_t discard_flags;
	uint16_t nr_segments;
	uint16_t handle;
	uint32_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	/* Direct segments; an indirect request's come from its pages. */
	struct blk_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

/* What a connection offers and allows; fixed while it is connected. */
struct blk_limits {
	uint64_t sectors; /* capacity, in sector_size units */
	uint32_t sector_size; /* 512, or the image's with large sectors */
	uint16_t max_indirect_segments; /* 0: no BLKIF_OP_INDIRECT */
	bool readonly;
	bool discard;
	bool barrier;
};

/* The operation the request performs (an indirect one's inner op). */
static inline uint8_t blk_request_op(const struct blk_request *req)
{
	return req->operation == BLKIF_OP_INDIRECT ? req->indirect_op
						   : req->operation;
}

/* Indirect pages that hold the segments of an indirect request. */
static inline unsigned int blk_indirect_pages(uint16_t nr_segments)
{
	return (nr_segments + BLKIF_SEGS_PER_INDIRECT_PAGE - 1) /
	       BLKIF_SEGS_PER_INDIRECT_PAGE;
}

/*
 * First check, on the request alone: is the operation offered, and are
 * the segment and indirect page counts possible? Returns BLKIF_RSP_OKAY,
 * BLKIF_RSP_EOPNOTSUPP for an operation this connection does not offer, or
 * BLKIF_RSP_ERROR for anything malformed. A discard is checked entirely
 * here.
 */
int blk_request_check(const struct blk_request *req,
		      const struct blk_limits *lim);

/*
 * Second check, once the segments are known (@seg: req->seg, or those read
 * from the indirect pages): each segment inside its page, the whole
 * transfer inside the image, no write to a read-only device.
 */
int blk_request_check_segments(const struct blk_request *req,
			       const struct blk_segment *seg,
			       const struct blk_limits *lim);

/*
 * Convert @n segments of an indirect page, already copied privately, into
 * the backend's form (nothing is checked here: see
 * blk_request_check_segments()).
 */
void blk_request_take_indirect(const struct blkif_request_segment *raw,
			       unsigned int n, struct blk_segment *out);

/* Bytes moved by one segment of a checked request. */
static inline uint32_t blk_segment_bytes(const struct blk_segment *seg,
					 uint32_t sector_size)
{
	return (uint32_t)(seg->last_sect - seg->first_sect + 1) * sector_size;
}

/* True when the request carries data from the guest to the image. */
static inline bool blk_request_writes(const struct blk_request *req)
{
	uint8_t op = blk_request_op(req);

	return op == BLKIF_OP_WRITE || op == BLKIF_OP_WRITE_BARRIER ||
	       (op == BLKIF_OP_FLUSH_DISKCACHE && req->nr_segments > 0);
}

/* True when the request must be followed by fdatasync before its reply. */
static inline bool blk_request_syncs(const struct blk_request *req)
{
	uint8_t op = blk_request_op(req);

	return op == BLKIF_OP_FLUSH_DISKCACHE || op == BLKIF_OP_WRITE_BARRIER;
}

#endif /* LIBBLK_REQUEST_H */

/* SPDX-License-Identifier: MIT */
/*
 * A blkif request in the backend's own form.
 *
 * Requests are copied off the shared ring into this structure before
 * anything looks at them, so the guest cannot change a value between the
 * check and the use. Every field here is still guest-chosen: nothing is
 * trusted until blk_request_check() has accepted it.
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
	uint64_t sector;
	uint8_t operation;
	uint8_t nr_segments;
	uint16_t handle;
	struct blk_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

/* What a device allows; filled in once per connection. */
struct blk_limits {
	uint64_t sectors; /* capacity in 512-byte sectors */
	bool readonly;
};

/*
 * Check a copied request against the device. Returns BLKIF_RSP_OKAY when
 * it may be executed, BLKIF_RSP_EOPNOTSUPP for an operation this backend
 * does not offer, and BLKIF_RSP_ERROR for anything malformed or outside
 * the image.
 */
int blk_request_check(const struct blk_request *req,
		      const struct blk_limits *lim);

/* Bytes moved by one segment / the whole request (request checked). */
static inline uint32_t blk_segment_bytes(const struct blk_segment *seg)
{
	return (uint32_t)(seg->last_sect - seg->first_sect + 1) *
	       BLKIF_SECTOR_SIZE;
}

uint64_t blk_request_bytes(const struct blk_request *req);

/* True when the request carries data from the guest to the image. */
static inline bool blk_request_writes(const struct blk_request *req)
{
	return req->operation == BLKIF_OP_WRITE ||
	       (req->operation == BLKIF_OP_FLUSH_DISKCACHE &&
		req->nr_segments > 0);
}

#endif /* LIBBLK_REQUEST_H */

// SPDX-License-Identifier: MIT
/*
 * Validation of copied blkif requests.
 */
#include "libblk/request.h"

uint64_t blk_request_bytes(const struct blk_request *req)
{
	uint64_t bytes = 0;

	for (unsigned int i = 0; i < req->nr_segments; i++)
		bytes += blk_segment_bytes(&req->seg[i]);
	return bytes;
}

static bool segments_valid(const struct blk_request *req)
{
	for (unsigned int i = 0; i < req->nr_segments; i++) {
		const struct blk_segment *seg = &req->seg[i];

		if (seg->first_sect > seg->last_sect ||
		    seg->last_sect >= BLKIF_SECTORS_PER_PAGE)
			return false;
	}
	return true;
}

/* The sectors touched must lie inside the image, without wrapping. */
static bool range_inside(const struct blk_request *req,
			 const struct blk_limits *lim)
{
	uint64_t nr_sectors = blk_request_bytes(req) / BLKIF_SECTOR_SIZE;

	return req->sector <= lim->sectors &&
	       nr_sectors <= lim->sectors - req->sector;
}

static int check_data_request(const struct blk_request *req,
			      const struct blk_limits *lim, bool need_data)
{
	if (req->nr_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST)
		return BLKIF_RSP_ERROR;
	if (need_data && req->nr_segments == 0)
		return BLKIF_RSP_ERROR;
	if (!segments_valid(req) || !range_inside(req, lim))
		return BLKIF_RSP_ERROR;
	if (blk_request_writes(req) && lim->readonly)
		return BLKIF_RSP_ERROR;
	return BLKIF_RSP_OKAY;
}

int blk_request_check(const struct blk_request *req,
		      const struct blk_limits *lim)
{
	switch (req->operation) {
	case BLKIF_OP_READ:
	case BLKIF_OP_WRITE:
		return check_data_request(req, lim, true);
	case BLKIF_OP_FLUSH_DISKCACHE:
		/*
		 * Linux blkfront sends preflush/FUA writes as a flush that
		 * carries segments; an empty flush carries none.
		 */
		return check_data_request(req, lim, false);
	default:
		/* Barrier, discard and indirect are not offered. */
		return BLKIF_RSP_EOPNOTSUPP;
	}
}

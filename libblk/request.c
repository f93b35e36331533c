// SPDX-License-Identifier: MIT
/*
 * Validation of copied blkif requests.
 */
#include "libblk/request.h"

static bool inside(uint64_t sector, uint64_t count, uint64_t capacity)
{
	return sector <= capacity && count <= capacity - sector;
}

static int check_discard(const struct blk_request *req,
			 const struct blk_limits *lim)
{
	if (!lim->discard)
		return BLKIF_RSP_EOPNOTSUPP;
	if (lim->readonly || req->nr_sectors == 0 ||
	    !inside(req->sector, req->nr_sectors, lim->sectors))
		return BLKIF_RSP_ERROR;
	/* BLKIF_DISCARD_SECURE is ignored: discard-secure is never offered. */
	return BLKIF_RSP_OKAY;
}

static int check_indirect(const struct blk_request *req,
			  const struct blk_limits *lim)
{
	if (!lim->max_indirect_segments)
		return BLKIF_RSP_EOPNOTSUPP;
	if (req->indirect_op != BLKIF_OP_READ &&
	    req->indirect_op != BLKIF_OP_WRITE)
		return BLKIF_RSP_ERROR;
	if (req->nr_segments == 0 ||
	    req->nr_segments > lim->max_indirect_segments)
		return BLKIF_RSP_ERROR;
	return BLKIF_RSP_OKAY;
}

int blk_request_check(const struct blk_request *req,
		      const struct blk_limits *lim)
{
	switch (req->operation) {
	case BLKIF_OP_READ:
	case BLKIF_OP_WRITE:
		if (req->nr_segments == 0)
			return BLKIF_RSP_ERROR;
		break;
	case BLKIF_OP_WRITE_BARRIER:
		if (!lim->barrier)
			return BLKIF_RSP_EOPNOTSUPP;
		break;
	case BLKIF_OP_FLUSH_DISKCACHE:
		/*
		 * Linux blkfront sends preflush/FUA writes as a flush that
		 * carries segments; an empty flush carries none.
		 */
		break;
	case BLKIF_OP_DISCARD:
		return check_discard(req, lim);
	case BLKIF_OP_INDIRECT:
		return check_indirect(req, lim);
	default:
		return BLKIF_RSP_EOPNOTSUPP;
	}
	if (req->nr_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST)
		return BLKIF_RSP_ERROR;
	return BLKIF_RSP_OKAY;
}

int blk_request_check_segments(const struct blk_request *req,
			       const struct blk_segment *seg,
			       const struct blk_limits *lim)
{
	uint32_t per_page = BLKIF_PAGE_SIZE / lim->sector_size;
	uint64_t sectors = 0;

	for (unsigned int i = 0; i < req->nr_segments; i++) {
		if (seg[i].first_sect > seg[i].last_sect ||
		    seg[i].last_sect >= per_page)
			return BLKIF_RSP_ERROR;
		sectors += seg[i].last_sect - seg[i].first_sect + 1u;
	}
	/*
	 * A request without data names no range: Linux blkfront's empty
	 * flush carries sector (sector_t)-1, and failing it makes blkfront
	 * turn flushes off for good (fsync then never reaches the image).
	 */
	if (sectors && !inside(req->sector, sectors, lim->sectors))
		return BLKIF_RSP_ERROR;
	if (blk_request_writes(req) && lim->readonly)
		return BLKIF_RSP_ERROR;
	return BLKIF_RSP_OKAY;
}

void blk_request_take_indirect(const struct blkif_request_segment *raw,
			       unsigned int n, struct blk_segment *out)
{
	for (unsigned int i = 0; i < n; i++) {
		out[i].gref = raw[i].gref;
		out[i].first_sect = raw[i].first_sect;
		out[i].last_sect = raw[i].last_sect;
	}
}

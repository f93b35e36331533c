// SPDX-License-Identifier: MIT
/*
 * Stage-time histograms.
 */
#include "libblk/blkif_abi.h"
#include "libblk/stats.h"

static unsigned int bucket_of(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int b = 0;

	while (us && b < BLK_HIST_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

void blk_stage_add(struct blk_stage_time *t, uint64_t ns, uint64_t count)
{
	t->n += count;
	t->sum_ns += ns * count;
	t->hist[bucket_of(ns)] += count;
}

void blk_stats_add(struct blk_stats *dst, const struct blk_stats *src)
{
	for (unsigned int op = 0; op < BLK_STAT_NR_OPS; op++) {
		dst->requests[op] += src->requests[op];
		dst->bytes[op] += src->bytes[op];
		dst->errors[op] += src->errors[op];
		dst->time_ns[op] += src->time_ns[op];
	}
	dst->rejected += src->rejected;
	dst->parked_no_buffers += src->parked_no_buffers;
	dst->merged += src->merged;
	dst->in_flight += src->in_flight;
	dst->queued += src->queued;
	dst->mapped_grants += src->mapped_grants;
	dst->registered_grants += src->registered_grants;
	dst->grant_map_errors += src->grant_map_errors;
	dst->close.drain_ns += src->close.drain_ns;
	dst->close.release_ns += src->close.release_ns;
	for (unsigned int s = 0; s < BLK_NR_STAGES; s++) {
		struct blk_stage_time *d = &dst->stage[s];
		const struct blk_stage_time *t = &src->stage[s];

		d->n += t->n;
		d->sum_ns += t->sum_ns;
		for (unsigned int b = 0; b < BLK_HIST_BUCKETS; b++)
			d->hist[b] += t->hist[b];
	}
}

double blk_stage_mean_us(const struct blk_stage_time *t)
{
	return t->n ? (double)t->sum_ns / (double)t->n / 1000.0 : 0;
}

/*
 * Interpolated inside the bucket that holds the middle sample: bucket b
 * spans [2^(b-1), 2^b) microseconds, bucket 0 spans [0, 1).
 */
double blk_stage_p50_us(const struct blk_stage_time *t)
{
	uint64_t half = (t->n + 1) / 2, seen = 0;

	if (!t->n)
		return 0;
	for (unsigned int b = 0; b < BLK_HIST_BUCKETS; b++) {
		double lo = b ? (double)(1ull << (b - 1)) : 0;
		double hi = (double)(1ull << b);

		if (seen + t->hist[b] >= half)
			return lo + (hi - lo) * (double)(half - seen) /
					    (double)t->hist[b];
		seen += t->hist[b];
	}
	return (double)(1ull << (BLK_HIST_BUCKETS - 1));
}

const char *blk_stage_name(enum blk_stage s)
{
	static const char *const names[BLK_NR_STAGES] = {
		[BLK_STAGE_PREPARE] = "prepare",
		[BLK_STAGE_IO] = "io",
		[BLK_STAGE_FINISH] = "finish",
		[BLK_STAGE_PUBLISH] = "publish",
	};

	return s < BLK_NR_STAGES ? names[s] : "?";
}

const char *blk_stat_op_name(enum blk_stat_op op)
{
	static const char *const names[BLK_STAT_NR_OPS] = {
		[BLK_STAT_READ] = "read",
		[BLK_STAT_WRITE] = "write",
		[BLK_STAT_FLUSH] = "flush",
		[BLK_STAT_DISCARD] = "discard",
	};

	return op < BLK_STAT_NR_OPS ? names[op] : "?";
}

int blk_stat_op_of(uint8_t blkif_op)
{
	switch (blkif_op) {
	case BLKIF_OP_READ:
		return BLK_STAT_READ;
	case BLKIF_OP_WRITE:
		return BLK_STAT_WRITE;
	case BLKIF_OP_FLUSH_DISKCACHE:
	case BLKIF_OP_WRITE_BARRIER:
		return BLK_STAT_FLUSH;
	case BLKIF_OP_DISCARD:
		return BLK_STAT_DISCARD;
	default:
		return -1;
	}
}

// SPDX-License-Identifier: MIT
#include "tools/bench/latency.h"

static unsigned int bucket_of(uint64_t v)
{
	unsigned int e;

	if (v < LAT_SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);
	return (e - LAT_SUB_BITS + 1) * LAT_SUB +
	       (unsigned int)((v >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

/* The middle of bucket @b, the value we report for its samples. */
static double bucket_value(unsigned int b)
{
	unsigned int tier = b / LAT_SUB, sub = b % LAT_SUB;
	double width, low;

	if (tier == 0)
		return b;
	width = (double)(1ull << (tier - 1));
	low = (double)(LAT_SUB + sub) * width;
	return low + width / 2;
}

void lat_record(struct lat_hist *h, uint64_t ns)
{
	h->bucket[bucket_of(ns)]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void lat_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	for (unsigned int b = 0; b < LAT_BUCKETS; b++)
		dst->bucket[b] += src->bucket[b];
	dst->count += src->count;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
}

double lat_percentile_us(const struct lat_hist *h, double p)
{
	uint64_t rank, seen = 0;
	double v;

	if (!h->count)
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)h->count);
	if (rank >= h->count)
		rank = h->count - 1;
	for (unsigned int b = 0; b < LAT_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen > rank) {
			v = bucket_value(b);
			/* Never report more than was ever seen. */
			if (v > (double)h->max_ns)
				v = (double)h->max_ns;
			return v / 1000.0;
		}
	}
	return (double)h->max_ns / 1000.0;
}

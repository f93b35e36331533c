/* SPDX-License-Identifier: MIT */
/*
 * Latency histograms: log-linear buckets (32 per power of two, so any
 * value is within about 3% of its bucket), fixed size so that guests can
 * keep theirs in memory shared with the parent and the parent can merge
 * them without any allocation.
 */
#ifndef BENCH_LATENCY_H
#define BENCH_LATENCY_H

#include <stdint.h>

#define LAT_SUB_BITS 5
#define LAT_SUB (1u << LAT_SUB_BITS)
#define LAT_BUCKETS ((64 - LAT_SUB_BITS + 1) * LAT_SUB)

struct lat_hist {
	uint64_t count;
	uint64_t max_ns;
	uint64_t bucket[LAT_BUCKETS];
};

void lat_record(struct lat_hist *h, uint64_t ns);
void lat_merge(struct lat_hist *dst, const struct lat_hist *src);
/* The value below which @p percent of samples fall, in µs; 0 if empty. */
double lat_percentile_us(const struct lat_hist *h, double p);

#endif /* BENCH_LATENCY_H */

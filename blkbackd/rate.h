/* SPDX-License-Identifier: MIT */
/*
 * A token bucket: at most @burst at once, then @per_s a second. For what
 * a guest can make the daemon do as often as it likes (log_limit in
 * log.h, a device's connects in vbd-rings.c). Zeroed: full. Owned by one
 * thread.
 */
#ifndef BLKBACKD_RATE_H
#define BLKBACKD_RATE_H

#include <stdbool.h>
#include <stdint.h>

struct rate {
	uint64_t last_ns; /* when tokens were last counted; 0: never */
	uint64_t tokens_ns; /* tokens, in ns of refill: 1 s is per_s */
};

/*
 * Take @n tokens at @now_ns (CLOCK_MONOTONIC); false (none taken) when
 * fewer are there.
 */
static inline bool rate_take(struct rate *r, unsigned int burst,
			     unsigned int per_s, unsigned int n,
			     uint64_t now_ns)
{
	uint64_t one_ns = 1000000000ull / per_s;
	uint64_t full_ns = burst * one_ns;

	if (!r->last_ns)
		r->tokens_ns = full_ns;
	else if (now_ns > r->last_ns)
		r->tokens_ns += now_ns - r->last_ns;
	if (r->tokens_ns > full_ns)
		r->tokens_ns = full_ns;
	r->last_ns = now_ns;
	if (r->tokens_ns < n * one_ns)
		return false;
	r->tokens_ns -= n * one_ns;
	return true;
}

#endif /* BLKBACKD_RATE_H */

// SPDX-License-Identifier: MIT
/*
 * The adaptive polling window.
 */
#include <time.h>

#include "libblk/poll.h"

/* Below this a spin cannot beat the sleep it replaces. */
#define MIN_WINDOW_NS 2000u

void blk_poll_init(struct blk_poll *p, unsigned int max_us)
{
	p->max_ns = (uint64_t)max_us * 1000;
	p->window_ns = p->max_ns;
}

void blk_poll_hit(struct blk_poll *p)
{
	p->window_ns = p->max_ns;
}

void blk_poll_miss(struct blk_poll *p)
{
	p->window_ns /= 2;
	if (p->window_ns < MIN_WINDOW_NS)
		p->window_ns = 0;
}

void blk_poll_woke(struct blk_poll *p, uint64_t slept_ns)
{
	if (slept_ns < p->max_ns)
		p->window_ns = p->max_ns;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t blk_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t blk_coarse_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

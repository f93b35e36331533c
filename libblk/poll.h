/* SPDX-License-Identifier: MIT */
/*
 * Adaptive busy-polling: how long a worker spins on its rings and its
 * io_uring before it sleeps.
 *
 * Sleeping costs a wake-up on both sides of every request: the guest must
 * send an event to wake the worker, and the worker's own wake-up when I/O
 * completes adds scheduler latency to each request. While a worker polls,
 * its rings are left without a request for events (req_event is not
 * re-armed), so the guest sends none, and completions are reaped as they
 * land. Polling costs CPU, so the window adapts: it opens fully after a
 * spin that found work or a sleep that polling would have covered, halves
 * after each spin that found nothing, and closes below a few
 * microseconds. A worker whose guests are idle or slow spins only a few
 * halving windows after their last request and then sleeps; a busy one
 * finds work within each window. The cap (--poll-us) bounds the CPU an
 * idle-but-not-quite guest can make a worker waste: at most one window
 * per request.
 *
 * Owned by the engine's thread.
 */
#ifndef LIBBLK_POLL_H
#define LIBBLK_POLL_H

#include <stdint.h>

struct blk_poll {
	uint64_t max_ns; /* 0: never poll */
	uint64_t window_ns; /* how long the next spin may last */
};

void blk_poll_init(struct blk_poll *p, unsigned int max_us);

static inline uint64_t blk_poll_window(const struct blk_poll *p)
{
	return p->window_ns;
}

/* A spin found work. */
void blk_poll_hit(struct blk_poll *p);
/* A spin of the whole window found nothing. */
void blk_poll_miss(struct blk_poll *p);
/* The worker slept @slept_ns before work woke it. */
void blk_poll_woke(struct blk_poll *p, uint64_t slept_ns);

/*
 * CLOCK_MONOTONIC in nanoseconds. Usually read in the vDSO, but not in a
 * Xen PV dom0, whose clock source (Xen's) has no vDSO reader: there each
 * read is a system call, which passes through Xen. Keep it off the path
 * of every request unless asked for (stage timing, polling).
 */
uint64_t blk_now_ns(void);
/*
 * CLOCK_MONOTONIC_COARSE: as of the last tick (1-10 ms coarse), read from
 * the vDSO's data alone, so never a system call: for intervals of
 * hundreds of milliseconds.
 */
uint64_t blk_coarse_now_ns(void);

#endif /* LIBBLK_POLL_H */

// SPDX-License-Identifier: MIT
/*
 * Per-disk I/O limits: the token buckets (see throttle.h).
 */
#include "libblk/throttle.h"
#include "libblk/poll.h" /* blk_now_ns() */

#define NS_PER_S 1e9
/* A bucket holds this fraction of a second of its rate. */
#define BURST_FRACTION 0.1
/* Waits shorter than this are not worth a timer of their own. */
#define MIN_WAIT_NS 20000ull

void blk_throttle_init(struct blk_throttle *t)
{
	*t = (struct blk_throttle){ 0 };
	atomic_init(&t->limited, false);
	pthread_mutex_init(&t->lock, NULL);
}

void blk_throttle_destroy(struct blk_throttle *t)
{
	pthread_mutex_destroy(&t->lock);
}

static double io_burst(const struct blk_throttle_limits *lim)
{
	double burst = (double)lim->iops * BURST_FRACTION;

	return burst < 1 ? 1 : burst;
}

static double byte_burst(const struct blk_throttle_limits *lim)
{
	return (double)lim->bps * BURST_FRACTION;
}

/* The held period, if any, ends at @now_ns. Under the lock. */
static void end_held(struct blk_throttle *t, uint64_t now_ns)
{
	if (!t->held)
		return;
	t->held = false;
	if (now_ns > t->held_since_ns)
		t->held_total_ns += now_ns - t->held_since_ns;
}

void blk_throttle_set(struct blk_throttle *t,
		      const struct blk_throttle_limits *lim)
{
	pthread_mutex_lock(&t->lock);
	t->lim = *lim;
	t->io_tokens = io_burst(lim);
	t->byte_tokens = byte_burst(lim);
	t->last_ns = 0;
	/* A queue still held starts a new period on its next try. */
	end_held(t, blk_now_ns());
	atomic_store(&t->limited, lim->iops || lim->bps);
	pthread_mutex_unlock(&t->lock);
}

void blk_throttle_read(struct blk_throttle *t, uint64_t now_ns,
		       struct blk_throttle_info *out)
{
	pthread_mutex_lock(&t->lock);
	out->lim = t->lim;
	out->throttled_ns = t->held_total_ns;
	if (t->held && now_ns > t->held_since_ns)
		out->throttled_ns += now_ns - t->held_since_ns;
	pthread_mutex_unlock(&t->lock);
}

/* Add what the rates earned since the last fill, up to the bursts. */
static void refill(struct blk_throttle *t, uint64_t now_ns)
{
	double dt;

	if (!t->last_ns || now_ns <= t->last_ns) {
		/* First use, or another thread's clock read a bit earlier. */
		if (!t->last_ns)
			t->last_ns = now_ns;
		return;
	}
	dt = (double)(now_ns - t->last_ns) / NS_PER_S;
	t->last_ns = now_ns;
	t->io_tokens += (double)t->lim.iops * dt;
	if (t->io_tokens > io_burst(&t->lim))
		t->io_tokens = io_burst(&t->lim);
	t->byte_tokens += (double)t->lim.bps * dt;
	if (t->byte_tokens > byte_burst(&t->lim))
		t->byte_tokens = byte_burst(&t->lim);
}

/* Nanoseconds until the buckets let a request start; 0: now. */
static double wait_needed(const struct blk_throttle *t)
{
	double wait = 0, w;

	if (t->lim.iops && t->io_tokens < 1) {
		w = (1 - t->io_tokens) / (double)t->lim.iops * NS_PER_S;
		wait = w > wait ? w : wait;
	}
	if (t->lim.bps && t->byte_tokens < 0) {
		w = -t->byte_tokens / (double)t->lim.bps * NS_PER_S;
		wait = w > wait ? w : wait;
	}
	return wait;
}

static uint64_t clamp_wait(double wait)
{
	if (wait < (double)MIN_WAIT_NS)
		return MIN_WAIT_NS;
	if (wait > (double)BLK_THROTTLE_MAX_WAIT_NS)
		return BLK_THROTTLE_MAX_WAIT_NS;
	return (uint64_t)wait;
}

uint64_t blk_throttle_admit(struct blk_throttle *t, uint64_t now_ns)
{
	uint64_t ret = 0;
	double wait;

	pthread_mutex_lock(&t->lock);
	if (t->lim.iops || t->lim.bps) {
		refill(t, now_ns);
		wait = wait_needed(t);
		if (wait > 0) {
			if (!t->held) {
				t->held = true;
				t->held_since_ns = now_ns;
			}
			ret = clamp_wait(wait);
		} else {
			end_held(t, now_ns);
			if (t->lim.iops)
				t->io_tokens -= 1;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

void blk_throttle_charge(struct blk_throttle *t, uint64_t bytes)
{
	pthread_mutex_lock(&t->lock);
	if (t->lim.bps)
		t->byte_tokens -= (double)bytes;
	pthread_mutex_unlock(&t->lock);
}

/* SPDX-License-Identifier: MIT */
/*
 * Per-disk I/O limits: a token bucket of requests per second and one of
 * bytes per second, shared by every queue of a disk (its queues may run
 * on different workers).
 *
 * A request may start while the request bucket holds a whole request and
 * the byte bucket is not in debt. Starting takes one request at once
 * (blk_throttle_admit()) and then the request's bytes once they are known
 * (blk_throttle_charge()); the bytes may leave the byte bucket in debt, so
 * that a request larger than the burst still runs, and the ones after it
 * wait until the debt is repaid. A request that may not start stays on the
 * guest's ring: the guest is slowed, never given an error, and nothing
 * else of its worker waits for it.
 *
 * Burst: each bucket holds at most a tenth of a second of its rate (and at
 * least one request), so a guest that was idle gets no more than that
 * ahead of its limit before it is held to it.
 *
 * Threads: any. The limits and the buckets are under a mutex, taken twice
 * per request of a limited disk and never for an unlimited one. The owner
 * (the daemon's main thread) initialises, sets and destroys; the workers'
 * engines admit and charge, borrowing the throttle while connected.
 */
#ifndef LIBBLK_THROTTLE_H
#define LIBBLK_THROTTLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct blk_throttle_limits {
	uint64_t iops; /* requests per second; 0: unlimited */
	uint64_t bps; /* bytes per second; 0: unlimited */
};

struct blk_throttle {
	atomic_bool limited; /* either limit set: read without the lock */
	pthread_mutex_t lock;
	struct blk_throttle_limits lim;
	double io_tokens; /* requests; at most the burst */
	double byte_tokens; /* bytes; negative while in debt */
	uint64_t last_ns; /* when the buckets were last filled */
	bool held; /* a queue is waiting for the buckets */
	uint64_t held_since_ns;
	uint64_t held_total_ns; /* time during which a queue was held */
};

/* The longest a held queue sleeps before it looks again (a limit change). */
#define BLK_THROTTLE_MAX_WAIT_NS 100000000ull

void blk_throttle_init(struct blk_throttle *t);
void blk_throttle_destroy(struct blk_throttle *t);

/* Set both limits (0: unlimited); the buckets start full. */
void blk_throttle_set(struct blk_throttle *t,
		      const struct blk_throttle_limits *lim);

/* What a disk's throttle shows: its limits and how long it held the guest. */
struct blk_throttle_info {
	struct blk_throttle_limits lim;
	uint64_t throttled_ns; /* total time a queue waited for the buckets */
};

void blk_throttle_read(struct blk_throttle *t, uint64_t now_ns,
		       struct blk_throttle_info *out);

/*
 * May one more request start at @now_ns? Returns 0 and takes a request
 * from the bucket when it may, else how many nanoseconds to wait before
 * asking again (at most BLK_THROTTLE_MAX_WAIT_NS).
 */
uint64_t blk_throttle_admit(struct blk_throttle *t, uint64_t now_ns);

/* The request admitted last moves @bytes: take them from the bucket. */
void blk_throttle_charge(struct blk_throttle *t, uint64_t bytes);

/* Is either limit set? (A hint: no lock taken.) */
static inline bool blk_throttle_limited(struct blk_throttle *t)
{
	return t && atomic_load_explicit(&t->limited, memory_order_relaxed);
}

#endif /* LIBBLK_THROTTLE_H */

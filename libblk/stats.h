/* SPDX-License-Identifier: MIT */
/*
 * Per-connection counters and per-request stage timing.
 *
 * The counters are always kept: a handful of additions per request, and
 * each operation's busy time (time_ns), from readings of the clock that
 * whole batches share: one as the engine's pass wakes (the requests it
 * takes off rings start there) and one as a batch of answers is pushed
 * (they end there), so at most three a pass, none per request. They are
 * vDSO reads, never system calls: of CLOCK_MONOTONIC where the vDSO
 * serves it (blk_engine_set_precise_clock()), else of the tick-coarse
 * CLOCK_MONOTONIC_COARSE, whose sums are right on average over many
 * requests. Stage timing reads CLOCK_MONOTONIC a few more times per pass,
 * and only when the engine's timing switch is on, so it can stay compiled
 * in.
 *
 * A request's life in the daemon is cut into stages at the points where
 * the engine already batches work:
 *
 *   PREPARE  the worker woke with the request on the ring -> its I/O was
 *            queued: copied off the ring, checked, indirect pages read,
 *            buffers found, data grant-copied in
 *   IO       queued -> its completion reaped: the io_uring submit, the
 *            host's I/O, and the worker's own wake-up
 *   FINISH   reaped -> answered: data grant-copied out, answer written
 *   PUBLISH  answered -> the answers pushed and the guest notified,
 *            with any wait for an earlier request's answer (they go
 *            out in ring order, see io_publish())
 *
 * What the guest sees beyond their sum is the transport: its notification
 * reaching the worker, and the worker's reaching the guest.
 *
 * Owned by the engine's thread; copied out whole for anyone else.
 */
#ifndef LIBBLK_STATS_H
#define LIBBLK_STATS_H

#include <stdint.h>

enum blk_stat_op {
	BLK_STAT_READ,
	BLK_STAT_WRITE,
	BLK_STAT_FLUSH, /* flushes and barriers */
	BLK_STAT_DISCARD,
	BLK_STAT_NR_OPS,
};

enum blk_stage {
	BLK_STAGE_PREPARE,
	BLK_STAGE_IO,
	BLK_STAGE_FINISH,
	BLK_STAGE_PUBLISH,
	BLK_NR_STAGES,
};

/* Bucket b holds durations in [2^(b-1), 2^b) microseconds; 0 is < 1 us. */
#define BLK_HIST_BUCKETS 24

struct blk_stage_time {
	uint64_t n;
	uint64_t sum_ns;
	uint64_t hist[BLK_HIST_BUCKETS];
};

struct blk_stats {
	uint64_t requests[BLK_STAT_NR_OPS]; /* answered */
	uint64_t bytes[BLK_STAT_NR_OPS]; /* moved (discard: the range) */
	uint64_t errors[BLK_STAT_NR_OPS]; /* answered with an error */
	/*
	 * The time the requests answered spent in the daemon, summed: from
	 * the pass that took each off its ring to the push that published
	 * its answer (the sum of its stages, below, less the transport).
	 */
	uint64_t time_ns[BLK_STAT_NR_OPS];
	uint64_t rejected; /* unknown operations, answered with an error */
	uint64_t parked_no_buffers; /* waited for bounce pages */
	uint64_t merged; /* requests that rode in another's I/O */
	uint64_t in_flight; /* a gauge: taken off the ring, not yet answered */
	uint64_t queued; /* a gauge: on the ring, not taken yet */
	uint64_t mapped_grants; /* a gauge: persistent grants held mapped */
	/* A gauge: of those, registered buffers of the worker's io_uring. */
	uint64_t registered_grants;
	uint64_t grant_map_errors; /* mappings Xen refused; copied instead */
	struct blk_stage_time stage[BLK_NR_STAGES];
	/*
	 * How a connection's close went, in the counters conn_closed() gives
	 * (libblk/engine.h); 0 in any others. drain: from its disconnect
	 * until its started I/O was answered and its backend watched nothing
	 * more; release: then giving back its ring, grants, event channel
	 * and buffers.
	 */
	struct {
		uint64_t drain_ns, release_ns;
	} close;
};

/* Add @src's counters and times to @dst (a disk's queues summed). */
void blk_stats_add(struct blk_stats *dst, const struct blk_stats *src);

/* Add @count durations of @ns nanoseconds each to @t. */
void blk_stage_add(struct blk_stage_time *t, uint64_t ns, uint64_t count);

/* The median of @t in microseconds, from its histogram (0 when empty). */
double blk_stage_p50_us(const struct blk_stage_time *t);

/* Mean in microseconds (0 when empty). */
double blk_stage_mean_us(const struct blk_stage_time *t);

/* The counter of blkif operation @blkif_op, or -1 for an unknown one. */
int blk_stat_op_of(uint8_t blkif_op);

const char *blk_stage_name(enum blk_stage s);
const char *blk_stat_op_name(enum blk_stat_op op);

#endif /* LIBBLK_STATS_H */

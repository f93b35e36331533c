/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's jobs: one description of each I/O pattern and one
 * deterministic generator of its operations, shared by every arm, so that
 * raw io_uring, the loop device and a blkif guest issue exactly the same
 * requests in the same order.
 */
#ifndef BENCH_JOB_H
#define BENCH_JOB_H

#include <stdbool.h>
#include <stdint.h>

#define BENCH_BLOCK 4096u /* every offset and length is a multiple */

enum bench_job_kind {
	BENCH_JOB_RANDREAD,
	BENCH_JOB_RANDWRITE,
	BENCH_JOB_SEQWRITE,
	BENCH_JOB_SEQREAD,
	BENCH_JOB_BUILD,
	BENCH_JOB_QD1READ,
	BENCH_NR_JOBS,
};

struct bench_job {
	enum bench_job_kind kind;
	uint32_t max_bs; /* largest single operation, bytes */
	uint32_t depth; /* operations in flight per guest */
	uint64_t region; /* bytes of the disk the job touches */
	uint64_t total; /* bytes of I/O each guest does: the fixed work */
	double time_limit; /* seconds per guest, 0 = none */
	/*
	 * Seconds each guest runs at least: it does the fixed work again
	 * (new offsets, the same pattern) until then; 0 = once. So that a
	 * fast disk's job is still long enough to compare arms on.
	 */
	double min_time;
	uint64_t seed;
	uint32_t flush_every; /* writes between flushes, 0 = never */
	bool final_flush; /* make the writes durable before the clock stops */
};

enum bench_op_type {
	BENCH_OP_READ,
	BENCH_OP_WRITE,
	BENCH_OP_FLUSH,
};

struct bench_op {
	enum bench_op_type type;
	uint64_t offset;
	uint32_t len;
};

struct bench_opgen {
	const struct bench_job *job;
	uint64_t rng;
	uint64_t issued; /* bytes of reads and writes handed out */
	uint64_t limit; /* hand out this many: the fixed work, or rounds of it
			 */
	uint64_t next_seq; /* offset after the previous operation */
	uint32_t writes_since_flush;
};

const char *bench_job_name(enum bench_job_kind kind);
/* A one-line description for the man page and --help. */
const char *bench_job_summary(enum bench_job_kind kind);
int bench_job_lookup(const char *name, enum bench_job_kind *kind);

/*
 * Fill @job for @kind: @total bytes of I/O per guest over the first
 * @region bytes of each disk (both rounded down to the job's largest
 * operation), stopping early after @time_limit seconds when non-zero, and
 * repeated until @min_time seconds have passed.
 */
int bench_job_init(struct bench_job *job, enum bench_job_kind kind,
		   uint64_t total, uint64_t region, double time_limit,
		   double min_time, uint64_t seed);

/* Each guest gets its own stream, reproducible from the seed. */
void bench_opgen_init(struct bench_opgen *g, const struct bench_job *job,
		      unsigned int guest);
/* The next operation; false once the fixed work has been handed out. */
bool bench_opgen_next(struct bench_opgen *g, struct bench_op *op);
/* Hand out the fixed work once more (the job's min_time is not up). */
void bench_opgen_again(struct bench_opgen *g);

#endif /* BENCH_JOB_H */

// SPDX-License-Identifier: MIT
/*
 * The I/O patterns. The "build" job imitates the original 2005 benchmark, a
 * kernel compile on a file-backed disk: mostly small reads, some small
 * writes, runs of neighbouring blocks, a modest queue depth and periodic
 * flushes (a journalling filesystem committing).
 */
#include "tools/bench/job.h"

#include <errno.h>
#include <string.h>

#define MIB (1024u * 1024u)

struct job_shape {
	const char *name;
	const char *summary;
	uint32_t max_bs;
	uint32_t depth;
	uint32_t flush_every;
	bool writes;
};

static const struct job_shape shapes[BENCH_NR_JOBS] = {
	[BENCH_JOB_RANDREAD] = { "randread", "4 KiB random reads, depth 32",
				 4096, 32, 0, false },
	[BENCH_JOB_RANDWRITE] = { "randwrite",
				  "4 KiB random writes, depth 32, then a flush",
				  4096, 32, 0, true },
	[BENCH_JOB_SEQWRITE] = { "seqwrite",
				 "1 MiB sequential writes, depth 4, then a "
				 "flush",
				 MIB, 4, 0, true },
	[BENCH_JOB_SEQREAD] = { "seqread", "1 MiB sequential reads, depth 4",
				MIB, 4, 0, false },
	[BENCH_JOB_BUILD] = { "build",
			      "build-like: 70% reads, 4-64 KiB, half of them "
			      "sequential runs, depth 4, a flush every 32 "
			      "writes",
			      64 * 1024, 4, 32, true },
	/* One request at a time: what each arm adds to a single I/O. */
	[BENCH_JOB_QD1READ] = { "qd1read", "4 KiB random reads, depth 1", 4096,
				1, 0, false },
};

const char *bench_job_name(enum bench_job_kind kind)
{
	return kind < BENCH_NR_JOBS ? shapes[kind].name : "?";
}

const char *bench_job_summary(enum bench_job_kind kind)
{
	return kind < BENCH_NR_JOBS ? shapes[kind].summary : "?";
}

int bench_job_lookup(const char *name, enum bench_job_kind *kind)
{
	for (int k = 0; k < BENCH_NR_JOBS; k++) {
		if (!strcmp(name, shapes[k].name)) {
			*kind = (enum bench_job_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

int bench_job_init(struct bench_job *job, enum bench_job_kind kind,
		   uint64_t total, uint64_t region, double time_limit,
		   double min_time, uint64_t seed)
{
	const struct job_shape *s;

	if (kind >= BENCH_NR_JOBS)
		return -EINVAL;
	s = &shapes[kind];
	region -= region % s->max_bs;
	total -= total % s->max_bs;
	if (!region || !total || time_limit < 0 || min_time < 0)
		return -EINVAL;
	*job = (struct bench_job){ .kind = kind,
				   .max_bs = s->max_bs,
				   .depth = s->depth,
				   .region = region,
				   .total = total,
				   .time_limit = time_limit,
				   .min_time = min_time,
				   .seed = seed,
				   .flush_every = s->flush_every,
				   .final_flush = s->writes };
	return 0;
}

/* splitmix64: small, fast and good enough to scatter offsets. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void bench_opgen_init(struct bench_opgen *g, const struct bench_job *job,
		      unsigned int guest)
{
	*g = (struct bench_opgen){ .job = job,
				   .rng = job->seed ^
					  (0x5851f42d4c957f2dull * (guest + 1)),
				   .limit = job->total };
}

void bench_opgen_again(struct bench_opgen *g)
{
	g->limit += g->job->total;
}

static uint64_t random_block(struct bench_opgen *g, uint32_t len)
{
	uint64_t slots = (g->job->region - len) / BENCH_BLOCK + 1;

	return next_random(&g->rng) % slots * BENCH_BLOCK;
}

/* 4 KiB half the time, then 8, 16, 32 and 64 KiB ever more rarely. */
static uint32_t build_size(struct bench_opgen *g)
{
	uint32_t r = (uint32_t)(next_random(&g->rng) % 100);

	if (r < 50)
		return 4096;
	if (r < 70)
		return 8192;
	if (r < 85)
		return 16384;
	if (r < 95)
		return 32768;
	return 65536;
}

static void next_build_op(struct bench_opgen *g, struct bench_op *op)
{
	uint64_t r = next_random(&g->rng);

	op->type = r % 10 < 7 ? BENCH_OP_READ : BENCH_OP_WRITE;
	op->len = build_size(g);
	if ((r >> 8) % 2 && g->next_seq + op->len <= g->job->region)
		op->offset = g->next_seq;
	else
		op->offset = random_block(g, op->len);
}

bool bench_opgen_next(struct bench_opgen *g, struct bench_op *op)
{
	const struct bench_job *job = g->job;

	if (job->flush_every && g->writes_since_flush >= job->flush_every) {
		g->writes_since_flush = 0;
		*op = (struct bench_op){ .type = BENCH_OP_FLUSH };
		return true;
	}
	if (g->issued >= g->limit)
		return false;
	switch (job->kind) {
	case BENCH_JOB_RANDREAD:
	case BENCH_JOB_QD1READ:
	case BENCH_JOB_RANDWRITE:
		op->type = job->kind == BENCH_JOB_RANDWRITE ? BENCH_OP_WRITE
							    : BENCH_OP_READ;
		op->len = job->max_bs;
		op->offset = random_block(g, op->len);
		break;
	case BENCH_JOB_SEQWRITE:
	case BENCH_JOB_SEQREAD:
		op->type = job->kind == BENCH_JOB_SEQREAD ? BENCH_OP_READ
							  : BENCH_OP_WRITE;
		op->len = job->max_bs;
		op->offset = g->next_seq % job->region;
		break;
	default:
		next_build_op(g, op);
		break;
	}
	if (op->len > g->limit - g->issued)
		op->len = (uint32_t)(g->limit - g->issued);
	g->issued += op->len;
	g->next_seq = op->offset + op->len;
	if (op->type == BENCH_OP_WRITE)
		g->writes_since_flush++;
	return true;
}

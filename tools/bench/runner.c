// SPDX-License-Identifier: MIT
/*
 * The job loop: keep `depth` operations in flight, and treat a flush as a
 * barrier (wait for everything before it, issue it alone, wait for it), as
 * a filesystem does when it commits. Write jobs end with a flush so that
 * an arm cannot look fast by leaving its writes in a cache.
 */
#include "tools/bench/runner.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_DEPTH 64

struct run_state {
	struct bench_engine *e;
	const struct bench_job *job;
	struct bench_guest_result *res;
	uint64_t started_ns[MAX_DEPTH];
	enum bench_op_type type[MAX_DEPTH];
	uint32_t len[MAX_DEPTH];
	unsigned int free_slot[MAX_DEPTH];
	unsigned int nr_free;
	unsigned int in_flight;
	bool flush_in_flight;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int issue(struct run_state *s, const struct bench_op *op)
{
	unsigned int slot = s->free_slot[--s->nr_free];
	int ret;

	s->type[slot] = op->type;
	s->len[slot] = op->len;
	s->started_ns[slot] = now_ns();
	ret = s->e->ops->queue(s->e, slot, op);
	if (ret < 0)
		return ret;
	s->in_flight++;
	if (op->type == BENCH_OP_FLUSH)
		s->flush_in_flight = true;
	return 0;
}

static int reap_one(struct run_state *s)
{
	struct bench_guest_result *res = s->res;
	unsigned int slot;
	int result, ret;

	ret = s->e->ops->complete(s->e, &slot, &result);
	if (ret < 0)
		return ret;
	if (slot >= s->job->depth)
		return -EPROTO;
	if (result < 0) {
		snprintf(res->why, sizeof(res->why), "%s failed: %s",
			 s->type[slot] == BENCH_OP_FLUSH  ? "flush"
			 : s->type[slot] == BENCH_OP_READ ? "read"
							  : "write",
			 strerror(-result));
		return result;
	}
	s->in_flight--;
	s->free_slot[s->nr_free++] = slot;
	switch (s->type[slot]) {
	case BENCH_OP_FLUSH:
		s->flush_in_flight = false;
		res->flushes++;
		return 0;
	case BENCH_OP_READ:
		res->bytes_read += s->len[slot];
		break;
	case BENCH_OP_WRITE:
		res->bytes_written += s->len[slot];
		break;
	}
	res->ops++;
	lat_record(&res->lat, now_ns() - s->started_ns[slot]);
	__atomic_store_n(&res->progress, res->bytes_read + res->bytes_written,
			 __ATOMIC_RELAXED);
	return 0;
}

/* Issue what the job and the barrier rules allow right now. */
static int fill_queue(struct run_state *s, struct bench_opgen *g,
		      struct bench_op *pending, bool *have_pending, bool *done)
{
	int ret;

	while (!s->flush_in_flight && s->nr_free) {
		if (!*have_pending) {
			if (*done || !bench_opgen_next(g, pending)) {
				*done = true;
				return 0;
			}
			*have_pending = true;
		}
		if (pending->type == BENCH_OP_FLUSH && s->in_flight)
			return 0; /* a barrier: drain first */
		ret = issue(s, pending);
		if (ret < 0)
			return ret;
		*have_pending = false;
	}
	return 0;
}

static int run_loop(struct run_state *s, unsigned int guest, uint64_t t0)
{
	const struct bench_job *job = s->job;
	uint64_t limit_ns = (uint64_t)(job->time_limit * 1e9);
	uint64_t min_ns = (uint64_t)(job->min_time * 1e9);
	struct bench_opgen g;
	struct bench_op pending;
	bool have_pending = false, done = false, final_flush = job->final_flush;
	bool stopped = false; /* by the time limit */
	int ret;

	bench_opgen_init(&g, job, guest);
	for (;;) {
		ret = fill_queue(s, &g, &pending, &have_pending, &done);
		if (ret < 0)
			return ret;
		/* The work is done before the job's least time: once more. */
		if (done && !stopped && now_ns() - t0 < min_ns) {
			bench_opgen_again(&g);
			done = false;
			continue;
		}
		if (done && !s->in_flight && final_flush) {
			pending = (struct bench_op){ .type = BENCH_OP_FLUSH };
			final_flush = false;
			ret = issue(s, &pending);
			if (ret < 0)
				return ret;
		}
		if (!s->in_flight)
			return 0;
		ret = s->e->ops->submit(s->e);
		if (ret < 0)
			return ret;
		ret = reap_one(s);
		if (ret < 0)
			return ret;
		if (limit_ns && now_ns() - t0 >= limit_ns && !done) {
			done = stopped = true;
			have_pending = false;
		}
	}
}

int bench_run_job(struct bench_engine *e, const struct bench_job *job,
		  unsigned int guest, struct bench_guest_result *res)
{
	struct run_state s = { .e = e, .job = job, .res = res };
	double cpu0;
	uint64_t t0;
	int ret;

	if (!job->depth || job->depth > MAX_DEPTH)
		return -EINVAL;
	for (unsigned int i = 0; i < job->depth; i++)
		s.free_slot[s.nr_free++] = job->depth - 1 - i;
	cpu0 = cpu_now();
	t0 = now_ns();
	ret = run_loop(&s, guest, t0);
	res->seconds = (double)(now_ns() - t0) / 1e9;
	res->cpu_seconds = cpu_now() - cpu0;
	res->error = ret;
	if (ret < 0 && !res->why[0])
		snprintf(res->why, sizeof(res->why), "%s",
			 e->why[0] ? e->why : strerror(-ret));
	return ret;
}

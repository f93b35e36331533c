/* SPDX-License-Identifier: MIT */
/*
 * Run one job for one guest over any engine, timing every operation. The
 * result lives in memory shared with the parent (guests.c), so it is
 * plain data.
 */
#ifndef BENCH_RUNNER_H
#define BENCH_RUNNER_H

#include <stdint.h>

#include "tools/bench/engine.h"
#include "tools/bench/job.h"
#include "tools/bench/latency.h"

struct bench_guest_result {
	int error; /* -errno, 0 when the job completed */
	char why[192];
	double seconds; /* first submit to last completion */
	double cpu_seconds; /* the guest process's own CPU over the job */
	uint64_t ops; /* reads and writes */
	uint64_t flushes;
	uint64_t bytes_read;
	uint64_t bytes_written;
	uint64_t progress; /* bytes done so far, for the progress line */
	struct lat_hist lat; /* reads and writes; flushes are not timed */
};

int bench_run_job(struct bench_engine *e, const struct bench_job *job,
		  unsigned int guest, struct bench_guest_result *res);

#endif /* BENCH_RUNNER_H */

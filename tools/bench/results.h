/* SPDX-License-Identifier: MIT */
/*
 * What a benchmark run measured: one cell per (job, arm, N), each with the
 * samples of its repeats and their medians, and the targets derived from
 * them. Shared by the runner (blkback-bench.c) and the reports (report.c).
 */
#ifndef BENCH_RESULTS_H
#define BENCH_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/bench/job.h"

enum bench_arm {
	BENCH_ARM_RAW,
	BENCH_ARM_LOOP,
	BENCH_ARM_LOOP_DIO,
	BENCH_ARM_BLKBACKD,
	BENCH_NR_ARMS,
};

enum bench_cpu_method {
	BENCH_CPU_NONE, /* raw: no backend */
	BENCH_CPU_DAEMON, /* blkbackd: the daemon's /proc/PID/stat */
	BENCH_CPU_HOST_MINUS_GUESTS, /* loop: /proc/stat busy - guests */
};

enum bench_cell_status {
	BENCH_CELL_NOT_RUN,
	BENCH_CELL_OK,
	BENCH_CELL_SKIPPED,
	BENCH_CELL_FAILED,
};

/* One run of one cell, or the medians of several. */
struct bench_sample {
	double wall_seconds;
	double *guest_seconds; /* n entries */
	double fairness; /* max/min per-guest throughput = time ratio */
	double mbps; /* aggregate, 10^6 bytes/s over the wall time */
	double iops;
	double p50_us, p99_us;
	double backend_cpu_us_per_io; /* NaN when not applicable */
	double guest_cpu_us_per_io;
	uint64_t ops, bytes;
};

#define BENCH_MAX_REPEAT 25

struct bench_cell {
	enum bench_job_kind job;
	enum bench_arm arm;
	unsigned int n;
	enum bench_cell_status status;
	enum bench_cpu_method cpu_method;
	char note[256];
	unsigned int nr_samples;
	struct bench_sample samples[BENCH_MAX_REPEAT];
	struct bench_sample median;
};

struct bench_config {
	unsigned int guests[128];
	unsigned int nr_guests;
	enum bench_job_kind jobs[BENCH_NR_JOBS];
	unsigned int nr_jobs;
	enum bench_arm arms[BENCH_NR_ARMS];
	unsigned int nr_arms;
	uint64_t size; /* I/O bytes per guest per job */
	uint64_t image_size;
	double time_limit;
	unsigned int repeat;
	uint64_t seed;
	const char *blkbackd;
	const char *xensim_host;
	const char *dir;
};

struct bench_results {
	const struct bench_config *cfg;
	struct bench_cell *cells; /* jobs x arms x guests, in that order */
	unsigned int nr_cells;
};

const char *bench_arm_name(enum bench_arm arm);
int bench_arm_lookup(const char *name, enum bench_arm *arm);
const char *bench_cpu_method_name(enum bench_cpu_method m);

struct bench_cell *bench_cell_find(const struct bench_results *r,
				   enum bench_job_kind job, enum bench_arm arm,
				   unsigned int n);
/* Fill cell->median from the samples. */
int bench_cell_summarise(struct bench_cell *cell);

/* The targets, evaluated per job from one run's cells. */
struct bench_target {
	enum bench_job_kind job;
	char name[48]; /* stable key for JSON */
	char label[96]; /* for people */
	double value, threshold;
	bool at_least; /* value >= threshold passes, else <= */
	bool available;
	bool pass;
};

/* Up to 4 targets per job into @out; returns how many. */
unsigned int bench_targets(const struct bench_results *r,
			   enum bench_job_kind job, struct bench_target *out);

#endif /* BENCH_RESULTS_H */

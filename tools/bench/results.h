/* SPDX-License-Identifier: MIT */
/*
 * What a benchmark run measured: one cell per (job, arm, N), each with the
 * samples of its repeats and their medians, and the targets derived from
 * them. Shared by the runner (blkback-bench.c) and the reports (report.c).
 */
#ifndef BENCH_RESULTS_H
#define BENCH_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/bench/handoff.h"
#include "tools/bench/job.h"
#include "tools/bench/procinfo.h"

enum bench_arm {
	BENCH_ARM_RAW,
	BENCH_ARM_LOOP,
	BENCH_ARM_LOOP_DIO,
	BENCH_ARM_BLKBACKD,
	BENCH_ARM_NBD, /* blkbackd, each image served by nbdkit: opt-in */
	BENCH_ARM_RBD, /* blkbackd, each image in a one-node Ceph: opt-in */
	/* blkbackd on null images: the transport and the daemon, no I/O */
	BENCH_ARM_FLOOR,
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

/*
 * One run of one cell, or the medians (or minima, or maxima) of several.
 * The host figures say what the run started from and ran beside: how much
 * of the cell's images was in the host page cache before eviction and
 * when the run started (always 0 unless eviction failed), and how busy
 * the host's CPUs were (steal: taken by the hypervisor under this VM;
 * others: busy minus the guests and the daemon, i.e. everything else on
 * the host, which for the loop arms includes the loop device's workers).
 */
struct bench_sample {
	double wall_seconds;
	double *guest_seconds; /* n entries */
	double fairness; /* max/min per-guest throughput = time ratio */
	double mbps; /* aggregate, 10^6 bytes/s over the wall time */
	double iops;
	double p50_us, p99_us;
	/* NaN without a backend, or where its CPU was not measured. */
	double backend_cpu_us_per_io;
	/*
	 * The daemon's system calls and voluntary context switches (sleeps)
	 * per request, counted (tools/bench/syscount.h); NaN for the arms
	 * without a daemon, and system calls where perf cannot count them.
	 */
	double syscalls_per_io, switches_per_io;
	double guest_cpu_us_per_io;
	/*
	 * Mean time a request to the images' block device took there (its
	 * read and write ticks over its requests, /sys/dev/block): for raw
	 * and blkbackd the device's share of the latency; NaN without one.
	 */
	double device_us_per_io;
	/*
	 * p50 minus raw's p50 in the same repeat, job and N; NaN for raw
	 * and the floor, and below zero (the arm was faster than raw: it
	 * added nothing that can be measured).
	 */
	double p50_added_us;
	/*
	 * A daemon arm's p50 minus raw's and the floor arm's, in the same
	 * repeat, job and N: what serving real I/O adds to the transport's
	 * and the I/O's own time. NaN for the others, without both, or
	 * below zero (noise).
	 */
	double p50_over_floor_us;
	uint64_t ops, bytes;
	double cached_before_mib, cached_at_start_mib;
	/*
	 * Percent of all CPUs over the run; busy and others NaN where they
	 * do not stand above what /proc/stat's ticks resolve (cpu.h).
	 */
	double host_busy_pct, host_steal_pct, host_others_pct;
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
	/* The spread of the repeats: each number's minimum and maximum. */
	struct bench_sample lo, hi;
};

#define BENCH_MAX_IDLE_STEPS 8
#define BENCH_MAX_IDLE_GUESTS 4000u

struct bench_config {
	unsigned int guests[128];
	unsigned int nr_guests;
	unsigned int idle[BENCH_MAX_IDLE_STEPS]; /* idle guest counts, sorted */
	unsigned int nr_idle;
	enum bench_job_kind jobs[BENCH_NR_JOBS];
	unsigned int nr_jobs;
	enum bench_arm arms[BENCH_NR_ARMS];
	unsigned int nr_arms;
	uint64_t size; /* I/O bytes per guest per job */
	uint64_t image_size;
	double time_limit;
	double min_time; /* seconds each guest's job lasts at least */
	unsigned int repeat;
	unsigned int warmup; /* unmeasured passes before the first repeat */
	uint64_t seed;
	const char *blkbackd;
	const char *xensim_host;
	const char *ceph_cluster; /* tools/ceph/ceph-cluster, for rbd */
	const char *dir;
};

/* What --idle-guests measured for one count of idle guests (idle.h). */
struct idle_figures {
	unsigned int guests;
	int error; /* 0, or -errno with @note saying why */
	char note[256];
	double plug_seconds; /* toolstack: domains made, disks plugged */
	double connect_seconds; /* frontends: every handshake to Connected */
	double attach_seconds; /* both: the time to attach them all */
	double detach_seconds; /* NaN until detached */
	struct proc_usage daemon_before; /* with no idle guest attached */
	struct proc_usage daemon, server, xenstored; /* with them attached */
	bool have_xenstored;
};

/* The targets for many idle guests, judged at every count. */
#define IDLE_RSS_TARGET_MIB 200.0
#define IDLE_ATTACH_TARGET_S 30.0

struct bench_results {
	const struct bench_config *cfg;
	struct bench_cell *cells; /* jobs x arms x guests, in that order */
	unsigned int nr_cells;
	struct idle_figures idle[BENCH_MAX_IDLE_STEPS]; /* cfg->nr_idle */
	struct handoff_figures handoff; /* measured before the jobs */
};

/*
 * The numbers of a sample by name, for the CSV and JSON writers: the key
 * they are written under, where the double sits in struct bench_sample,
 * and the digits worth printing.
 */
struct bench_metric {
	const char *key;
	size_t offset;
	int decimals;
};

extern const struct bench_metric bench_metrics[];
extern const unsigned int bench_nr_metrics;

static inline double bench_metric_value(const struct bench_sample *s,
					const struct bench_metric *m)
{
	return *(const double *)((const char *)s + m->offset);
}

const char *bench_arm_name(enum bench_arm arm);
bool bench_config_has_arm(const struct bench_config *cfg, enum bench_arm arm);
int bench_arm_lookup(const char *name, enum bench_arm *arm);
const char *bench_cpu_method_name(enum bench_cpu_method m);

struct bench_cell *bench_cell_find(const struct bench_results *r,
				   enum bench_job_kind job, enum bench_arm arm,
				   unsigned int n);
/*
 * Fill every ok cell's median, lo and hi from its samples, after pairing
 * each sample with raw's sample of the same repeat (p50_added_us).
 */
int bench_results_summarise(struct bench_results *r);

/* The targets, evaluated per job from one run's cells. */
struct bench_target {
	enum bench_job_kind job;
	char name[48]; /* stable key for JSON */
	char label[96]; /* for people */
	double value, threshold; /* threshold NAN: for information only */
	double lo, hi; /* the value's spread over the repeats */
	bool at_least; /* value >= threshold passes, else <= */
	bool available;
	bool pass;
};

/* Four for blkbackd, the NBD and RBD ratios, qd1read's latency. */
#define BENCH_MAX_TARGETS 7

/* Up to BENCH_MAX_TARGETS targets of @job into @out; returns how many. */
unsigned int bench_targets(const struct bench_results *r,
			   enum bench_job_kind job, struct bench_target *out);

#endif /* BENCH_RESULTS_H */

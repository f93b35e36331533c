// SPDX-License-Identifier: MIT
#include "tools/bench/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const arm_names[BENCH_NR_ARMS] = {
	[BENCH_ARM_RAW] = "raw",	   [BENCH_ARM_LOOP] = "loop",
	[BENCH_ARM_LOOP_DIO] = "loop-dio", [BENCH_ARM_BLKBACKD] = "blkbackd",
	[BENCH_ARM_NBD] = "nbd",	   [BENCH_ARM_RBD] = "rbd",
	[BENCH_ARM_FLOOR] = "floor",
};

#define METRIC(key, field, decimals)                                \
	{                                                           \
		key, offsetof(struct bench_sample, field), decimals \
	}

const struct bench_metric bench_metrics[] = {
	METRIC("wall_seconds", wall_seconds, 6),
	METRIC("fairness", fairness, 4),
	METRIC("aggregate_mbps", mbps, 2),
	METRIC("aggregate_iops", iops, 1),
	METRIC("latency_p50_us", p50_us, 1),
	METRIC("latency_p99_us", p99_us, 1),
	METRIC("backend_cpu_us_per_io", backend_cpu_us_per_io, 3),
	METRIC("guest_cpu_us_per_io", guest_cpu_us_per_io, 3),
	METRIC("latency_p50_added_over_raw_us", p50_added_us, 1),
	METRIC("image_cache_before_eviction_mib", cached_before_mib, 1),
	METRIC("image_cache_at_start_mib", cached_at_start_mib, 1),
	METRIC("host_busy_pct", host_busy_pct, 1),
	METRIC("host_steal_pct", host_steal_pct, 1),
	METRIC("host_others_pct", host_others_pct, 1),
	METRIC("device_us_per_io", device_us_per_io, 1),
	METRIC("syscalls_per_io", syscalls_per_io, 2),
	METRIC("voluntary_switches_per_io", switches_per_io, 2),
	METRIC("latency_p50_added_over_raw_and_floor_us", p50_over_floor_us, 1),
};

const unsigned int bench_nr_metrics =
	sizeof(bench_metrics) / sizeof(bench_metrics[0]);

const char *bench_arm_name(enum bench_arm arm)
{
	return arm < BENCH_NR_ARMS ? arm_names[arm] : "?";
}

bool bench_config_has_arm(const struct bench_config *cfg, enum bench_arm arm)
{
	for (unsigned int a = 0; a < cfg->nr_arms; a++)
		if (cfg->arms[a] == arm)
			return true;
	return false;
}

int bench_arm_lookup(const char *name, enum bench_arm *arm)
{
	for (int a = 0; a < BENCH_NR_ARMS; a++) {
		if (!strcmp(name, arm_names[a])) {
			*arm = (enum bench_arm)a;
			return 0;
		}
	}
	return -EINVAL;
}

const char *bench_cpu_method_name(enum bench_cpu_method m)
{
	switch (m) {
	case BENCH_CPU_DAEMON:
		return "daemon-proc-pid-stat";
	case BENCH_CPU_HOST_MINUS_GUESTS:
		return "host-busy-minus-guests";
	default:
		return "none";
	}
}

struct bench_cell *bench_cell_find(const struct bench_results *r,
				   enum bench_job_kind job, enum bench_arm arm,
				   unsigned int n)
{
	for (unsigned int i = 0; i < r->nr_cells; i++) {
		struct bench_cell *c = &r->cells[i];

		if (c->job == job && c->arm == arm && c->n == n)
			return c;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

typedef double (*sample_getter)(const struct bench_sample *, unsigned int);

/*
 * The median, minimum and maximum of the value @get picks from each
 * sample; NaN when the samples have none (an arm without that number).
 */
static void stats_of(const struct bench_cell *c, sample_getter get,
		     unsigned int arg, double *med, double *lo, double *hi)
{
	double v[BENCH_MAX_REPEAT];
	unsigned int n = 0;

	for (unsigned int i = 0; i < c->nr_samples; i++) {
		double x = get(&c->samples[i], arg);

		if (!isnan(x))
			v[n++] = x;
	}
	if (!n) {
		*med = *lo = *hi = NAN;
		return;
	}
	qsort(v, n, sizeof(v[0]), cmp_double);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

#define GETTER(field)                                           \
	static double get_##field(const struct bench_sample *s, \
				  unsigned int unused)          \
	{                                                       \
		(void)unused;                                   \
		return (double)s->field;                        \
	}
GETTER(wall_seconds)
GETTER(fairness)
GETTER(mbps)
GETTER(iops)
GETTER(p50_us)
GETTER(p99_us)
GETTER(backend_cpu_us_per_io)
GETTER(guest_cpu_us_per_io)
GETTER(device_us_per_io)
GETTER(syscalls_per_io)
GETTER(switches_per_io)
GETTER(p50_over_floor_us)
GETTER(p50_added_us)
GETTER(ops)
GETTER(bytes)
GETTER(cached_before_mib)
GETTER(cached_at_start_mib)
GETTER(host_busy_pct)
GETTER(host_steal_pct)
GETTER(host_others_pct)

static double get_guest(const struct bench_sample *s, unsigned int g)
{
	return s->guest_seconds[g];
}

#define SUMMARISE(c, field)                                             \
	stats_of(c, get_##field, 0, &(c)->median.field, &(c)->lo.field, \
		 &(c)->hi.field)

static int summarise_cell(struct bench_cell *c)
{
	struct bench_sample *m = &c->median;
	double ops, bytes, lo, hi;

	if (!c->nr_samples)
		return -ENOENT;
	free(m->guest_seconds);
	m->guest_seconds = calloc(c->n, sizeof(double));
	if (!m->guest_seconds)
		return -ENOMEM;
	for (unsigned int g = 0; g < c->n; g++)
		stats_of(c, get_guest, g, &m->guest_seconds[g], &lo, &hi);
	SUMMARISE(c, wall_seconds);
	SUMMARISE(c, fairness);
	SUMMARISE(c, mbps);
	SUMMARISE(c, iops);
	SUMMARISE(c, p50_us);
	SUMMARISE(c, p99_us);
	SUMMARISE(c, backend_cpu_us_per_io);
	SUMMARISE(c, guest_cpu_us_per_io);
	SUMMARISE(c, device_us_per_io);
	SUMMARISE(c, syscalls_per_io);
	SUMMARISE(c, switches_per_io);
	SUMMARISE(c, p50_over_floor_us);
	SUMMARISE(c, p50_added_us);
	SUMMARISE(c, cached_before_mib);
	SUMMARISE(c, cached_at_start_mib);
	SUMMARISE(c, host_busy_pct);
	SUMMARISE(c, host_steal_pct);
	SUMMARISE(c, host_others_pct);
	stats_of(c, get_ops, 0, &ops, &lo, &hi);
	m->ops = (uint64_t)ops;
	stats_of(c, get_bytes, 0, &bytes, &lo, &hi);
	m->bytes = (uint64_t)bytes;
	return 0;
}

/*
 * Repeat i of every arm ran in the same round (the arms are interleaved),
 * so pairing samples by index compares runs that shared the host's state.
 */
static bool pairs_with(const struct bench_cell *c,
		       const struct bench_cell *other)
{
	return other && other->status == BENCH_CELL_OK &&
	       other->nr_samples == c->nr_samples;
}

/*
 * The floor arm is no I/O path, so nothing it does is added over raw's;
 * the other daemon arms are measured against both. A repeat in which an
 * arm came out faster than raw (the loop arm's page cache, the host's
 * noise), or a daemon arm faster than raw and the floor together,
 * measured no added latency, and a negative one is none: it counts as not
 * measured, and the median is of the repeats that measured one.
 */
static void pair_with_raw(struct bench_cell *c, const struct bench_cell *raw,
			  const struct bench_cell *floor)
{
	bool paired = c->arm != BENCH_ARM_RAW && c->arm != BENCH_ARM_FLOOR &&
		      pairs_with(c, raw);
	bool floored = paired && c->cpu_method == BENCH_CPU_DAEMON &&
		       pairs_with(c, floor);

	for (unsigned int i = 0; i < c->nr_samples; i++) {
		struct bench_sample *s = &c->samples[i];

		s->p50_added_us = paired ? s->p50_us - raw->samples[i].p50_us
					 : NAN;
		s->p50_over_floor_us =
			floored ? s->p50_added_us - floor->samples[i].p50_us
				: NAN;
		/* Below zero it is not a latency. */
		if (s->p50_added_us < 0)
			s->p50_added_us = NAN;
		if (s->p50_over_floor_us < 0)
			s->p50_over_floor_us = NAN;
	}
}

int bench_results_summarise(struct bench_results *r)
{
	int first = 0;

	for (unsigned int i = 0; i < r->nr_cells; i++) {
		struct bench_cell *c = &r->cells[i];
		int ret;

		if (c->status != BENCH_CELL_OK)
			continue;
		pair_with_raw(
			c, bench_cell_find(r, c->job, BENCH_ARM_RAW, c->n),
			bench_cell_find(r, c->job, BENCH_ARM_FLOOR, c->n));
		ret = summarise_cell(c);
		first = first ? first : ret;
	}
	return first;
}

static const struct bench_cell *ok_cell(const struct bench_results *r,
					enum bench_job_kind job,
					enum bench_arm arm, unsigned int n)
{
	const struct bench_cell *c = bench_cell_find(r, job, arm, n);

	return c && c->status == BENCH_CELL_OK ? c : NULL;
}

/* N=10 as in the issue when it was run, else the largest N. */
static unsigned int big_n(const struct bench_config *cfg)
{
	unsigned int big = 0;

	for (unsigned int i = 0; i < cfg->nr_guests; i++) {
		if (cfg->guests[i] == 10)
			return 10;
		if (cfg->guests[i] > big)
			big = cfg->guests[i];
	}
	return big;
}

static void init_target(struct bench_target *t, enum bench_job_kind job,
			const char *name, const char *label, bool at_least,
			double threshold)
{
	*t = (struct bench_target){ .job = job,
				    .threshold = threshold,
				    .at_least = at_least,
				    .value = NAN,
				    .lo = NAN,
				    .hi = NAN };
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->label, sizeof(t->label), "%s", label);
}

static void judge(struct bench_target *t, double value, double lo, double hi)
{
	t->available = !isnan(value);
	t->value = value;
	t->lo = lo;
	t->hi = hi;
	if (t->available && !isnan(t->threshold))
		t->pass = t->at_least ? value >= t->threshold
				      : value <= t->threshold;
}

/*
 * a's aggregate over b's, paired repeat by repeat (the two ran in the same
 * round); the median of the ratios and their spread.
 */
static void throughput_ratio(struct bench_target *t, const struct bench_cell *a,
			     const struct bench_cell *b)
{
	double v[BENCH_MAX_REPEAT];
	unsigned int n = 0;

	if (!a || !b || a->nr_samples != b->nr_samples)
		return;
	for (unsigned int i = 0; i < a->nr_samples; i++)
		if (b->samples[i].mbps > 0)
			v[n++] = a->samples[i].mbps / b->samples[i].mbps;
	if (!n)
		return;
	qsort(v, n, sizeof(v[0]), cmp_double);
	judge(t, n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0],
	      v[n - 1]);
}

/*
 * When @arm ran, what its image store costs: its aggregate at N=@n against
 * the file arm's (@file), into @out, for information. Returns the targets
 * stored (0 or 1).
 */
static unsigned int store_ratio(const struct bench_results *r,
				enum bench_job_kind job, enum bench_arm arm,
				unsigned int n, const struct bench_cell *file,
				struct bench_target *out)
{
	char name[32], label[96];

	if (!bench_config_has_arm(r->cfg, arm))
		return 0;
	snprintf(name, sizeof(name), "%s_vs_file", bench_arm_name(arm));
	snprintf(label, sizeof(label), "%s / blkbackd (file) aggregate at N=%u",
		 bench_arm_name(arm), n);
	init_target(out, job, name, label, true, NAN);
	throughput_ratio(out, ok_cell(r, job, arm, n), file);
	return 1;
}

unsigned int bench_targets(const struct bench_results *r,
			   enum bench_job_kind job, struct bench_target *out)
{
	unsigned int n = big_n(r->cfg), small = r->cfg->guests[0];
	const struct bench_cell *bb = ok_cell(r, job, BENCH_ARM_BLKBACKD, n);
	unsigned int nr;
	char label[96];

	snprintf(label, sizeof(label), "blkbackd / raw aggregate at N=%u", n);
	init_target(&out[0], job, "blkbackd_vs_raw", label, true, 0.90);
	throughput_ratio(&out[0], bb, ok_cell(r, job, BENCH_ARM_RAW, n));
	snprintf(label, sizeof(label), "blkbackd / loop aggregate at N=%u", n);
	/* The issue's: faster than loop on every job, by 1.2 on build. */
	init_target(&out[1], job, "blkbackd_vs_loop", label, true,
		    job == BENCH_JOB_BUILD ? 1.2 : 1.0);
	throughput_ratio(&out[1], bb, ok_cell(r, job, BENCH_ARM_LOOP, n));
	snprintf(label, sizeof(label), "blkbackd max/min guest time at N=%u",
		 n);
	init_target(&out[2], job, "blkbackd_fairness", label, false, 1.10);
	if (bb)
		judge(&out[2], bb->median.fairness, bb->lo.fairness,
		      bb->hi.fairness);
	snprintf(label, sizeof(label), "blkbackd aggregate N=%u / N=1", n);
	init_target(&out[3], job, "blkbackd_scaling", label, true, 0.95);
	throughput_ratio(&out[3], bb, ok_cell(r, job, BENCH_ARM_BLKBACKD, 1));
	nr = 4;
	nr += store_ratio(r, job, BENCH_ARM_NBD, n, bb, &out[nr]);
	nr += store_ratio(r, job, BENCH_ARM_RBD, n, bb, &out[nr]);
	if (job != BENCH_JOB_QD1READ)
		return nr;
	/* The smallest N: one guest, when it was run, as in the issue. */
	bb = ok_cell(r, job, BENCH_ARM_BLKBACKD, small);
	snprintf(label, sizeof(label),
		 "blkbackd p50 latency added over raw + floor at N=%u, us",
		 small);
	init_target(&out[nr], job, "blkbackd_p50_added_over_raw_and_floor_us",
		    label, false, 2);
	if (bb)
		judge(&out[nr], bb->median.p50_over_floor_us,
		      bb->lo.p50_over_floor_us, bb->hi.p50_over_floor_us);
	return nr + 1;
}

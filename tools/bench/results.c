// SPDX-License-Identifier: MIT
#include "tools/bench/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const arm_names[BENCH_NR_ARMS] = {
	[BENCH_ARM_RAW] = "raw",
	[BENCH_ARM_LOOP] = "loop",
	[BENCH_ARM_LOOP_DIO] = "loop-dio",
	[BENCH_ARM_BLKBACKD] = "blkbackd",
};

const char *bench_arm_name(enum bench_arm arm)
{
	return arm < BENCH_NR_ARMS ? arm_names[arm] : "?";
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

/* Median of @n values picked by @get; NaN stays NaN. */
static double median_of(const struct bench_cell *c,
			double (*get)(const struct bench_sample *,
				      unsigned int),
			unsigned int arg)
{
	double v[BENCH_MAX_REPEAT];
	unsigned int n = c->nr_samples;

	for (unsigned int i = 0; i < n; i++)
		v[i] = get(&c->samples[i], arg);
	if (!n)
		return NAN;
	if (isnan(v[0]))
		return NAN;
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
GETTER(ops)
GETTER(bytes)

static double get_guest(const struct bench_sample *s, unsigned int g)
{
	return s->guest_seconds[g];
}

int bench_cell_summarise(struct bench_cell *c)
{
	struct bench_sample *m = &c->median;

	if (!c->nr_samples)
		return -ENOENT;
	free(m->guest_seconds);
	m->guest_seconds = calloc(c->n, sizeof(double));
	if (!m->guest_seconds)
		return -ENOMEM;
	for (unsigned int g = 0; g < c->n; g++)
		m->guest_seconds[g] = median_of(c, get_guest, g);
	m->wall_seconds = median_of(c, get_wall_seconds, 0);
	m->fairness = median_of(c, get_fairness, 0);
	m->mbps = median_of(c, get_mbps, 0);
	m->iops = median_of(c, get_iops, 0);
	m->p50_us = median_of(c, get_p50_us, 0);
	m->p99_us = median_of(c, get_p99_us, 0);
	m->backend_cpu_us_per_io = median_of(c, get_backend_cpu_us_per_io, 0);
	m->guest_cpu_us_per_io = median_of(c, get_guest_cpu_us_per_io, 0);
	m->ops = (uint64_t)median_of(c, get_ops, 0);
	m->bytes = (uint64_t)median_of(c, get_bytes, 0);
	return 0;
}

static const struct bench_sample *ok_median(const struct bench_results *r,
					    enum bench_job_kind job,
					    enum bench_arm arm, unsigned int n)
{
	const struct bench_cell *c = bench_cell_find(r, job, arm, n);

	return c && c->status == BENCH_CELL_OK ? &c->median : NULL;
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

static void set_target(struct bench_target *t, enum bench_job_kind job,
		       const char *name, const char *label, bool at_least,
		       double threshold, const struct bench_sample *a,
		       const struct bench_sample *b, bool fairness)
{
	*t = (struct bench_target){ .job = job,
				    .threshold = threshold,
				    .at_least = at_least };
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->label, sizeof(t->label), "%s", label);
	if (fairness && a) {
		t->value = a->fairness;
		t->available = true;
	} else if (a && b && b->mbps > 0) {
		t->value = a->mbps / b->mbps;
		t->available = true;
	}
	if (t->available)
		t->pass = at_least ? t->value >= threshold
				   : t->value <= threshold;
}

unsigned int bench_targets(const struct bench_results *r,
			   enum bench_job_kind job, struct bench_target *out)
{
	unsigned int n = big_n(r->cfg);
	const struct bench_sample *bb =
		ok_median(r, job, BENCH_ARM_BLKBACKD, n);
	char label[96];

	snprintf(label, sizeof(label), "blkbackd / raw aggregate at N=%u", n);
	set_target(&out[0], job, "blkbackd_vs_raw", label, true, 0.90, bb,
		   ok_median(r, job, BENCH_ARM_RAW, n), false);
	snprintf(label, sizeof(label), "blkbackd / loop aggregate at N=%u", n);
	set_target(&out[1], job, "blkbackd_vs_loop", label, true, 2.0, bb,
		   ok_median(r, job, BENCH_ARM_LOOP, n), false);
	snprintf(label, sizeof(label), "blkbackd max/min guest time at N=%u",
		 n);
	set_target(&out[2], job, "blkbackd_fairness", label, false, 1.10, bb,
		   NULL, true);
	snprintf(label, sizeof(label), "blkbackd aggregate N=%u / N=1", n);
	set_target(&out[3], job, "blkbackd_scaling", label, true, 0.95, bb,
		   ok_median(r, job, BENCH_ARM_BLKBACKD, 1), false);
	return 4;
}

// SPDX-License-Identifier: MIT
#include "tools/bench/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *status_name(enum bench_cell_status s)
{
	switch (s) {
	case BENCH_CELL_OK:
		return "ok";
	case BENCH_CELL_SKIPPED:
		return "skipped";
	case BENCH_CELL_FAILED:
		return "failed";
	default:
		return "not-run";
	}
}

static void guest_range(const struct bench_cell *c, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = 0;
	for (unsigned int g = 0; g < c->n; g++) {
		double s = c->median.guest_seconds[g];

		*lo = s < *lo ? s : *lo;
		*hi = s > *hi ? s : *hi;
	}
}

static void table_row(FILE *f, const struct bench_cell *c)
{
	const struct bench_sample *m = &c->median;
	double lo, hi;
	char cpu[16];

	if (c->status != BENCH_CELL_OK) {
		fprintf(f, "%5u  %-9s %s: %s\n", c->n, bench_arm_name(c->arm),
			status_name(c->status), c->note);
		return;
	}
	guest_range(c, &lo, &hi);
	if (isnan(m->backend_cpu_us_per_io))
		snprintf(cpu, sizeof(cpu), "n/a");
	else
		snprintf(cpu, sizeof(cpu), "%.1f%s", m->backend_cpu_us_per_io,
			 c->cpu_method == BENCH_CPU_HOST_MINUS_GUESTS ? "*"
								      : "");
	fprintf(f, "%5u  %-9s %8.2f-%-8.2f %7.3f %9.1f %9.0f %9.0f %9.0f %9s\n",
		c->n, bench_arm_name(c->arm), lo, hi, m->fairness, m->mbps,
		m->iops, m->p50_us, m->p99_us, cpu);
}

static void table_targets(FILE *f, const struct bench_results *r,
			  enum bench_job_kind job)
{
	struct bench_target t[4];
	unsigned int n = bench_targets(r, job, t);

	for (unsigned int i = 0; i < n; i++) {
		if (!t[i].available) {
			fprintf(f, "  target %-42s   n/a (arm or N not run)\n",
				t[i].label);
			continue;
		}
		fprintf(f, "  target %-42s %6.2f %s %.2f  %s\n", t[i].label,
			t[i].value, t[i].at_least ? ">=" : "<=", t[i].threshold,
			t[i].pass ? "PASS" : "MISS");
	}
}

void report_table(FILE *f, const struct bench_results *r)
{
	const struct bench_config *cfg = r->cfg;

	for (unsigned int j = 0; j < cfg->nr_jobs; j++) {
		enum bench_job_kind job = cfg->jobs[j];

		fprintf(f, "\n%s: %s\n", bench_job_name(job),
			bench_job_summary(job));
		fprintf(f, "%5s  %-9s %17s %7s %9s %9s %9s %9s %9s\n", "N",
			"arm", "guest s (min-max)", "max/min", "MB/s", "IOPS",
			"p50 us", "p99 us", "cpu us/io");
		for (unsigned int g = 0; g < cfg->nr_guests; g++)
			for (unsigned int a = 0; a < cfg->nr_arms; a++)
				table_row(f,
					  bench_cell_find(r, job, cfg->arms[a],
							  cfg->guests[g]));
		table_targets(f, r, job);
	}
	fprintf(f,
		"\ncpu us/io: the backend's CPU per I/O: blkbackd = the daemon "
		"process (/proc/PID/stat);\n* loop = host busy CPU "
		"(/proc/stat) minus the guests' own, which includes anything "
		"else\n  running on the host; raw has no backend.  "
		"Medians of %u run(s).\n",
		cfg->repeat);
}

static FILE *open_output(const char *path)
{
	return strcmp(path, "-") ? fopen(path, "w") : stdout;
}

static int close_output(FILE *f)
{
	int bad = ferror(f);

	if (f == stdout)
		return fflush(f) || bad ? -EIO : 0;
	return fclose(f) || bad ? -EIO : 0;
}

/* ",value" with @decimals digits after the point, or "," for n/a. */
static void csv_number(FILE *f, double v, int decimals)
{
	fputc(',', f);
	if (!isnan(v))
		fprintf(f, "%.*f", decimals, v);
}

int report_csv(const char *path, const struct bench_results *r)
{
	FILE *f = open_output(path);

	if (!f)
		return -errno;
	fprintf(f, "job,arm,guests,status,wall_seconds,guest_seconds,"
		   "fairness,aggregate_mbps,aggregate_iops,latency_p50_us,"
		   "latency_p99_us,backend_cpu_us_per_io,cpu_method,"
		   "guest_cpu_us_per_io,ops,bytes,repeats\n");
	for (unsigned int i = 0; i < r->nr_cells; i++) {
		const struct bench_cell *c = &r->cells[i];
		const struct bench_sample *m = &c->median;
		bool ok = c->status == BENCH_CELL_OK;

		fprintf(f, "%s,%s,%u,%s", bench_job_name(c->job),
			bench_arm_name(c->arm), c->n, status_name(c->status));
		if (!ok) {
			fprintf(f, ",,,,,,,,,%s,,,,%u\n",
				bench_cpu_method_name(c->cpu_method),
				c->nr_samples);
			continue;
		}
		csv_number(f, m->wall_seconds, 4);
		fputc(',', f);
		for (unsigned int g = 0; g < c->n; g++)
			fprintf(f, "%s%.4f", g ? ";" : "", m->guest_seconds[g]);
		csv_number(f, m->fairness, 4);
		csv_number(f, m->mbps, 2);
		csv_number(f, m->iops, 1);
		csv_number(f, m->p50_us, 1);
		csv_number(f, m->p99_us, 1);
		csv_number(f, m->backend_cpu_us_per_io, 3);
		fprintf(f, ",%s", bench_cpu_method_name(c->cpu_method));
		csv_number(f, m->guest_cpu_us_per_io, 3);
		fprintf(f, ",%llu,%llu,%u\n", (unsigned long long)m->ops,
			(unsigned long long)m->bytes, c->nr_samples);
	}
	return close_output(f);
}

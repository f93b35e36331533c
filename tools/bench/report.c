// SPDX-License-Identifier: MIT
#include "tools/bench/report.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/format.h"

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

#define COL_W 12

/*
 * A number, or "n/a" where none was measured; loop's CPU figure carries a
 * '*'. At least @decimals, more for a small value (format.h).
 */
static void format_value(char *buf, size_t len, double v, int decimals,
			 const char *mark)
{
	bench_format(buf, len, v, decimals, mark, "n/a");
}

/* Both ends with the decimals the lower one needs. */
static void format_range(char *buf, size_t len, double lo, double hi,
			 int decimals)
{
	int d = bench_decimals(lo, decimals);

	if (isnan(lo))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.*f-%.*f", d, lo, d, hi);
}

struct column {
	size_t offset; /* of the double in struct bench_sample */
	int decimals;
};

static const struct column columns[] = {
	{ offsetof(struct bench_sample, fairness), 3 },
	{ offsetof(struct bench_sample, mbps), 1 },
	{ offsetof(struct bench_sample, iops), 0 },
	{ offsetof(struct bench_sample, p50_us), 0 },
	{ offsetof(struct bench_sample, p50_added_us), 0 },
	{ offsetof(struct bench_sample, p99_us), 0 },
	{ offsetof(struct bench_sample, device_us_per_io), 0 },
	{ offsetof(struct bench_sample, backend_cpu_us_per_io), 1 },
};

static double field(const struct bench_sample *s, const struct column *col)
{
	return *(const double *)((const char *)s + col->offset);
}

/* The medians; with repeats, a second line with each one's min-max. */
static void table_row(FILE *f, const struct bench_cell *c, bool spread)
{
	const char *mark = c->cpu_method == BENCH_CPU_HOST_MINUS_GUESTS ? "*"
									: "";
	size_t nr = sizeof(columns) / sizeof(columns[0]);
	double lo, hi;
	char text[40];

	if (c->status != BENCH_CELL_OK) {
		fprintf(f, "%5u  %-9s %s: %s\n", c->n, bench_arm_name(c->arm),
			status_name(c->status), c->note);
		return;
	}
	guest_range(c, &lo, &hi);
	format_range(text, sizeof(text), lo, hi, 2);
	fprintf(f, "%5u  %-9s %17s", c->n, bench_arm_name(c->arm), text);
	for (size_t i = 0; i < nr; i++) {
		format_value(text, sizeof(text), field(&c->median, &columns[i]),
			     columns[i].decimals, i == nr - 1 ? mark : "");
		fprintf(f, " %*s", COL_W, text);
	}
	fputc('\n', f);
	if (!spread)
		return;
	fprintf(f, "%5s  %-9s %17s", "", "", "min-max");
	for (size_t i = 0; i < nr; i++) {
		format_range(text, sizeof(text), field(&c->lo, &columns[i]),
			     field(&c->hi, &columns[i]), columns[i].decimals);
		fprintf(f, " %*s", COL_W, text);
	}
	fputc('\n', f);
}

/*
 * What the daemon arms cost per request in the daemon itself, counted,
 * and what serving real I/O added over the floor; medians, with min-max.
 */
static void table_daemon(FILE *f, const struct bench_results *r,
			 enum bench_job_kind job)
{
	static const struct column cols[] = {
		{ offsetof(struct bench_sample, syscalls_per_io), 2 },
		{ offsetof(struct bench_sample, switches_per_io), 2 },
		{ offsetof(struct bench_sample, p50_over_floor_us), 1 },
	};
	const struct bench_config *cfg = r->cfg;
	bool header = false;

	for (unsigned int g = 0; g < cfg->nr_guests; g++)
		for (unsigned int a = 0; a < cfg->nr_arms; a++) {
			const struct bench_cell *c = bench_cell_find(
				r, job, cfg->arms[a], cfg->guests[g]);
			char text[96];

			if (!c || c->status != BENCH_CELL_OK ||
			    c->cpu_method != BENCH_CPU_DAEMON)
				continue;
			if (!header)
				fprintf(f,
					"  daemon, per request: %5s  %-9s "
					"%17s %17s %21s\n",
					"N", "arm", "system calls", "sleeps",
					"p50 +raw+floor us");
			header = true;
			fprintf(f, "  %20s %5u  %-9s", "", c->n,
				bench_arm_name(c->arm));
			for (size_t i = 0; i < 3; i++) {
				double v = field(&c->median, &cols[i]);

				format_value(text, sizeof(text), v,
					     cols[i].decimals, "");
				if (cfg->repeat > 1 && !isnan(v)) {
					size_t len = strlen(text);
					char range[40];

					format_range(range, sizeof(range),
						     field(&c->lo, &cols[i]),
						     field(&c->hi, &cols[i]),
						     cols[i].decimals);
					snprintf(text + len, sizeof(text) - len,
						 " (%s)", range);
				}
				fprintf(f, " %*s", i == 2 ? 21 : 17, text);
			}
			fputc('\n', f);
		}
}

static void table_targets(FILE *f, const struct bench_results *r,
			  enum bench_job_kind job)
{
	struct bench_target t[BENCH_MAX_TARGETS];
	unsigned int n = bench_targets(r, job, t);

	for (unsigned int i = 0; i < n; i++) {
		if (!t[i].available) {
			fprintf(f, "  target %-50s   n/a (arm or N not run)\n",
				t[i].label);
			continue;
		}
		if (isnan(t[i].threshold))
			fprintf(f, "  ratio  %-50s %6.2f", t[i].label,
				t[i].value);
		else
			fprintf(f, "  target %-50s %6.2f %s %.2f  %s",
				t[i].label, t[i].value,
				t[i].at_least ? ">=" : "<=", t[i].threshold,
				t[i].pass ? "PASS" : "MISS");
		if (r->cfg->repeat > 1)
			fprintf(f, "  (min-max %.2f-%.2f)", t[i].lo, t[i].hi);
		fputc('\n', f);
	}
}

/* "RSS MB / fds / threads" of @u. */
static void format_usage(char *buf, size_t len, const struct proc_usage *u)
{
	snprintf(buf, len, "%.1f / %u / %u", u->rss_mib * BENCH_MB_PER_MIB,
		 u->fds, u->threads);
}

static void table_idle(FILE *f, const struct bench_results *r)
{
	const struct bench_config *cfg = r->cfg;

	fprintf(f, "\nidle guests: attached to the one daemon, no I/O\n");
	fprintf(f, "%6s %9s %9s %9s  %-28s %-28s %s\n", "idle", "attach s",
		"plug s", "connect s", "daemon RSS MB/fds/threads",
		"(before: RSS/fds/threads)", "detach s");
	for (unsigned int i = 0; i < cfg->nr_idle; i++) {
		const struct idle_figures *g = &r->idle[i];
		char now[40], before[40], t[4][24];

		if (g->error < 0 && !(g->attach_seconds > 0)) {
			fprintf(f, "%6u failed: %s\n", g->guests, g->note);
			continue;
		}
		format_usage(now, sizeof(now), &g->daemon);
		format_usage(t[0], sizeof(t[0]), &g->daemon_before);
		snprintf(before, sizeof(before), "(%s)", t[0]);
		fprintf(f, "%6u %9s %9s %9s  %-28s %-28s %s\n", g->guests,
			bench_format(t[0], sizeof(t[0]), g->attach_seconds, 2,
				     "", "n/a"),
			bench_format(t[1], sizeof(t[1]), g->plug_seconds, 2, "",
				     "n/a"),
			bench_format(t[2], sizeof(t[2]), g->connect_seconds, 2,
				     "", "n/a"),
			now, before,
			bench_format(t[3], sizeof(t[3]), g->detach_seconds, 2,
				     "", "n/a"));
		fprintf(f,
			"  target daemon RSS with %u idle guests, MB %12.1f "
			"<= %.1f  %s\n",
			g->guests, g->daemon.rss_mib * BENCH_MB_PER_MIB,
			IDLE_RSS_TARGET_MIB * BENCH_MB_PER_MIB,
			g->daemon.rss_mib <= IDLE_RSS_TARGET_MIB ? "PASS"
								 : "MISS");
		fprintf(f,
			"  target attach of %u idle guests, s %18.*f <= %.0f  "
			"%s\n",
			g->guests, bench_decimals(g->attach_seconds, 2),
			g->attach_seconds, IDLE_ATTACH_TARGET_S,
			g->attach_seconds <= IDLE_ATTACH_TARGET_S ? "PASS"
								  : "MISS");
		if (g->error < 0)
			fprintf(f, "  (then: %s)\n", g->note);
	}
	fprintf(f, "The jobs above ran with %u idle guests attached.\n",
		cfg->nr_idle ? cfg->idle[cfg->nr_idle - 1] : 0);
}

/*
 * The floor under the latency blkbackd adds in the simulator: each of its
 * requests makes two hand-offs between threads that raw's do not.
 */
static void table_handoff(FILE *f, const struct handoff_figures *h)
{
	fprintf(f, "Host hand-off, a wake-up's round trip between two threads "
		   "(median of 2000):\n ");
	if (h->same_measured)
		fprintf(f, " %.1f us on CPU %d", h->same_cpu_us, h->cpu_a);
	if (h->cross_measured)
		fprintf(f, "%s %.1f us between CPUs %d and %d",
			h->same_measured ? "," : "", h->cross_cpu_us, h->cpu_a,
			h->cpu_b);
	if (h->note[0])
		fprintf(f, " (%s)", h->note);
	fprintf(f, ";\n  a blkbackd request makes two hand-offs (its event, "
		   "its answer) that raw's do not,\n  each about half a round "
		   "trip: which figure depends on where the scheduler put\n"
		   "  the guest and the daemon's worker "
		   "(docs/performance.md).\n");
}

void report_table(FILE *f, const struct bench_results *r)
{
	const struct bench_config *cfg = r->cfg;
	bool spread = cfg->repeat > 1;

	for (unsigned int j = 0; j < cfg->nr_jobs; j++) {
		enum bench_job_kind job = cfg->jobs[j];

		fprintf(f, "\n%s: %s\n", bench_job_name(job),
			bench_job_summary(job));
		fprintf(f, "%5s  %-9s %17s %*s %*s %*s %*s %*s %*s %*s %*s\n",
			"N", "arm", "guest s (min-max)", COL_W, "max/min",
			COL_W, "MB/s", COL_W, "IOPS", COL_W, "p50 us", COL_W,
			"p50 +raw us", COL_W, "p99 us", COL_W, "dev us/io",
			COL_W, "cpu us/io");
		for (unsigned int g = 0; g < cfg->nr_guests; g++)
			for (unsigned int a = 0; a < cfg->nr_arms; a++)
				table_row(f,
					  bench_cell_find(r, job, cfg->arms[a],
							  cfg->guests[g]),
					  spread);
		table_daemon(f, r, job);
		table_targets(f, r, job);
	}
	fprintf(f,
		"\nMB/s: 10^6 bytes per second; every amount here is in MB "
		"(10^6 bytes).\n"
		"n/a: not measured: the arm has no such figure, or no true one "
		"this run (an\n  arm faster than raw adds no latency; a CPU "
		"time below what its counters\n  resolve); see "
		"blkback-bench(1).\n"
		"p50 +raw us: the arm's p50 latency minus raw's, repeat by "
		"repeat (the added latency).\n"
		"dev us/io: the mean time a request to the images' block "
		"device took there\n  (/sys/dev/block/*/stat), whoever sent "
		"it: the device's share of the latency.\n"
		"cpu us/io: the backend's CPU per I/O: blkbackd = the daemon "
		"process (its CPU clock);\n* loop = host busy CPU "
		"(/proc/stat) minus the guests' own, which includes anything "
		"else\n  running on the host; raw has no backend.\n"
		"floor: blkbackd serving null images (no I/O): what the "
		"transport and the daemon\n  cost a request.\n"
		"daemon, per request: its system calls (perf, "
		"raw_syscalls:sys_enter) and voluntary\n  context switches "
		"(/proc/PID/task/*/status), counted over the run; p50 "
		"+raw+floor:\n  the p50 minus raw's and the floor's, repeat "
		"by repeat.\n"
		"Medians of %u run(s)%s; every run starts with its images out "
		"of the host page cache.\n",
		cfg->repeat, spread ? ", min-max below each" : "");
	if (cfg->nr_jobs)
		table_handoff(f, &r->handoff);
	if (cfg->nr_idle)
		table_idle(f, r);
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

/*
 * ",value" with at least @decimals digits after the point (more for a
 * small value, so that it does not read 0), or "," for n/a.
 */
static void csv_number(FILE *f, double v, int decimals)
{
	fputc(',', f);
	if (!isnan(v))
		fprintf(f, "%.*f", bench_decimals(v, decimals), v);
}

/* The original columns first, so that scripts reading them by position
 * keep working; the host figures and every number's min and max after. */
static const char *const csv_appended[] = {
	"latency_p50_added_over_raw_us",
	"image_cache_before_eviction_mib",
	"image_cache_at_start_mib",
	"host_busy_pct",
	"host_steal_pct",
	"host_others_pct",
	"device_us_per_io",
	"syscalls_per_io",
	"voluntary_switches_per_io",
	"latency_p50_added_over_raw_and_floor_us",
};
#define NR_APPENDED (sizeof(csv_appended) / sizeof(csv_appended[0]))

static const struct bench_metric *metric(const char *key)
{
	for (unsigned int i = 0; i < bench_nr_metrics; i++)
		if (!strcmp(bench_metrics[i].key, key))
			return &bench_metrics[i];
	return NULL;
}

static void csv_header(FILE *f)
{
	fprintf(f, "job,arm,guests,status,wall_seconds,guest_seconds,"
		   "fairness,aggregate_mbps,aggregate_iops,latency_p50_us,"
		   "latency_p99_us,backend_cpu_us_per_io,cpu_method,"
		   "guest_cpu_us_per_io,ops,bytes,repeats");
	for (size_t i = 0; i < NR_APPENDED; i++)
		fprintf(f, ",%s", csv_appended[i]);
	for (unsigned int i = 0; i < bench_nr_metrics; i++)
		fprintf(f, ",%s_min,%s_max", bench_metrics[i].key,
			bench_metrics[i].key);
	fputc('\n', f);
}

static void csv_spread(FILE *f, const struct bench_cell *c)
{
	for (size_t i = 0; i < NR_APPENDED; i++) {
		const struct bench_metric *m = metric(csv_appended[i]);

		csv_number(f, bench_metric_value(&c->median, m), m->decimals);
	}
	for (unsigned int i = 0; i < bench_nr_metrics; i++) {
		const struct bench_metric *m = &bench_metrics[i];

		csv_number(f, bench_metric_value(&c->lo, m), m->decimals);
		csv_number(f, bench_metric_value(&c->hi, m), m->decimals);
	}
}

int report_csv(const char *path, const struct bench_results *r)
{
	FILE *f = open_output(path);

	if (!f)
		return -errno;
	csv_header(f);
	for (unsigned int i = 0; i < r->nr_cells; i++) {
		const struct bench_cell *c = &r->cells[i];
		const struct bench_sample *m = &c->median;
		bool ok = c->status == BENCH_CELL_OK;

		fprintf(f, "%s,%s,%u,%s", bench_job_name(c->job),
			bench_arm_name(c->arm), c->n, status_name(c->status));
		if (!ok) {
			fprintf(f, ",,,,,,,,,%s,,,,%u",
				bench_cpu_method_name(c->cpu_method),
				c->nr_samples);
			for (size_t k = 0;
			     k < NR_APPENDED + 2 * bench_nr_metrics; k++)
				fputc(',', f);
			fputc('\n', f);
			continue;
		}
		/* Microseconds: a short job's time never reads 0. */
		csv_number(f, m->wall_seconds, 6);
		fputc(',', f);
		for (unsigned int g = 0; g < c->n; g++)
			fprintf(f, "%s%.6f", g ? ";" : "", m->guest_seconds[g]);
		csv_number(f, m->fairness, 4);
		csv_number(f, m->mbps, 2);
		csv_number(f, m->iops, 1);
		csv_number(f, m->p50_us, 1);
		csv_number(f, m->p99_us, 1);
		csv_number(f, m->backend_cpu_us_per_io, 3);
		fprintf(f, ",%s", bench_cpu_method_name(c->cpu_method));
		csv_number(f, m->guest_cpu_us_per_io, 3);
		fprintf(f, ",%llu,%llu,%u", (unsigned long long)m->ops,
			(unsigned long long)m->bytes, c->nr_samples);
		csv_spread(f, c);
		fputc('\n', f);
	}
	return close_output(f);
}

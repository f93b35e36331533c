// SPDX-License-Identifier: MIT
/*
 * The plot, as a hand-written SVG (no dependency): a title and the run's
 * parameters, then for each job, per-guest elapsed time (mean, with the
 * min-max spread as a bar) and aggregate throughput against N, one line
 * per arm, on axes with round ticks (axis.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/axis.h"
#include "tools/bench/report.h"

#define PANEL_W 380
#define PANEL_H 220
#define MARGIN_L 64
#define MARGIN_T 116 /* the title, the parameters, the legend */
#define ROW_H (PANEL_H + 90)
#define COL_W (PANEL_W + MARGIN_L + 40)

static const char *const arm_colour[BENCH_NR_ARMS] = {
	"#1f77b4", "#d62728", "#ff7f0e", "#2ca02c",
	"#9467bd", "#8c564b", "#7f7f7f",
};

typedef double (*metric_fn)(const struct bench_cell *c, int which);

/* which: 0 = value, -1 = low end of the spread, +1 = high end. */
static double guest_time(const struct bench_cell *c, int which)
{
	double lo = INFINITY, hi = 0, sum = 0;

	for (unsigned int g = 0; g < c->n; g++) {
		double s = c->median.guest_seconds[g];

		lo = s < lo ? s : lo;
		hi = s > hi ? s : hi;
		sum += s;
	}
	return which < 0 ? lo : which > 0 ? hi : sum / c->n;
}

static double throughput(const struct bench_cell *c, int which)
{
	(void)which;
	return c->median.mbps;
}

static double max_metric(const struct bench_results *r, enum bench_job_kind job,
			 metric_fn f)
{
	double top = 0;

	for (unsigned int i = 0; i < r->nr_cells; i++) {
		const struct bench_cell *c = &r->cells[i];
		double v;

		if (c->job != job || c->status != BENCH_CELL_OK)
			continue;
		v = f(c, 1);
		top = v > top ? v : top;
	}
	return top * 1.05; /* room above the highest point */
}

static void axes(FILE *f, const struct bench_config *cfg, int x0, int y0,
		 const struct axis *ax, const char *title, const char *unit)
{
	char label[32];

	fprintf(f,
		"<text x='%d' y='%d' class='t'>%s</text>\n"
		"<rect x='%d' y='%d' width='%d' height='%d' class='frame'/>\n",
		x0, y0 - 10, title, x0, y0, PANEL_W, PANEL_H);
	for (unsigned int i = 0; i <= ax->intervals; i++) {
		int y = y0 + PANEL_H - PANEL_H * (int)i / (int)ax->intervals;

		fprintf(f,
			"<line x1='%d' y1='%d' x2='%d' y2='%d' class='grid'/>"
			"<text x='%d' y='%d' class='yl'>%s</text>\n",
			x0, y, x0 + PANEL_W, y, x0 - 6, y + 4,
			axis_label(ax, i, label, sizeof(label)));
	}
	fprintf(f, "<text x='%d' y='%d' class='yl'>%s</text>\n", x0 - 6,
		y0 - 10, unit);
	for (unsigned int g = 0; g < cfg->nr_guests; g++) {
		int x = x0 + (int)((g + 0.5) * PANEL_W / cfg->nr_guests);

		fprintf(f, "<text x='%d' y='%d' class='xl'>%u</text>\n", x,
			y0 + PANEL_H + 16, cfg->guests[g]);
	}
	fprintf(f, "<text x='%d' y='%d' class='xl'>guests (N)</text>\n",
		x0 + PANEL_W / 2, y0 + PANEL_H + 34);
}

static void series(FILE *f, const struct bench_results *r,
		   enum bench_job_kind job, enum bench_arm arm, int x0, int y0,
		   double top, metric_fn metric, bool spread)
{
	const struct bench_config *cfg = r->cfg;
	bool pen_down = false;

	fprintf(f, "<path fill='none' stroke='%s' stroke-width='2' d='",
		arm_colour[arm]);
	for (unsigned int g = 0; g < cfg->nr_guests; g++) {
		const struct bench_cell *c =
			bench_cell_find(r, job, arm, cfg->guests[g]);
		double x = x0 + (g + 0.5) * PANEL_W / cfg->nr_guests;

		if (!c || c->status != BENCH_CELL_OK) {
			pen_down = false;
			continue;
		}
		fprintf(f, "%c%.1f,%.1f ", pen_down ? 'L' : 'M', x,
			y0 + PANEL_H - metric(c, 0) / top * PANEL_H);
		pen_down = true;
	}
	fprintf(f, "'/>\n");
	for (unsigned int g = 0; g < cfg->nr_guests; g++) {
		const struct bench_cell *c =
			bench_cell_find(r, job, arm, cfg->guests[g]);
		double x = x0 + (g + 0.5) * PANEL_W / cfg->nr_guests;

		if (!c || c->status != BENCH_CELL_OK)
			continue;
		fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", x,
			y0 + PANEL_H - metric(c, 0) / top * PANEL_H,
			arm_colour[arm]);
		if (spread)
			fprintf(f,
				"<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
				"stroke='%s'/>\n",
				x, y0 + PANEL_H - metric(c, -1) / top * PANEL_H,
				x, y0 + PANEL_H - metric(c, 1) / top * PANEL_H,
				arm_colour[arm]);
	}
}

/* A size as --size takes it: whole MiB as M, else bytes. */
static void option_size(FILE *f, const char *name, uint64_t bytes)
{
	if (bytes % (1u << 20))
		fprintf(f, " %s %llu", name, (unsigned long long)bytes);
	else
		fprintf(f, " %s %lluM", name,
			(unsigned long long)(bytes >> 20));
}

/* @s as SVG text: the kernel's release is whatever its builder chose. */
static void text(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
}

/*
 * What was measured, and with which parameters: the options that run it
 * again (file names left out), and the host it ran on.
 */
static void heading(FILE *f, const struct bench_config *cfg)
{
	time_t now = time(NULL);
	struct utsname u;
	char when[32];

	fprintf(f,
		"<text x='%d' y='22' class='h'>blkback-bench: per-guest time "
		"and aggregate throughput of N concurrent guests</text>\n"
		"<text x='%d' y='42' class='t'>run: --guests",
		MARGIN_L, MARGIN_L);
	for (unsigned int i = 0; i < cfg->nr_guests; i++)
		fprintf(f, "%c%u", i ? ',' : ' ', cfg->guests[i]);
	fprintf(f, " --jobs%s", cfg->nr_jobs ? "" : " none");
	for (unsigned int i = 0; i < cfg->nr_jobs; i++)
		fprintf(f, "%c%s", i ? ',' : ' ', bench_job_name(cfg->jobs[i]));
	fprintf(f, " --arms");
	for (unsigned int i = 0; i < cfg->nr_arms; i++)
		fprintf(f, "%c%s", i ? ',' : ' ', bench_arm_name(cfg->arms[i]));
	fprintf(f, "</text>\n<text x='%d' y='58' class='t'>", MARGIN_L + 28);
	option_size(f, "--size", cfg->size);
	option_size(f, "--image-size", cfg->image_size);
	if (cfg->time_limit > 0)
		fprintf(f, " --time %g", cfg->time_limit);
	fprintf(f, " --min-time %g --repeat %u --warmup %u --seed %llu",
		cfg->min_time, cfg->repeat, cfg->warmup,
		(unsigned long long)cfg->seed);
	for (unsigned int i = 0; i < cfg->nr_idle; i++)
		fprintf(f, i ? ",%u" : " --idle-guests %u", cfg->idle[i]);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "</text>\n<text x='%d' y='74' class='t'>on %ld CPUs",
		MARGIN_L, sysconf(_SC_NPROCESSORS_ONLN));
	if (uname(&u) == 0) {
		fprintf(f, ", Linux ");
		text(f, u.release);
	}
	fprintf(f, ", %s; medians of %u run(s); MB = 10^6 bytes</text>\n", when,
		cfg->repeat);
}

static void legend(FILE *f, const struct bench_config *cfg)
{
	for (unsigned int a = 0; a < cfg->nr_arms; a++) {
		int x = MARGIN_L + 120 * (int)a;

		fprintf(f,
			"<rect x='%d' y='92' width='14' height='4' "
			"fill='%s'/><text x='%d' y='98' class='t'>%s</text>\n",
			x, arm_colour[cfg->arms[a]], x + 20,
			bench_arm_name(cfg->arms[a]));
	}
}

int report_svg(const char *path, const struct bench_results *r)
{
	const struct bench_config *cfg = r->cfg;
	int width = 2 * COL_W, height = MARGIN_T + ROW_H * (int)cfg->nr_jobs;
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return -errno;
	fprintf(f,
		"<?xml version='1.0' encoding='UTF-8'?>\n"
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
		"height='%d' viewBox='0 0 %d %d' font-family='sans-serif' "
		"font-size='12'>\n"
		"<style>.t{fill:#222}.frame{fill:none;stroke:#444}"
		".grid{stroke:#ddd}.yl{text-anchor:end;fill:#444}"
		".xl{text-anchor:middle;fill:#444}"
		".h{fill:#222;font-size:16px;font-weight:bold}</style>\n"
		"<rect width='100%%' height='100%%' fill='white'/>\n",
		width, height, width, height);
	heading(f, cfg);
	legend(f, cfg);
	for (unsigned int j = 0; j < cfg->nr_jobs; j++) {
		enum bench_job_kind job = cfg->jobs[j];
		int y0 = MARGIN_T + 24 + ROW_H * (int)j;
		struct axis ax_t, ax_m;
		char title[128];

		axis_choose(max_metric(r, job, guest_time), &ax_t);
		axis_choose(max_metric(r, job, throughput), &ax_m);

		snprintf(title, sizeof(title),
			 "%s: per-guest time (mean, min-max)",
			 bench_job_name(job));
		axes(f, cfg, MARGIN_L, y0, &ax_t, title, "s");
		snprintf(title, sizeof(title), "%s: aggregate throughput",
			 bench_job_name(job));
		axes(f, cfg, COL_W + MARGIN_L, y0, &ax_m, title, "MB/s");
		for (unsigned int a = 0; a < cfg->nr_arms; a++) {
			series(f, r, job, cfg->arms[a], MARGIN_L, y0, ax_t.top,
			       guest_time, true);
			series(f, r, job, cfg->arms[a], COL_W + MARGIN_L, y0,
			       ax_m.top, throughput, false);
		}
	}
	fprintf(f, "</svg>\n");
	bad = ferror(f);
	return fclose(f) || bad ? -EIO : 0;
}

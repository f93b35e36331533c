// SPDX-License-Identifier: MIT
/*
 * The plot, as a hand-written SVG (no dependency): for each job, per-guest
 * elapsed time (mean, with the min-max spread as a bar) and aggregate
 * throughput against N, one line per arm.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tools/bench/report.h"

#define PANEL_W 380
#define PANEL_H 220
#define MARGIN_L 64
#define MARGIN_T 56
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

/* A round number at or above @v for the top of an axis. */
static double nice_top(double v)
{
	double p;

	if (!(v > 0))
		return 1;
	p = pow(10, floor(log10(v)));
	for (double m = 1; m <= 10; m += (m < 2 ? 0.5 : 1))
		if (m * p >= v)
			return m * p;
	return 10 * p;
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
	return nice_top(top * 1.05);
}

static void axes(FILE *f, const struct bench_config *cfg, int x0, int y0,
		 double top, const char *title, const char *unit)
{
	fprintf(f,
		"<text x='%d' y='%d' class='t'>%s</text>\n"
		"<rect x='%d' y='%d' width='%d' height='%d' class='frame'/>\n",
		x0, y0 - 10, title, x0, y0, PANEL_W, PANEL_H);
	for (int i = 0; i <= 4; i++) {
		int y = y0 + PANEL_H - PANEL_H * i / 4;

		fprintf(f,
			"<line x1='%d' y1='%d' x2='%d' y2='%d' class='grid'/>"
			"<text x='%d' y='%d' class='yl'>%.3g</text>\n",
			x0, y, x0 + PANEL_W, y, x0 - 6, y + 4, top * i / 4);
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

static void legend(FILE *f, const struct bench_config *cfg)
{
	for (unsigned int a = 0; a < cfg->nr_arms; a++) {
		int x = MARGIN_L + 120 * (int)a;

		fprintf(f,
			"<rect x='%d' y='14' width='14' height='4' "
			"fill='%s'/><text x='%d' y='20' class='t'>%s</text>\n",
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
		".xl{text-anchor:middle;fill:#444}</style>\n"
		"<rect width='100%%' height='100%%' fill='white'/>\n",
		width, height, width, height);
	legend(f, cfg);
	for (unsigned int j = 0; j < cfg->nr_jobs; j++) {
		enum bench_job_kind job = cfg->jobs[j];
		int y0 = MARGIN_T + 24 + ROW_H * (int)j;
		double top_t = max_metric(r, job, guest_time);
		double top_m = max_metric(r, job, throughput);
		char title[128];

		snprintf(title, sizeof(title),
			 "%s: per-guest time (mean, min-max)",
			 bench_job_name(job));
		axes(f, cfg, MARGIN_L, y0, top_t, title, "s");
		snprintf(title, sizeof(title), "%s: aggregate throughput",
			 bench_job_name(job));
		axes(f, cfg, COL_W + MARGIN_L, y0, top_m, title, "MB/s");
		for (unsigned int a = 0; a < cfg->nr_arms; a++) {
			series(f, r, job, cfg->arms[a], MARGIN_L, y0, top_t,
			       guest_time, true);
			series(f, r, job, cfg->arms[a], COL_W + MARGIN_L, y0,
			       top_m, throughput, false);
		}
	}
	fprintf(f, "</svg>\n");
	bad = ferror(f);
	return fclose(f) || bad ? -EIO : 0;
}

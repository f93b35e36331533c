/* SPDX-License-Identifier: MIT */
/*
 * Round ticks for a plot's axis from 0: steps of 1, 2 or 5 times a power
 * of ten, labelled in plain decimals (200, 0.05; never 1.12e+03 or
 * 0.0375). Pure functions, for report-svg.c and its unit test.
 */
#ifndef BENCH_AXIS_H
#define BENCH_AXIS_H

#include <stddef.h>

#define AXIS_MAX_INTERVALS 6

struct axis {
	double step; /* 1, 2 or 5 x 10^k */
	unsigned int intervals; /* 3 to AXIS_MAX_INTERVALS steps ... */
	double top; /* ... from 0 to top = intervals x step >= the maximum */
	int decimals; /* the step's, so every label reads exactly */
};

/*
 * The axis from 0 to at least @max with the smallest round step that
 * needs at most AXIS_MAX_INTERVALS intervals; @max <= 0 or NaN (nothing
 * to plot) gives 0 to 1.
 */
void axis_choose(double max, struct axis *out);

/* The label of tick @i (0 to intervals) into @buf, which is returned. */
const char *axis_label(const struct axis *a, unsigned int i, char *buf,
		       size_t len);

#endif /* BENCH_AXIS_H */

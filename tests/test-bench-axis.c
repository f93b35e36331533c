// SPDX-License-Identifier: MIT
/*
 * blkback-bench's plot axes (tools/bench/axis.h): round steps of 1, 2 or
 * 5 x 10^k, 3 to 6 intervals that reach the maximum with the smallest
 * such step, and labels in plain decimals, for the values the plot met
 * (1.12e+03 and 0.0375 were labels before) and over many decades.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tools/bench/axis.h"

/* The mantissa of a round step: 1, 2 or 5; 0 for anything else. */
static int mantissa(double step)
{
	double m = step / pow(10, floor(log10(step) + 1e-9));

	for (int r = 1; r <= 5; r++)
		if ((r == 1 || r == 2 || r == 5) && fabs(m - r) < 1e-6)
			return r;
	return 0;
}

/* Digits, at most one point, no exponent, no sign. */
static int plain_decimal(const char *s)
{
	int points = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s == '.')
			points++;
		else if (*s < '0' || *s > '9')
			return 0;
	}
	return points <= 1;
}

static void expect(double max, double step, unsigned int intervals,
		   const char *top_label)
{
	struct axis a;
	char buf[64];

	axis_choose(max, &a);
	if (fabs(a.step - step) > step * 1e-9 || a.intervals != intervals) {
		fprintf(stderr, "max %g: step %g x %u, want %g x %u\n", max,
			a.step, a.intervals, step, intervals);
		check_failures++;
	}
	CHECK(!strcmp(axis_label(&a, a.intervals, buf, sizeof(buf)),
		      top_label));
	if (strcmp(buf, top_label))
		fprintf(stderr, "max %g: top label %s, want %s\n", max, buf,
			top_label);
}

/* Every maximum over twelve decades: the invariants. */
static void sweep(void)
{
	for (double max = 1e-4; max < 1e8; max *= 1.0137) {
		struct axis a;
		char buf[64], prev[64] = "";

		axis_choose(max, &a);
		CHECK(mantissa(a.step) != 0);
		CHECK(a.intervals >= 3 && a.intervals <= AXIS_MAX_INTERVALS);
		CHECK(a.top >= max * (1 - 1e-9));
		/* The smallest round step: one smaller needs too many. */
		CHECK(max / (a.step / (mantissa(a.step) == 5 ? 2.5 : 2)) >
		      AXIS_MAX_INTERVALS);
		for (unsigned int i = 0; i <= a.intervals; i++) {
			axis_label(&a, i, buf, sizeof(buf));
			CHECK(plain_decimal(buf));
			/* Each label different from the one below. */
			CHECK(strcmp(buf, prev));
			CHECK(fabs(strtod(buf, NULL) - i * a.step) <=
			      a.step * 1e-6);
			memcpy(prev, buf, sizeof(buf));
		}
		if (check_failures) {
			fprintf(stderr, "at max %g\n", max);
			return;
		}
	}
}

int main(void)
{
	/* What the plot used to label 1.12e+03: MB/s up to 1120. */
	expect(1120, 200, 6, "1200");
	/* Per-guest seconds up to 0.15 (ticks were 0.0375 apart). */
	expect(0.15, 0.05, 3, "0.15");
	expect(1.0, 0.2, 5, "1.0");
	expect(6.01, 2, 4, "8");
	expect(5.9999, 1, 6, "6");
	expect(0.0031, 0.001, 4, "0.004");
	expect(987654, 200000, 5, "1000000");
	/* Nothing to plot: still an axis. */
	expect(0, 0.2, 5, "1.0");
	expect(NAN, 0.2, 5, "1.0");
	sweep();
	return check_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

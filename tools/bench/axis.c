// SPDX-License-Identifier: MIT
#include "tools/bench/axis.h"

#include <math.h>
#include <stdio.h>

/* Ratios this close to a whole number are that number (float noise). */
#define EPS 1e-9

void axis_choose(double max, struct axis *out)
{
	static const double mult[] = { 1, 2, 5, 10 };
	double power;

	if (!(max > 0) || isinf(max))
		max = 1;
	/* The step is at least max / AXIS_MAX_INTERVALS: start a decade
	 * below it and take the first round step that is enough. */
	power = pow(10, floor(log10(max / AXIS_MAX_INTERVALS)));
	for (unsigned int i = 0; i < sizeof(mult) / sizeof(mult[0]); i++) {
		double step = mult[i] * power;
		double n = ceil(max / step - EPS);

		if (n <= AXIS_MAX_INTERVALS) {
			out->step = step;
			out->intervals = n > 0 ? (unsigned int)n : 1;
			break;
		}
	}
	out->top = out->intervals * out->step;
	out->decimals = (int)-floor(log10(out->step) + EPS);
	if (out->decimals < 0)
		out->decimals = 0;
}

const char *axis_label(const struct axis *a, unsigned int i, char *buf,
		       size_t len)
{
	snprintf(buf, len, "%.*f", a->decimals, i * a->step);
	return buf;
}

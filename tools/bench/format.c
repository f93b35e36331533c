// SPDX-License-Identifier: MIT
#include "tools/bench/format.h"

#include <math.h>
#include <stdio.h>

#define MAX_DECIMALS 6

int bench_decimals(double v, int min)
{
	int d = min;

	while (d < MAX_DECIMALS && v != 0 && fabs(v) < pow(10, 1 - d))
		d++;
	return d;
}

const char *bench_format(char *buf, size_t len, double v, int min,
			 const char *unit, const char *missing)
{
	if (isnan(v))
		snprintf(buf, len, "%s", missing);
	else
		snprintf(buf, len, "%.*f%s", bench_decimals(v, min), v, unit);
	return buf;
}

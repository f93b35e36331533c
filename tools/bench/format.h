/* SPDX-License-Identifier: MIT */
/*
 * Numbers for people, shared by the progress lines and the table: enough
 * decimals that a small time or cost never reads 0, and a word instead of
 * a number where there is no true one (NaN: not measured). Pure functions.
 */
#ifndef BENCH_FORMAT_H
#define BENCH_FORMAT_H

#include <stddef.h>

/* Bytes in a MiB, in MB: the outputs count in MB (10^6 bytes). */
#define BENCH_MB_PER_MIB 1.048576

/*
 * At least @min decimals, and more (up to 6) while @v would show fewer
 * than two significant digits: 0.0031 s with @min 2 is "0.0031", not
 * "0.00".
 */
int bench_decimals(double v, int min);

/*
 * @v with bench_decimals(@v, @min) decimals followed by @unit (may be
 * ""), or @missing when @v is NaN; into @buf, which is returned.
 */
const char *bench_format(char *buf, size_t len, double v, int min,
			 const char *unit, const char *missing);

#endif /* BENCH_FORMAT_H */

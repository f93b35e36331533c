/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's outputs: the terminal table (with the targets), CSV,
 * the JSON document whose format the man page documents, and an SVG plot.
 * Each writer returns 0 or -errno.
 */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdio.h>

#include "tools/bench/results.h"

#define BENCH_JSON_FORMAT 2

void report_table(FILE *f, const struct bench_results *r);
int report_csv(const char *path, const struct bench_results *r);
int report_json(const char *path, const struct bench_results *r);
int report_svg(const char *path, const struct bench_results *r);

#endif /* BENCH_REPORT_H */

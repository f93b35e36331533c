/* SPDX-License-Identifier: MIT */
/* blkback-bench's command line. */
#ifndef BENCH_OPTIONS_H
#define BENCH_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools/bench/results.h"

#define BENCH_MAX_DAEMON_ARGS 32

struct bench_options {
	struct bench_config cfg;
	const char *json, *csv, *svg; /* NULL: not written */
	char *daemon_args[BENCH_MAX_DAEMON_ARGS + 1];
	unsigned int nr_daemon_args;
	char default_blkbackd[PATH_MAX];
	char default_host[PATH_MAX];
	char default_ceph[PATH_MAX];
	char out_json[PATH_MAX], out_csv[PATH_MAX], out_svg[PATH_MAX];
};

/*
 * Parse @argv into @o. Returns 0, 1 when --help/--version was handled, or
 * -EINVAL with the problem in @why.
 */
int bench_parse_options(int argc, char **argv, struct bench_options *o,
			char *why, size_t why_len);

#endif /* BENCH_OPTIONS_H */

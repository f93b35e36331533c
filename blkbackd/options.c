// SPDX-License-Identifier: MIT
/*
 * Command-line parsing.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkbackd/log.h"
#include "blkbackd/options.h"

/* The help text reads best laid out as it prints. */
/* clang-format off */
static void usage(FILE *out)
{
	fprintf(out,
		"Usage: blkbackd [OPTION]...\n"
		"Serve Xen guests' virtual block devices from image files.\n"
		"\n"
		"  -w, --workers N      I/O worker threads (default: online CPUs)\n"
		"  -c, --cache MODE     none (O_DIRECT, default) or writeback\n"
		"  -d, --domid N        domain this backend runs in (default: from xenstore)\n"
		"  -l, --log-level L    err, warning, notice, info (default) or debug\n"
		"      --max-indirect-segments N\n"
		"                       segments per indirect request, 0 to 4096 (default 256)\n"
		"      --max-ring-page-order N\n"
		"                       largest ring a guest may use, 2^N pages, 0 to 4 (default 4)\n"
		"      --max-queues N   rings per device, 1 to 64 (default: one per worker)\n"
		"      --persistent-grants yes|no\n"
		"                       offer persistent grants (default yes)\n"
		"      --poll-us N      busy-poll rings and I/O for up to N us before\n"
		"                       sleeping, 0 to 1000, 0 = never (default 50)\n"
		"      --stage-timing   time each request's stages (see SIGUSR1)\n"
		"      --state-dir DIR  where ring journals survive a crash (default:\n"
		"                       $RUNTIME_DIRECTORY, set by systemd; else none)\n"
		"      --control-socket PATH\n"
		"                       blkbackctl's socket (default: DIR/control of\n"
		"                       --state-dir; none without one)\n"
		"      --max-persistent-grants N\n"
		"                       grants mapped per ring, 16 to 65536 (default 1056)\n"
		"      --ring-buffer-mib N\n"
		"                       bounce buffers per ring, 1 to 64 MiB (default 4)\n"
		"      --buffer-mib N   bounce buffers of all rings beyond each one's first\n"
		"                       MiB, 0 to 65536 MiB (default 256)\n"
		"  -h, --help           show this help and exit\n"
		"  -V, --version        show the version and exit\n"
		"\n"
		"See blkbackd(8).\n");
}
/* clang-format on */

static int parse_number(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_cache(const char *s, enum blk_cache_mode *mode)
{
	if (strcmp(s, "none") == 0)
		*mode = BLK_CACHE_NONE;
	else if (strcmp(s, "writeback") == 0)
		*mode = BLK_CACHE_WRITEBACK;
	else
		return -EINVAL;
	return 0;
}

int options_parse(struct options *opts, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, 'w' },
		{ "cache", required_argument, NULL, 'c' },
		{ "domid", required_argument, NULL, 'd' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "max-indirect-segments", required_argument, NULL, 'I' },
		{ "max-ring-page-order", required_argument, NULL, 'O' },
		{ "max-queues", required_argument, NULL, 'Q' },
		{ "persistent-grants", required_argument, NULL, 'P' },
		{ "poll-us", required_argument, NULL, 'U' },
		{ "stage-timing", no_argument, NULL, 'T' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "control-socket", required_argument, NULL, 'C' },
		{ "max-persistent-grants", required_argument, NULL, 'G' },
		{ "ring-buffer-mib", required_argument, NULL, 'R' },
		{ "buffer-mib", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;

	*opts = (struct options){
		.cache = BLK_CACHE_NONE,
		.domid = -1,
		.log_level = LOG_INFO,
		.max_indirect_segments = 256,
		.max_ring_order = 4,
		.persistent = true,
		.poll_us = 50,
		.max_pgrants = 1056,
		.ring_buffer_mib = 4,
		.buffer_mib = 256,
		/* systemd's RuntimeDirectory= (kept across restarts). */
		.state_dir = getenv("RUNTIME_DIRECTORY"),
	};
	while ((c = getopt_long(argc, argv, "w:c:d:l:hV", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'w':
			if (parse_number(optarg, 1024, &v) || v == 0) {
				fprintf(stderr,
					"blkbackd: --workers wants a number "
					"from 1 to 1024, not '%s'\n",
					optarg);
				return -1;
			}
			opts->workers = (unsigned int)v;
			break;
		case 'c':
			if (parse_cache(optarg, &opts->cache)) {
				fprintf(stderr,
					"blkbackd: --cache is 'none' or "
					"'writeback', not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'd':
			if (parse_number(optarg, 0x7fef, &v)) {
				fprintf(stderr,
					"blkbackd: --domid wants a domain id, "
					"not '%s'\n",
					optarg);
				return -1;
			}
			opts->domid = (int)v;
			break;
		case 'l':
			opts->log_level = log_level_from_name(optarg);
			if (opts->log_level < 0) {
				fprintf(stderr,
					"blkbackd: --log-level is err, "
					"warning, notice, info or debug, not "
					"'%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'I':
			if (parse_number(optarg, 4096, &v)) {
				fprintf(stderr,
					"blkbackd: --max-indirect-segments "
					"wants a number from 0 to 4096, not "
					"'%s'\n",
					optarg);
				return -1;
			}
			opts->max_indirect_segments = (unsigned int)v;
			break;
		case 'O':
			if (parse_number(optarg, 4, &v)) {
				fprintf(stderr,
					"blkbackd: --max-ring-page-order wants "
					"a number from 0 to 4, not '%s'\n",
					optarg);
				return -1;
			}
			opts->max_ring_order = (unsigned int)v;
			break;
		case 'Q':
			if (parse_number(optarg, 64, &v) || v == 0) {
				fprintf(stderr,
					"blkbackd: --max-queues wants a number "
					"from 1 to 64, not '%s'\n",
					optarg);
				return -1;
			}
			opts->max_queues = (unsigned int)v;
			break;
		case 'P':
			if (strcmp(optarg, "yes") && strcmp(optarg, "no")) {
				fprintf(stderr,
					"blkbackd: --persistent-grants is "
					"'yes' or 'no', not '%s'\n",
					optarg);
				return -1;
			}
			opts->persistent = strcmp(optarg, "yes") == 0;
			break;
		case 'U':
			if (parse_number(optarg, 1000, &v)) {
				fprintf(stderr,
					"blkbackd: --poll-us wants a number "
					"from 0 to 1000, not '%s'\n",
					optarg);
				return -1;
			}
			opts->poll_us = (unsigned int)v;
			break;
		case 'T':
			opts->stage_timing = true;
			break;
		case 'S':
			opts->state_dir = optarg;
			break;
		case 'C':
			opts->control_socket = optarg;
			break;
		case 'G':
			if (parse_number(optarg, 65536, &v) || v < 16) {
				fprintf(stderr,
					"blkbackd: --max-persistent-grants wants "
					"a number from 16 to 65536, not '%s'\n",
					optarg);
				return -1;
			}
			opts->max_pgrants = (unsigned int)v;
			break;
		case 'R':
			if (parse_number(optarg, 64, &v) || v < 1) {
				fprintf(stderr,
					"blkbackd: --ring-buffer-mib wants a "
					"number from 1 to 64, not '%s'\n",
					optarg);
				return -1;
			}
			opts->ring_buffer_mib = (unsigned int)v;
			break;
		case 'B':
			if (parse_number(optarg, 65536, &v)) {
				fprintf(stderr,
					"blkbackd: --buffer-mib wants a number "
					"from 0 to 65536, not '%s'\n",
					optarg);
				return -1;
			}
			opts->buffer_mib = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("blkbackd %s\n", PACKAGE_VERSION);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "blkbackd: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return -1;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * xensim-blkfront: one simulated guest disk driver. Connects to the vbd of
 * a simulated domain, runs a workload and/or named checks, prints one
 * machine-readable result line and what it saw as facts (workload.h,
 * workload-check.h) for the test to judge, and exits non-zero only when it
 * could not do its work (a connection refused, an error response, an
 * answer that never came).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "libblk/toolstack.h"
#include "tools/xensim/frontend.h"
#include "tools/xensim/toolstack.h"
#include "tools/xensim/workload.h"

#define MAX_CHECKS 16
/* Enough for the checks' requests (indirect ones of up to 384 segments). */
#define MIN_DATA_PAGES 768u
/* What the grant table leaves after rings and indirect pages. */
#define MAX_DATA_PAGES 7000u

struct options {
	uint32_t domid;
	bool have_domid;
	const char *vdev;
	enum frontend_protocol protocol;
	struct workload_params wl;
	bool run_workload;
	const char *checks[MAX_CHECKS];
	unsigned int nr_checks;
	bool hold;
	bool abandon;
	uint64_t dump_sectors;
	bool dump;
	int ring_order;
	int queues;
	int indirect;
	int persistent;
	int large_sectors;
	uint32_t data_pages;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xensim-blkfront --domid D [--vdev xvda] [--abi "
		"x86_64|x86_32|none]\n"
		"         [--ops N | --seconds S] [--bs BYTES] [--depth Q] "
		"[--seed N]\n"
		"         [--verify] [--sequential] [--partial] [--fill] "
		"[--flush-every N]\n"
		"         [--check NAME]... [--hold] [--abandon] [--timeout-ms "
		"MS]\n"
		"         [--preexisting]   (the image already holds --seed's "
		"pattern: read, verify)\n"
		"         [--ring-order N|auto] [--queues N|auto] [--indirect "
		"N|auto]\n"
		"         [--persistent yes|no] [--large-sectors yes|no] "
		"[--data-pages N]\n"
		"       xensim-blkfront --dump-pattern SECTORS --seed N   "
		"(expected image)\n"
		"checks: %s\n"
		"attacks (also --check): %s\n"
		"--hold: connect, print CONNECTED, close on a line/EOF on "
		"stdin or when\n"
		"        the backend closes, also after a failure. --abandon: "
		"exit without closing "
		"(a dead guest).\n"
		"Features default to auto: use what the backend offers, as "
		"Linux blkfront does.\n"
		"--verify: compare every block read with what was written and "
		"print the counts\n"
		"        as 'fact check=verify case=summary ...'; a mismatch "
		"is reported, not\n"
		"        judged (the exit status says only whether the run "
		"could be done).\n",
		workload_check_names(), workload_attack_names());
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end ? -EINVAL : 0;
}

static int parse_protocol(const char *s, enum frontend_protocol *p)
{
	if (!strcmp(s, "x86_64"))
		*p = FRONTEND_PROTO_X86_64;
	else if (!strcmp(s, "x86_32"))
		*p = FRONTEND_PROTO_X86_32;
	else if (!strcmp(s, "none"))
		*p = FRONTEND_PROTO_NONE;
	else
		return -EINVAL;
	return 0;
}

enum {
	O_DOMID = 1,
	O_VDEV,
	O_ABI,
	O_OPS,
	O_SECONDS,
	O_BS,
	O_DEPTH,
	O_SEED,
	O_VERIFY,
	O_SEQ,
	O_PARTIAL,
	O_FILL,
	O_FLUSH,
	O_CHECK,
	O_HOLD,
	O_ABANDON,
	O_TIMEOUT,
	O_DUMP,
	O_PREEXISTING,
	O_RING_ORDER,
	O_QUEUES,
	O_INDIRECT,
	O_PERSISTENT,
	O_LARGE,
	O_DATA_PAGES,
};

/* "auto" or a number up to @max. */
static int parse_auto(const char *s, int max, int *out)
{
	uint64_t v;

	if (!strcmp(s, "auto")) {
		*out = FRONTEND_AUTO;
		return 0;
	}
	if (parse_u64(s, &v) < 0 || v > (uint64_t)max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int parse_yes_no(const char *s, int *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "auto"))
		*out = FRONTEND_AUTO;
	else if (!strcmp(s, "no"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

/* Options whose argument is not a plain number. */
static bool takes_word(int c)
{
	return c == O_VDEV || c == O_ABI || c == O_CHECK || c == O_SECONDS ||
	       c == O_RING_ORDER || c == O_QUEUES || c == O_INDIRECT ||
	       c == O_PERSISTENT || c == O_LARGE;
}

static int parse_one(struct options *o, int c, const char *arg)
{
	uint64_t v = 0;

	if (arg && !takes_word(c) && parse_u64(arg, &v) < 0)
		return -EINVAL;
	switch (c) {
	case O_DOMID:
		o->domid = (uint32_t)v;
		o->have_domid = true;
		return 0;
	case O_VDEV:
		o->vdev = arg;
		return 0;
	case O_ABI:
		return parse_protocol(arg, &o->protocol);
	case O_OPS:
		o->wl.ops = v;
		o->run_workload = true;
		return v ? 0 : -EINVAL;
	case O_SECONDS:
		o->wl.seconds = strtod(arg, NULL);
		o->wl.ops = 0;
		o->run_workload = true;
		return o->wl.seconds > 0 ? 0 : -EINVAL;
	case O_BS:
		o->wl.bs = (uint32_t)v;
		return 0;
	case O_DEPTH:
		o->wl.depth = (uint32_t)v;
		return 0;
	case O_SEED:
		o->wl.seed = v;
		return 0;
	case O_VERIFY:
		o->wl.verify = true;
		return 0;
	case O_SEQ:
		o->wl.random = false;
		return 0;
	case O_PARTIAL:
		o->wl.partial = true;
		return 0;
	case O_FILL:
		o->wl.fill = true;
		o->run_workload = true;
		return 0;
	case O_FLUSH:
		o->wl.flush_every = (uint32_t)v;
		return 0;
	case O_CHECK:
		if (o->nr_checks == MAX_CHECKS)
			return -E2BIG;
		o->checks[o->nr_checks++] = arg;
		return 0;
	case O_HOLD:
		o->hold = true;
		return 0;
	case O_ABANDON:
		o->abandon = true;
		return 0;
	case O_TIMEOUT:
		o->wl.timeout_ms = (int)v;
		return v ? 0 : -EINVAL;
	case O_PREEXISTING:
		o->wl.preexisting = true;
		o->wl.verify = true;
		return 0;
	case O_DUMP:
		o->dump = true;
		o->dump_sectors = v;
		return 0;
	case O_RING_ORDER:
		return parse_auto(arg, FRONTEND_MAX_RING_ORDER, &o->ring_order);
	case O_QUEUES:
		if (parse_auto(arg, FRONTEND_MAX_QUEUES, &o->queues) < 0 ||
		    o->queues == 0)
			return -EINVAL;
		return 0;
	case O_INDIRECT:
		return parse_auto(arg, BLKIF_MAX_INDIRECT_SEGMENTS,
				  &o->indirect);
	case O_PERSISTENT:
		return parse_yes_no(arg, &o->persistent);
	case O_LARGE:
		return parse_yes_no(arg, &o->large_sectors);
	case O_DATA_PAGES:
		o->data_pages = (uint32_t)v;
		return v && v <= MAX_DATA_PAGES ? 0 : -EINVAL;
	}
	return -EINVAL;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "domid", required_argument, NULL, O_DOMID },
		{ "vdev", required_argument, NULL, O_VDEV },
		{ "abi", required_argument, NULL, O_ABI },
		{ "ops", required_argument, NULL, O_OPS },
		{ "seconds", required_argument, NULL, O_SECONDS },
		{ "bs", required_argument, NULL, O_BS },
		{ "depth", required_argument, NULL, O_DEPTH },
		{ "seed", required_argument, NULL, O_SEED },
		{ "verify", no_argument, NULL, O_VERIFY },
		{ "sequential", no_argument, NULL, O_SEQ },
		{ "partial", no_argument, NULL, O_PARTIAL },
		{ "fill", no_argument, NULL, O_FILL },
		{ "flush-every", required_argument, NULL, O_FLUSH },
		{ "check", required_argument, NULL, O_CHECK },
		{ "hold", no_argument, NULL, O_HOLD },
		{ "abandon", no_argument, NULL, O_ABANDON },
		{ "timeout-ms", required_argument, NULL, O_TIMEOUT },
		{ "dump-pattern", required_argument, NULL, O_DUMP },
		{ "preexisting", no_argument, NULL, O_PREEXISTING },
		{ "ring-order", required_argument, NULL, O_RING_ORDER },
		{ "queues", required_argument, NULL, O_QUEUES },
		{ "indirect", required_argument, NULL, O_INDIRECT },
		{ "persistent", required_argument, NULL, O_PERSISTENT },
		{ "large-sectors", required_argument, NULL, O_LARGE },
		{ "data-pages", required_argument, NULL, O_DATA_PAGES },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == '?' || parse_one(o, c, optarg) < 0)
			return -EINVAL;
	}
	if (optind != argc)
		return -EINVAL;
	if (!o->dump && !o->have_domid)
		return -EINVAL;
	if (!o->run_workload && !o->nr_checks && !o->hold && !o->dump) {
		o->run_workload = true;
		o->wl.ops = 2000;
	}
	return 0;
}

/*
 * Data pages for the workload on every queue the backend might give us,
 * and at least what the checks use.
 */
static uint32_t data_pages(const struct options *o)
{
	unsigned int queues =
		o->queues == FRONTEND_AUTO
			? (unsigned int)sysconf(_SC_NPROCESSORS_ONLN)
			: (unsigned int)o->queues;
	uint32_t n;

	if (o->data_pages)
		return o->data_pages;
	if (!queues)
		queues = 1;
	n = o->run_workload ? workload_data_pages(&o->wl, queues) : 0;
	return n > MIN_DATA_PAGES ? n : MIN_DATA_PAGES;
}

/* The expected image content for a --fill run with this seed. */
static int dump_pattern(uint64_t seed, uint64_t sectors)
{
	static char buf[256 * WORKLOAD_SECTOR];

	for (uint64_t s = 0; s < sectors; s += 256) {
		uint32_t n = sectors - s < 256 ? (uint32_t)(sectors - s) : 256;

		workload_fill_pattern(seed, s, buf, n);
		if (fwrite(buf, WORKLOAD_SECTOR, n, stdout) != n)
			return 1;
	}
	return fflush(stdout) ? 1 : 0;
}

/* Wait for the test (stdin) or the backend to end the connection. */
static void hold_connection(struct frontend *fe)
{
	char line[64];

	printf("CONNECTED\n");
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int state;

		if (poll(&pfd, 1, 200) > 0) {
			if (!fgets(line, sizeof(line), stdin) || line[0])
				return;
		}
		state = frontend_backend_state(fe);
		if (state == 5 || state == 6 || state == 0)
			return;
	}
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* What was negotiated, for the tests and the benchmark to see. */
static void print_connection(const struct options *o,
			     const struct frontend_disk_info *d)
{
	printf("xensim-blkfront: dom %u %s: connected: ring order %u, %u "
	       "queue%s, %u segments per request%s, %s grants, sector-size "
	       "%u, %" PRIu64 " sectors, info %u\n",
	       o->domid, o->vdev, d->ring_order, d->nr_queues,
	       d->nr_queues == 1 ? "" : "s", d->max_segments,
	       d->max_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST ? " (indirect)"
								: "",
	       d->persistent ? "persistent" : "per-request", d->sector_size,
	       d->sectors, d->info);
	fflush(stdout);
}

static void print_result(const struct options *o,
			 const struct workload_stats *st, double cpu)
{
	double s = st->seconds > 0 ? st->seconds : 1e-9;

	printf("xensim-blkfront: dom %u %s: wrote %.1f MiB read %.1f MiB in "
	       "%.2f s: %.1f MB/s, %.1f MB/s, IOPS %.0f (bs %u, depth %u "
	       "x %u queue%s, %" PRIu64 " indirect requests, cpu %.2f s)\n",
	       o->domid, o->vdev, st->bytes_written / 1048576.0,
	       st->bytes_read / 1048576.0, st->seconds,
	       st->bytes_written / 1e6 / s, st->bytes_read / 1e6 / s,
	       st->ops / s, st->bs, st->depth, st->queues,
	       st->queues == 1 ? "" : "s", st->indirect_ops, cpu);
	if (st->unannounced)
		printf("xensim-blkfront: dom %u %s: %" PRIu64 " %s\n", o->domid,
		       o->vdev, st->unannounced,
		       "responses came without their event (a lost "
		       "notification: a real blkfront would wait for ever)");
	fflush(stdout);
}

static int run(struct frontend *fe, struct options *o, char *why,
	       size_t why_len)
{
	int ret;

	for (unsigned int i = 0; i < o->nr_checks; i++) {
		ret = workload_check(fe, o->checks[i], o->wl.seed, stdin,
				     stdout, why, why_len);
		if (ret < 0)
			return ret;
		printf("xensim-blkfront: dom %u %s: check %s done (facts "
		       "above)\n",
		       o->domid, o->vdev, o->checks[i]);
		fflush(stdout);
	}
	if (o->run_workload) {
		struct workload_stats st;
		double cpu = cpu_seconds();

		ret = workload_run(fe, &o->wl, &st, why, why_len);
		if (ret < 0) {
			workload_report_error(&st, stdout);
			return ret;
		}
		print_result(o, &st, cpu_seconds() - cpu);
		/* Only for a run done: a test may take it for one. */
		if (o->wl.verify)
			workload_report_verify(&st, stdout);
	}
	if (o->hold)
		hold_connection(fe);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = {
		.vdev = "xvda",
		.protocol = FRONTEND_PROTO_X86_64,
		.wl = { .bs = 16384,
			.depth = 8,
			.random = true,
			.timeout_ms = 10000 },
		.ring_order = FRONTEND_AUTO,
		.queues = FRONTEND_AUTO,
		.indirect = FRONTEND_AUTO,
		.persistent = FRONTEND_AUTO,
		.large_sectors = FRONTEND_AUTO,
	};
	struct frontend_config cfg;
	struct frontend *fe;
	char why[512] = "";
	int ret;

	o.wl.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (parse_options(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	if (o.dump)
		return dump_pattern(o.wl.seed, o.dump_sectors);
	cfg = (struct frontend_config){
		.domid = o.domid,
		.protocol = o.protocol,
		.nr_data_pages = data_pages(&o),
		.timeout_ms = o.wl.timeout_ms,
		.ring_order = o.ring_order,
		.nr_queues = o.queues,
		.max_indirect = o.indirect,
		.persistent = o.persistent,
		.large_sectors = o.large_sectors,
		.max_in_flight = o.wl.depth > 32 ? o.wl.depth : 32,
	};
	if (cfg.nr_data_pages > MAX_DATA_PAGES) {
		fprintf(stderr,
			"xensim-blkfront: %u data pages needed (bs x depth x "
			"queues), at most %u fit the grant table: lower "
			"--depth "
			"or --bs\n",
			cfg.nr_data_pages, MAX_DATA_PAGES);
		return 2;
	}
	if (blk_vdev_to_devid(o.vdev, &cfg.devid) < 0) {
		fprintf(stderr, "xensim-blkfront: invalid vdev %s\n", o.vdev);
		return 2;
	}
	ret = frontend_connect(&cfg, &fe);
	if (ret < 0) {
		fprintf(stderr,
			"xensim-blkfront: dom %u %s: connect failed: %s%s\n",
			o.domid, o.vdev, strerror(-ret),
			ret == -ENOMEM ? " (rings, indirect and data pages do "
					 "not fit the domain's memory: create "
					 "it with a larger --mem-mb)"
			: ret == -ECONNREFUSED ? " (the backend closed: see "
						 "its error node)"
					       : "");
		return 1;
	}
	print_connection(&o, frontend_disk_info(fe));
	ret = run(fe, &o, why, sizeof(why));
	if (ret < 0) {
		fprintf(stderr,
			"xensim-blkfront: dom %u %s: FAILED: %s (seed %" PRIu64
			")\n",
			o.domid, o.vdev, why, o.wl.seed);
		/* A test may look at the backend's view of the failure. */
		if (o.hold)
			hold_connection(fe);
	}
	if (o.abandon) {
		frontend_abandon(fe);
		return ret < 0 ? 1 : 0;
	}
	if (frontend_close(fe) < 0 && ret >= 0) {
		fprintf(stderr,
			"xensim-blkfront: dom %u %s: close: backend did not "
			"reach state 6 or grants stayed mapped\n",
			o.domid, o.vdev);
		ret = -EIO;
	}
	return ret < 0 ? 1 : 0;
}

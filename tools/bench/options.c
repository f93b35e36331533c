// SPDX-License-Identifier: MIT
#include "tools/bench/options.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_GUESTS 1024u

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: blkback-bench [OPTION]...\n"
		"Run the same I/O jobs in N concurrent guests through raw "
		"io_uring, the loop\ndevice (buffered and direct I/O) and "
		"blkbackd (simulated Xen guests), and\nreport per-guest "
		"times, fairness, throughput, latency and backend CPU.\n\n"
		"  -g, --guests LIST     guest counts (default 1,4,10)\n"
		"  -j, --jobs LIST       randread,randwrite,seqwrite,seqread,"
		"build,qd1read\n"
		"                        (default all; none: only "
		"--idle-guests)\n"
		"  -a, --arms LIST       raw,loop,loop-dio,blkbackd,nbd,rbd,"
		"floor (default all\n"
		"                        but nbd and rbd; nbd: blkbackd with "
		"each image behind\n"
		"                        nbdkit; rbd: each image in a one-node "
		"Ceph cluster;\n"
		"                        floor: blkbackd on null images, no "
		"I/O)\n"
		"  -s, --size BYTES      I/O per guest per job (default 64M)\n"
		"      --image-size BYTES  each guest's disk (default: "
		"--size)\n"
		"  -t, --time SECONDS    stop each guest's job after this "
		"long\n"
		"      --min-time SECONDS  repeat each guest's work until "
		"its job has run\n"
		"                        this long (default 0: once)\n"
		"      --idle-guests LIST  attach this many idle guests to "
		"the daemon first,\n"
		"                        measure their cost; jobs run with "
		"the last attached\n"
		"  -r, --repeat N        run everything N times, report "
		"medians and spread\n"
		"                        (default 1)\n"
		"      --warmup N        unmeasured passes first (default 1)\n"
		"  -d, --dir DIR         where the images go, made if missing "
		"(default\n"
		"                        $TMPDIR or /var/tmp)\n"
		"      --seed N          seed of the I/O patterns\n"
		"      --blkbackd PATH   the daemon (default %s)\n"
		"      --daemon-arg ARG  extra daemon argument (repeatable)\n"
		"      --xensim-host PATH  the simulated host's starter\n"
		"  -o, --out PREFIX      write PREFIX.csv, PREFIX.svg, "
		"PREFIX.json\n"
		"      --csv FILE, --svg FILE, --json FILE  (\"-\" = stdout "
		"for csv/json)\n"
		"  -h, --help, -V, --version\n\n"
		"With no output option the files are blkback-bench.{csv,svg,"
		"json}.\nSee blkback-bench(1).\n",
		"blkbackd/blkbackd in the build tree, else sbindir");
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		v *= 1024;
		end++;
		break;
	case 'm':
	case 'M':
		v *= 1024 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		v *= 1024.0 * 1024 * 1024;
		end++;
		break;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (*end || v > 1e15)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

static int parse_u32(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

/* Split @list on commas and hand each item to @item. */
static int for_each_item(const char *list, int (*item)(const char *, void *),
			 void *arg)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int ret = copy ? 0 : -ENOMEM;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ",", &save))
		ret = item(tok, arg);
	free(copy);
	return ret;
}

/* Add count @s (1..@max) to @list of @cap entries, once. */
static int add_count(const char *s, unsigned int max, unsigned int *list,
		     unsigned int *nr, unsigned int cap)
{
	unsigned int n;

	if (parse_u32(s, &n) < 0 || n < 1 || n > max)
		return -EINVAL;
	for (unsigned int i = 0; i < *nr; i++)
		if (list[i] == n)
			return 0;
	if (*nr == cap)
		return -E2BIG;
	list[(*nr)++] = n;
	return 0;
}

static int add_guests(const char *s, void *arg)
{
	struct bench_config *c = arg;

	return add_count(s, MAX_GUESTS, c->guests, &c->nr_guests,
			 sizeof(c->guests) / sizeof(c->guests[0]));
}

static int add_idle(const char *s, void *arg)
{
	struct bench_config *c = arg;

	return add_count(s, BENCH_MAX_IDLE_GUESTS, c->idle, &c->nr_idle,
			 BENCH_MAX_IDLE_STEPS);
}

static int add_job(const char *s, void *arg)
{
	struct bench_config *c = arg;
	enum bench_job_kind k;

	if (bench_job_lookup(s, &k) < 0)
		return -EINVAL;
	for (unsigned int i = 0; i < c->nr_jobs; i++)
		if (c->jobs[i] == k)
			return 0;
	c->jobs[c->nr_jobs++] = k;
	return 0;
}

static int add_arm(const char *s, void *arg)
{
	struct bench_config *c = arg;
	enum bench_arm a;

	if (bench_arm_lookup(s, &a) < 0)
		return -EINVAL;
	for (unsigned int i = 0; i < c->nr_arms; i++)
		if (c->arms[i] == a)
			return 0;
	c->arms[c->nr_arms++] = a;
	return 0;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return (x > y) - (x < y);
}

/*
 * Run from the build tree (tools/bench/blkback-bench), use the daemon and
 * the simulator built next to it; installed, use the installed ones.
 */
static void default_paths(struct bench_options *o)
{
	char self[PATH_MAX], host[PATH_MAX + 32], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	snprintf(o->default_blkbackd, sizeof(o->default_blkbackd),
		 "%s/blkbackd", BENCH_SBINDIR);
	snprintf(o->default_host, sizeof(o->default_host), "%s/xensim-host",
		 BENCH_PKGLIBEXECDIR);
	snprintf(o->default_ceph, sizeof(o->default_ceph), "%s/ceph-cluster",
		 BENCH_PKGLIBEXECDIR);
	if (n <= 0)
		return;
	self[n] = 0;
	dir = dirname(self);
	snprintf(host, sizeof(host), "%s/../xensim/xensim-host", dir);
	if (access(host, X_OK) == 0 &&
	    strlen(dir) + 32 < sizeof(o->default_host)) {
		strcpy(o->default_host, host);
		snprintf(o->default_blkbackd, sizeof(o->default_blkbackd),
			 "%.*s/../../blkbackd/blkbackd", PATH_MAX - 32, dir);
		snprintf(o->default_ceph, sizeof(o->default_ceph),
			 "%.*s/../ceph/ceph-cluster", PATH_MAX - 32, dir);
	}
}

/*
 * The work once, by default: repeated rounds read the same blocks again,
 * which the loop arms' buffered I/O answers from the page cache, so a
 * repeated job compares blkbackd with a warm cache on a fast disk and a
 * cold one on a slow disk (blkback-bench(1), --min-time).
 */
#define DEFAULT_MIN_TIME 0.0

enum {
	O_IMAGE_SIZE = 256,
	O_SEED,
	O_BLKBACKD,
	O_DAEMON_ARG,
	O_HOST,
	O_CSV,
	O_SVG,
	O_JSON,
	O_WARMUP,
	O_IDLE,
	O_MIN_TIME,
};

static const struct option longopts[] = {
	{ "guests", required_argument, NULL, 'g' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "arms", required_argument, NULL, 'a' },
	{ "size", required_argument, NULL, 's' },
	{ "image-size", required_argument, NULL, O_IMAGE_SIZE },
	{ "time", required_argument, NULL, 't' },
	{ "min-time", required_argument, NULL, O_MIN_TIME },
	{ "repeat", required_argument, NULL, 'r' },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "idle-guests", required_argument, NULL, O_IDLE },
	{ "dir", required_argument, NULL, 'd' },
	{ "seed", required_argument, NULL, O_SEED },
	{ "blkbackd", required_argument, NULL, O_BLKBACKD },
	{ "daemon-arg", required_argument, NULL, O_DAEMON_ARG },
	{ "xensim-host", required_argument, NULL, O_HOST },
	{ "out", required_argument, NULL, 'o' },
	{ "csv", required_argument, NULL, O_CSV },
	{ "svg", required_argument, NULL, O_SVG },
	{ "json", required_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 },
};

static int set_prefix(struct bench_options *o, const char *prefix)
{
	snprintf(o->out_csv, sizeof(o->out_csv), "%s.csv", prefix);
	snprintf(o->out_svg, sizeof(o->out_svg), "%s.svg", prefix);
	snprintf(o->out_json, sizeof(o->out_json), "%s.json", prefix);
	o->csv = o->csv ? o->csv : o->out_csv;
	o->svg = o->svg ? o->svg : o->out_svg;
	o->json = o->json ? o->json : o->out_json;
	return 0;
}

static int parse_one(struct bench_options *o, int c, const char *arg,
		     const char **prefix)
{
	struct bench_config *cfg = &o->cfg;
	char *end;

	switch (c) {
	case 'g':
		cfg->nr_guests = 0;
		return for_each_item(arg, add_guests, cfg);
	case 'j':
		cfg->nr_jobs = 0;
		return strcmp(arg, "none") ? for_each_item(arg, add_job, cfg)
					   : 0;
	case O_IDLE:
		cfg->nr_idle = 0;
		return for_each_item(arg, add_idle, cfg);
	case 'a':
		cfg->nr_arms = 0;
		return for_each_item(arg, add_arm, cfg);
	case 's':
		return parse_size(arg, &cfg->size);
	case O_IMAGE_SIZE:
		return parse_size(arg, &cfg->image_size);
	case 't':
		cfg->time_limit = strtod(arg, &end);
		return *end || !(cfg->time_limit > 0) ? -EINVAL : 0;
	case O_MIN_TIME:
		cfg->min_time = strtod(arg, &end);
		return *end || !(cfg->min_time >= 0) || cfg->min_time > 3600
			       ? -EINVAL
			       : 0;
	case 'r':
		return parse_u32(arg, &cfg->repeat) < 0 || !cfg->repeat ||
				       cfg->repeat > BENCH_MAX_REPEAT
			       ? -EINVAL
			       : 0;
	case O_WARMUP:
		return parse_u32(arg, &cfg->warmup) < 0 || cfg->warmup > 10
			       ? -EINVAL
			       : 0;
	case 'd':
		cfg->dir = arg;
		return 0;
	case O_SEED:
		cfg->seed = strtoull(arg, &end, 0);
		return *end ? -EINVAL : 0;
	case O_BLKBACKD:
		cfg->blkbackd = arg;
		return 0;
	case O_DAEMON_ARG:
		if (o->nr_daemon_args == BENCH_MAX_DAEMON_ARGS)
			return -E2BIG;
		o->daemon_args[o->nr_daemon_args++] = (char *)arg;
		return 0;
	case O_HOST:
		cfg->xensim_host = arg;
		return 0;
	case 'o':
		*prefix = arg;
		return 0;
	case O_CSV:
		o->csv = arg;
		return 0;
	case O_SVG:
		o->svg = arg;
		return 0;
	case O_JSON:
		o->json = arg;
		return 0;
	}
	return -EINVAL;
}

static void set_defaults(struct bench_options *o)
{
	static const unsigned int guests[] = { 1, 4, 10 };
	struct bench_config *cfg = &o->cfg;

	memset(o, 0, sizeof(*o));
	for (unsigned int i = 0; i < 3; i++)
		cfg->guests[cfg->nr_guests++] = guests[i];
	for (int k = 0; k < BENCH_NR_JOBS; k++)
		cfg->jobs[cfg->nr_jobs++] = (enum bench_job_kind)k;
	/* The NBD and RBD arms need servers: they run when asked for. */
	for (int a = 0; a < BENCH_NR_ARMS; a++)
		if (a != BENCH_ARM_NBD && a != BENCH_ARM_RBD)
			cfg->arms[cfg->nr_arms++] = (enum bench_arm)a;
	cfg->size = 64ull << 20;
	cfg->min_time = DEFAULT_MIN_TIME;
	cfg->repeat = 1;
	cfg->warmup = 1;
	cfg->seed = 0x626c6b62656e6368ull; /* fixed: runs are comparable */
	default_paths(o);
	cfg->blkbackd = o->default_blkbackd;
	cfg->xensim_host = o->default_host;
	cfg->ceph_cluster = o->default_ceph;
}

static void bad_argument(int c, const char *arg, char *why, size_t why_len)
{
	for (const struct option *lo = longopts; lo->name; lo++) {
		if (lo->val == c) {
			snprintf(why, why_len,
				 "invalid argument for --%s: '%s'", lo->name,
				 arg ? arg : "");
			return;
		}
	}
	snprintf(why, why_len, "invalid argument '%s'", arg ? arg : "");
}

int bench_parse_options(int argc, char **argv, struct bench_options *o,
			char *why, size_t why_len)
{
	const char *prefix = NULL;
	int c;

	set_defaults(o);
	while ((c = getopt_long(argc, argv, "g:j:a:s:t:r:d:o:hV", longopts,
				NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("blkback-bench (%s) %s\n", PACKAGE_NAME,
			       PACKAGE_VERSION);
			return 1;
		}
		if (c == '?') {
			snprintf(why, why_len,
				 "unknown option or missing "
				 "argument");
			return -EINVAL;
		}
		if (parse_one(o, c, optarg, &prefix) < 0) {
			bad_argument(c, optarg, why, why_len);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		snprintf(why, why_len, "unexpected argument '%s'",
			 argv[optind]);
		return -EINVAL;
	}
	if (!o->cfg.nr_guests || (!o->cfg.nr_jobs && !o->cfg.nr_idle) ||
	    !o->cfg.nr_arms) {
		snprintf(why, why_len,
			 "empty --guests, --jobs or --arms (--jobs none "
			 "needs --idle-guests)");
		return -EINVAL;
	}
	if (o->cfg.nr_idle &&
	    !bench_config_has_arm(&o->cfg, BENCH_ARM_BLKBACKD)) {
		snprintf(why, why_len, "--idle-guests needs the blkbackd arm");
		return -EINVAL;
	}
	qsort(o->cfg.guests, o->cfg.nr_guests, sizeof(o->cfg.guests[0]),
	      cmp_uint);
	qsort(o->cfg.idle, o->cfg.nr_idle, sizeof(o->cfg.idle[0]), cmp_uint);
	if (!o->cfg.image_size)
		o->cfg.image_size = o->cfg.size;
	/* Whole MiB, so that every job's largest operation fits evenly. */
	o->cfg.image_size = (o->cfg.image_size + (1u << 20) - 1) &
			    ~(uint64_t)((1u << 20) - 1);
	if (o->cfg.size < 1u << 20) {
		snprintf(why, why_len, "--size must be at least 1M");
		return -EINVAL;
	}
	if (prefix || (!o->csv && !o->svg && !o->json))
		set_prefix(o, prefix ? prefix : "blkback-bench");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * options_parse() and blkbackd.conf: defaults, a good file, bad names,
 * bad and out-of-range values, and the command line winning over the file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blkbackd/config-file.h"
#include "blkbackd/log.h"
#include "blkbackd/options.h"
#include "libblk/blkif_abi.h"
#include "libblk/engine.h"
#include "libblk/xenbus.h"
#include "tests/check.h"

static const char *dir;
static char errors[8192]; /* what the last parse logged */

static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Run options_parse() on a NULL-terminated argv, capturing its stderr. */
static int parse_argv(struct options *o, const char **args)
{
	char err_path[512];
	char *argv[32] = { "blkbackd" };
	int argc = 1, saved, ret;
	FILE *f;
	size_t n;

	for (; *args; args++)
		argv[argc++] = (char *)*args;
	/* Each test's options are parsed again and again: free the last. */
	options_release(o);
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	fflush(stderr);
	saved = dup(2);
	REQUIRE(freopen(err_path, "w", stderr) != NULL);
	ret = options_parse(o, argc, argv);
	fflush(stderr);
	REQUIRE(dup2(saved, 2) == 2);
	close(saved);
	f = fopen(err_path, "r");
	REQUIRE(f != NULL);
	n = fread(errors, 1, sizeof(errors) - 1, f);
	errors[n] = '\0';
	fclose(f);
	if (errors[0])
		printf("logged:\n%s", errors);
	return ret;
}

#define PARSE(o, ...) parse_argv((o), (const char *[]){ __VA_ARGS__, NULL })

/* Every field of @got as in @want; a new setting adds a line here. */
static void check_options(const struct options *got, const struct options *want)
{
	CHECK_EQ(got->workers, want->workers);
	CHECK_EQ(got->cache, want->cache);
	CHECK_EQ(got->domid, want->domid);
	CHECK_EQ(got->log_level, want->log_level);
	CHECK_EQ(got->max_indirect_segments, want->max_indirect_segments);
	CHECK_EQ(got->max_ring_order, want->max_ring_order);
	CHECK_EQ(got->max_queues, want->max_queues);
	CHECK_EQ(got->max_ring_pages_per_disk, want->max_ring_pages_per_disk);
	CHECK_EQ(got->persistent, want->persistent);
	CHECK_EQ(got->poll_us, want->poll_us);
	CHECK_EQ(got->stage_timing, want->stage_timing);
	CHECK_EQ(got->max_pgrants, want->max_pgrants);
	CHECK_EQ(got->max_mapped_grants, want->max_mapped_grants);
	CHECK_EQ(got->ring_buffer_mib, want->ring_buffer_mib);
	CHECK_EQ(got->buffer_mib, want->buffer_mib);
	CHECK_EQ(got->error_log_interval, want->error_log_interval);
	CHECK_EQ(got->nbd_reconnect_timeout, want->nbd_reconnect_timeout);
	CHECK(!got->state_dir == !want->state_dir);
	if (got->state_dir && want->state_dir)
		CHECK(strcmp(got->state_dir, want->state_dir) == 0);
	CHECK(!got->control_group == !want->control_group);
	if (got->control_group && want->control_group)
		CHECK(strcmp(got->control_group, want->control_group) == 0);
}

static void test_defaults(void)
{
	const struct options want = {
		.workers = 0,
		.cache = BLK_CACHE_NONE,
		.domid = -1,
		.log_level = LOG_INFO,
		.max_indirect_segments = 256,
		.max_ring_order = BLK_MAX_RING_ORDER,
		.max_queues = 0,
		.persistent = true,
		.poll_us = 0,
		.stage_timing = false,
		.max_pgrants = BLK_DEFAULT_MAX_PGRANTS,
		.max_mapped_grants = BLK_DEFAULT_MAX_MAPPED_GRANTS,
		.max_ring_pages_per_disk = DEFAULT_RING_PAGES_PER_DISK,
		.ring_buffer_mib = BLK_DEFAULT_MAX_BOUNCE_PAGES /
				   (1048576 / BLKIF_PAGE_SIZE),
		.buffer_mib = 256,
		.error_log_interval = 10,
		.nbd_reconnect_timeout = 60,
	};
	struct options o = { 0 };
	const char *empty = write_file("empty.conf", "");

	REQUIRE_EQ(PARSE(&o, "--config", empty), 0);
	check_options(&o, &want);
	CHECK_EQ(errors[0], '\0');
	/* systemd's RuntimeDirectory= gives the state directory's default. */
	setenv("RUNTIME_DIRECTORY", "/run/blkbackd", 1);
	REQUIRE_EQ(PARSE(&o, "--config", empty), 0);
	unsetenv("RUNTIME_DIRECTORY");
	CHECK(o.state_dir && strcmp(o.state_dir, "/run/blkbackd") == 0);
	options_release(&o);
}

/* The file reads best as it is written. */
/* clang-format off */
static const char good_conf[] =
	"# every setting\n"
	"workers = 3\n"
	"cache = writeback\n"
	"domid=7\n"
	"  log-level = debug\n"
	"; a comment\n"
	"\n"
	"max-indirect-segments = 0\n"
	"max-ring-page-order = 2\n"
	"max-queues = 5 ; inline\n"
	"max-ring-pages-per-disk = 64\n"
	"persistent-grants = no\n"
	"poll-us = 0\n"
	"stage-timing = yes\n"
	"max-persistent-grants = 16\n"
	"max-mapped-grants = 1000\n"
	"ring-buffer-mib = 64\n"
	"buffer-mib = 0\n"
	"error-log-interval = 2\n"
	"nbd-reconnect-timeout = 0\n"
	"state-dir = /var/lib/blkbackd\n"
	"control-group = blkbackd-ops\n";
/* clang-format on */

static void test_good_file(void)
{
	const struct options want = {
		.workers = 3,
		.cache = BLK_CACHE_WRITEBACK,
		.domid = 7,
		.log_level = LOG_DEBUG,
		.max_indirect_segments = 0,
		.max_ring_order = 2,
		.max_queues = 5,
		.persistent = false,
		.poll_us = 0,
		.stage_timing = true,
		.max_pgrants = 16,
		.max_mapped_grants = 1000,
		.max_ring_pages_per_disk = 64,
		.ring_buffer_mib = 64,
		.buffer_mib = 0,
		.error_log_interval = 2,
		.nbd_reconnect_timeout = 0,
		.state_dir = "/var/lib/blkbackd",
		.control_group = "blkbackd-ops",
	};
	struct options o = { 0 };

	REQUIRE_EQ(PARSE(&o, "--config", write_file("good.conf", good_conf)),
		   0);
	check_options(&o, &want);
	CHECK_EQ(errors[0], '\0');
	options_release(&o);
}

/* The limits are the protocol's and the engine's, both ends included. */
static void test_limits(void)
{
	char text[256];
	struct options o = { 0 };
	const char *conf;

	snprintf(text, sizeof(text),
		 "max-indirect-segments = %u\nmax-ring-page-order = %u\n"
		 "max-queues = %u\nworkers = 1\nring-buffer-mib = 16\n",
		 (unsigned int)BLKIF_MAX_INDIRECT_SEGMENTS, BLK_MAX_RING_ORDER,
		 BLK_MAX_QUEUES);
	conf = write_file("max.conf", text);
	REQUIRE_EQ(PARSE(&o, "--config", conf), 0);
	CHECK_EQ(o.max_indirect_segments, BLKIF_MAX_INDIRECT_SEGMENTS);
	CHECK_EQ(o.max_queues, BLK_MAX_QUEUES);

	snprintf(text, sizeof(text), "%u",
		 (unsigned int)BLKIF_MAX_INDIRECT_SEGMENTS + 1);
	CHECK_EQ(PARSE(&o, "--max-indirect-segments", text), -1);
	CHECK(strstr(errors, "from 0 to 4096") != NULL);
	snprintf(text, sizeof(text), "%u", BLK_MAX_RING_ORDER + 1);
	CHECK_EQ(PARSE(&o, "--max-ring-page-order", text), -1);
	snprintf(text, sizeof(text), "%u", BLK_MAX_QUEUES + 1);
	CHECK_EQ(PARSE(&o, "--max-queues", text), -1);
	CHECK_EQ(PARSE(&o, "--max-queues", "0"), -1);
	CHECK_EQ(PARSE(&o, "--workers", "0"), -1);
	CHECK_EQ(PARSE(&o, "--domid", "32752"), -1);
	CHECK_EQ(PARSE(&o, "--domid", "32751", "--config", conf), 0);
	CHECK_EQ(o.domid, 32751);
	options_release(&o);
}

/*
 * The largest request offered must fit in a ring's bounce buffers (256
 * pages a MiB): a guest sending it would otherwise wait forever.
 */
static void test_indirect_needs_buffers(void)
{
	struct options o = { 0 };
	const char *empty = write_file("empty.conf", "");

	CHECK_EQ(PARSE(&o, "--config", empty, "--max-indirect-segments",
		       "4096"),
		 -1);
	CHECK(strstr(errors, "max-indirect-segments = 4096 needs "
			     "ring-buffer-mib = 16 or more") != NULL);
	CHECK_EQ(PARSE(&o, "--config", empty, "--max-indirect-segments", "1025",
		       "--ring-buffer-mib", "4"),
		 -1);
	CHECK(strstr(errors, "needs ring-buffer-mib = 5") != NULL);
	REQUIRE_EQ(PARSE(&o, "--config", empty, "--max-indirect-segments",
			 "4096", "--ring-buffer-mib", "16"),
		   0);
	options_release(&o);
	REQUIRE_EQ(PARSE(&o, "--config", empty, "--max-indirect-segments",
			 "1024"),
		   0);
	options_release(&o);
}

/* A file with mistakes: refused, with each message naming file:line. */
struct bad_file {
	const char *name;
	const char *text;
	const char *expect[6]; /* substrings of the messages; NULL ends */
};

/* The messages read best whole. */
/* clang-format off */
static const struct bad_file bad_files[] = {
	{
		/* the name at fault and the names that exist */
		"name.conf",
		"workers = 2\n"
		"wrokers = 3\n",
		{ "settings are workers, cache",
		  "name.conf:2: unknown setting 'wrokers'" },
	},
	{
		/* every bad line is reported, not only the first */
		"value.conf",
		"cache = sometimes\n"
		"workers = 4x\n"
		"log-level =\n"
		"persistent-grants = 1\n"
		"state-dir = relative\n",
		{ "value.conf:1: 'cache = sometimes': not valid, it must be "
		  "'none' or 'writeback'",
		  "value.conf:2: 'workers = 4x'",
		  "value.conf:3: 'log-level = '",
		  "value.conf:4: 'persistent-grants = 1'",
		  "value.conf:5: 'state-dir = relative': not valid, it must be "
		  "an absolute path" },
	},
	{
		"range.conf",
		"\n"
		"max-queues = 65\n"
		"workers = 99999999999999999999\n",
		{ "range.conf:2: 'max-queues = 65': out of range, it must be a "
		  "number from 1 to 64",
		  "range.conf:3: 'workers = 9",
		  "out of range, it must be a number from 1 to 1024" },
	},
	{
		"shape.conf",
		"workers = 2\n"
		"just words\n"
		"workers = 3\n"
		"config = /etc/other.conf\n"
		"[daemon]\n"
		"cache = none\n",
		{ "shape.conf:2: not a 'name = value' line",
		  "shape.conf:3: 'workers' is set again (first on line 1)",
		  "shape.conf:4: 'config' can only be given on the command "
		  "line",
		  "shape.conf:6: 'cache' is under [daemon]" },
	},
	{
		/* a group is a name, not a path */
		"group.conf",
		"control-group = staff/ops\n",
		{ "group.conf:1: 'control-group = staff/ops': not valid, it "
		  "must be a name (no blank, no '/')" },
	},
	{
		/* and one word */
		"words.conf",
		"control-group = two words\n",
		{ "words.conf:1: 'control-group = two words': not valid" },
	},
};

/* clang-format on */

static void test_bad_files(void)
{
	struct options o = { 0 };

	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		const struct bad_file *b = &bad_files[i];
		const char *conf = write_file(b->name, b->text);

		CHECK_EQ(PARSE(&o, "--config", conf), -1);
		for (const char *const *e = b->expect; *e; e++)
			if (!strstr(errors, *e)) {
				fprintf(stderr, "%s: no message '%s'\n",
					b->name, *e);
				CHECK(strstr(errors, *e));
			}
	}
	options_release(&o);
}

/* defaults < file < command line, whatever the order of the arguments. */
static void test_override_order(void)
{
	struct options o = { 0 };
	const char *conf = write_file("over.conf", "workers = 3\n"
						   "cache = writeback\n"
						   "max-queues = 2\n");

	REQUIRE_EQ(PARSE(&o, "-w", "5", "--config", conf, "--max-queues", "4"),
		   0);
	CHECK_EQ(o.workers, 5);
	CHECK_EQ(o.max_queues, 4);
	CHECK_EQ(o.cache, BLK_CACHE_WRITEBACK); /* from the file */
	CHECK_EQ(o.max_indirect_segments, 256); /* the default */
	/* The last of a repeated option wins. */
	REQUIRE_EQ(PARSE(&o, "--config", conf, "-w", "5", "-w", "6"), 0);
	CHECK_EQ(o.workers, 6);
	/* A flag takes no argument on the command line, and wins too. */
	conf = write_file("flag.conf", "stage-timing = no\n");
	REQUIRE_EQ(PARSE(&o, "--config", conf, "--stage-timing"), 0);
	CHECK_EQ(o.stage_timing, true);
	/* A good command line does not excuse a bad file. */
	conf = write_file("bad.conf", "workers = 0\n");
	CHECK_EQ(PARSE(&o, "--config", conf, "-w", "5"), -1);
	CHECK(strstr(errors, "bad.conf:1:"));
	options_release(&o);
}

static void test_missing_file(void)
{
	struct options o = { 0 };
	char path[512];

	snprintf(path, sizeof(path), "%s/absent.conf", dir);
	/* Named on the command line, it must exist. */
	CHECK_EQ(PARSE(&o, "--config", path), -1);
	CHECK(strstr(errors, "No such file or directory"));
	/* The default path may be absent. */
	CHECK_EQ(config_load(&o, path, false), CONFIG_ABSENT);
	CHECK_EQ(config_load(&o, dir, true), -EISDIR);
	options_release(&o);
}

static void test_actions(void)
{
	struct options o = { 0 };
	const char *conf = write_file("ok.conf", "workers = 2\n");

	CHECK_EQ(PARSE(&o, "--config", conf, "--check-config"), 1);
	CHECK_EQ(PARSE(&o, "--check-config", "--config", conf, "--cache", "x"),
		 -1);
	CHECK_EQ(PARSE(&o, "--version"), 1);
	CHECK_EQ(PARSE(&o, "--no-such-option"), -1);
	CHECK_EQ(PARSE(&o, "stray"), -1);
	options_release(&o);
}

int main(void)
{
	dir = check_make_dir("test-options");
	log_init(LOG_INFO);
	test_defaults();
	test_good_file();
	test_limits();
	test_indirect_needs_buffers();
	test_bad_files();
	test_override_order();
	test_missing_file();
	test_actions();
	return check_done("test-options");
}

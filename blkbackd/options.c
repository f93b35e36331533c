// SPDX-License-Identifier: MIT
/*
 * The option table, and the command line and --help it drives.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <xen/xen.h> /* DOMID_FIRST_RESERVED */

#include "blkbackd/config-file.h"
#include "blkbackd/log.h"
#include "blkbackd/options.h"
#include "libblk/blkif_abi.h"
#include "libblk/engine.h"
#include "libblk/parse.h"
#include "libblk/xenbus.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD(type, member) \
	.field = (type), .offset = offsetof(struct options, member)

/* Past the characters, so that long-only options get their own getopt code. */
#define LONG_ONLY_BASE 256

enum option_id {
	OPT_ID_WORKERS,
	OPT_ID_CACHE,
	OPT_ID_DOMID,
	OPT_ID_SERVE,
	OPT_ID_LOG_LEVEL,
	OPT_ID_MAX_INDIRECT_SEGMENTS,
	OPT_ID_MAX_RING_PAGE_ORDER,
	OPT_ID_MAX_QUEUES,
	OPT_ID_MAX_RING_PAGES_PER_DISK,
	OPT_ID_PERSISTENT_GRANTS,
	OPT_ID_POLL_US,
	OPT_ID_PIN_WORKERS,
	OPT_ID_STAGE_TIMING,
	OPT_ID_REBALANCE_MS,
	OPT_ID_STATE_DIR,
	OPT_ID_CONTROL_SOCKET,
	OPT_ID_CONTROL_GROUP,
	OPT_ID_MAX_PERSISTENT_GRANTS,
	OPT_ID_MAX_MAPPED_GRANTS,
	OPT_ID_RING_BUFFER_MIB,
	OPT_ID_BUFFER_MIB,
	OPT_ID_ERROR_LOG_INTERVAL,
	OPT_ID_LIMIT_IOPS,
	OPT_ID_LIMIT_BANDWIDTH_MIB,
	OPT_ID_NBD_RECONNECT_TIMEOUT,
	OPT_ID_RBD_ALLOW_NO_EXCLUSIVE_LOCK,
	OPT_ID_CONFIG,
	OPT_ID_CHECK_CONFIG,
	OPT_ID_HELP,
	OPT_ID_VERSION,
	NR_OPTIONS
};

static const struct opt_choice cache_modes[] = {
	{ "none", BLK_CACHE_NONE },
	{ "writeback", BLK_CACHE_WRITEBACK },
	{ NULL, 0 },
};

static const struct opt_choice log_levels[] = {
	{ "err", LOG_ERR },	  { "warning", LOG_WARNING },
	{ "notice", LOG_NOTICE }, { "info", LOG_INFO },
	{ "debug", LOG_DEBUG },	  { NULL, 0 },
};

static const struct opt_choice serve_kinds[] = {
	{ "vbd", SERVE_VBD },
	{ "vbd3", SERVE_VBD3 },
	{ "both", SERVE_VBD | SERVE_VBD3 },
	{ NULL, 0 },
};

static const struct opt_choice yes_no[] = {
	{ "yes", 1 },
	{ "no", 0 },
	{ NULL, 0 },
};

/*
 * The limits come from where the protocol or the engine sets them; only
 * the worker count is the daemon's own (a sanity bound, not a resource).
 */
static const struct opt_desc option_table[NR_OPTIONS] = {
	[OPT_ID_WORKERS] = {
		.name = "workers", .short_name = 'w', .kind = OPT_NUMBER,
		.metavar = "N", .help = "I/O worker threads",
		.min = 1, .max = 1024, .def_text = "online CPUs",
		FIELD(FIELD_UINT, workers),
	},
	[OPT_ID_CACHE] = {
		.name = "cache", .short_name = 'c', .kind = OPT_CHOICE,
		.metavar = "MODE",
		.help = "none: O_DIRECT; writeback: through the page cache",
		.choices = cache_modes, .def = BLK_CACHE_NONE,
		FIELD(FIELD_CACHE_MODE, cache),
	},
	[OPT_ID_DOMID] = {
		.name = "domid", .short_name = 'd', .kind = OPT_NUMBER,
		.metavar = "N", .help = "domain this backend runs in",
		.min = 0, .max = DOMID_FIRST_RESERVED - 1, .def = -1,
		.def_text = "from xenstore", FIELD(FIELD_INT, domid),
	},
	[OPT_ID_SERVE] = {
		.name = "serve", .kind = OPT_CHOICE, .metavar = "KIND",
		.help = "vbd: xl's file: and phy: disks; vbd3: its "
			"backendtype=tap disks, beside xen-blkback; both",
		.choices = serve_kinds, .def = SERVE_VBD,
		FIELD(FIELD_UINT, serve),
	},
	[OPT_ID_LOG_LEVEL] = {
		.name = "log-level", .short_name = 'l', .kind = OPT_CHOICE,
		.metavar = "LEVEL", .help = "least severe messages logged",
		.choices = log_levels, .def = LOG_INFO,
		FIELD(FIELD_INT, log_level),
	},
	[OPT_ID_MAX_INDIRECT_SEGMENTS] = {
		.name = "max-indirect-segments", .kind = OPT_NUMBER,
		.metavar = "N",
		.help = "segments per indirect request (0: no indirect)",
		.min = 0, .max = BLKIF_MAX_INDIRECT_SEGMENTS, .def = 256,
		FIELD(FIELD_UINT, max_indirect_segments),
	},
	[OPT_ID_MAX_RING_PAGE_ORDER] = {
		.name = "max-ring-page-order", .kind = OPT_NUMBER,
		.metavar = "N", .help = "largest ring a guest may use: 2^N pages",
		.min = 0, .max = BLK_MAX_RING_ORDER, .def = BLK_MAX_RING_ORDER,
		FIELD(FIELD_UINT, max_ring_order),
	},
	[OPT_ID_MAX_QUEUES] = {
		.name = "max-queues", .kind = OPT_NUMBER, .metavar = "N",
		.help = "rings per device", .min = 1, .max = BLK_MAX_QUEUES,
		.def_text = "one per worker", FIELD(FIELD_UINT, max_queues),
	},
	[OPT_ID_MAX_RING_PAGES_PER_DISK] = {
		.name = "max-ring-pages-per-disk", .kind = OPT_NUMBER,
		.metavar = "N",
		.help = "ring pages of a device's queues together; fewer "
			"queues offered beyond",
		.min = 1, .max = BLK_MAX_QUEUES << BLK_MAX_RING_ORDER,
		.def = DEFAULT_RING_PAGES_PER_DISK,
		FIELD(FIELD_UINT, max_ring_pages_per_disk),
	},
	[OPT_ID_PERSISTENT_GRANTS] = {
		.name = "persistent-grants", .kind = OPT_CHOICE,
		.metavar = "yes|no", .help = "offer persistent grants",
		.choices = yes_no, .def = 1, FIELD(FIELD_BOOL, persistent),
	},
	[OPT_ID_POLL_US] = {
		.name = "poll-us", .kind = OPT_NUMBER, .metavar = "N",
		.help = "busy-poll up to N us before sleeping (0: never)",
		.min = 0, .max = 1000, .def = 0, FIELD(FIELD_UINT, poll_us),
	},
	[OPT_ID_PIN_WORKERS] = {
		.name = "pin-workers", .kind = OPT_FLAG,
		.help = "run worker N on CPU N, and its events' interrupts",
		.choices = yes_no, .def = 0, FIELD(FIELD_BOOL, pin_workers),
	},
	[OPT_ID_STAGE_TIMING] = {
		.name = "stage-timing", .kind = OPT_FLAG,
		.help = "time each request's stages (see SIGUSR1)",
		.choices = yes_no, .def = 0, FIELD(FIELD_BOOL, stage_timing),
	},
	[OPT_ID_REBALANCE_MS] = {
		.name = "rebalance-ms", .kind = OPT_NUMBER, .metavar = "N",
		.help = "every N ms, move a busy ring off a crowded worker "
			"(0: never)",
		.min = 0, .max = 60000, .def = 1000,
		FIELD(FIELD_UINT, rebalance_ms),
	},
	[OPT_ID_STATE_DIR] = {
		.name = "state-dir", .kind = OPT_PATH, .metavar = "DIR",
		.help = "where ring journals survive a crash",
		.def_env = "RUNTIME_DIRECTORY",
		.def_text = "$RUNTIME_DIRECTORY (systemd), else none",
		FIELD(FIELD_STRING, state_dir),
	},
	[OPT_ID_CONTROL_SOCKET] = {
		.name = "control-socket", .kind = OPT_PATH, .metavar = "PATH",
		.help = "blkbackctl's socket",
		.def_text = "control in --state-dir; none without one",
		FIELD(FIELD_STRING, control_socket),
	},
	[OPT_ID_CONTROL_GROUP] = {
		.name = "control-group", .kind = OPT_NAME, .metavar = "GROUP",
		.help = "this group's members may use blkbackctl too "
			"(the socket is then 0660)",
		.def_text = "none: root only",
		FIELD(FIELD_STRING, control_group),
	},
	[OPT_ID_MAX_PERSISTENT_GRANTS] = {
		.name = "max-persistent-grants", .kind = OPT_NUMBER,
		.metavar = "N", .help = "grants mapped per ring",
		.min = 16, .max = 65536, .def = BLK_DEFAULT_MAX_PGRANTS,
		FIELD(FIELD_UINT, max_pgrants),
	},
	[OPT_ID_MAX_MAPPED_GRANTS] = {
		.name = "max-mapped-grants", .kind = OPT_NUMBER,
		.metavar = "N",
		.help = "grants mapped by all rings together, their own "
			"pages included",
		.min = BLK_MAX_RING_PAGES, .max = 16777216,
		.def = BLK_DEFAULT_MAX_MAPPED_GRANTS,
		FIELD(FIELD_UINT, max_mapped_grants),
	},
	[OPT_ID_RING_BUFFER_MIB] = {
		.name = "ring-buffer-mib", .kind = OPT_NUMBER, .metavar = "N",
		.help = "MiB of bounce buffers per ring", .min = 1, .max = 64,
		.def = BLK_DEFAULT_MAX_BOUNCE_PAGES * BLKIF_PAGE_SIZE >> 20,
		FIELD(FIELD_UINT, ring_buffer_mib),
	},
	[OPT_ID_BUFFER_MIB] = {
		.name = "buffer-mib", .kind = OPT_NUMBER, .metavar = "N",
		.help = "MiB of bounce buffers shared by all rings",
		.min = 0, .max = 65536, .def = 256,
		FIELD(FIELD_UINT, buffer_mib),
	},
	[OPT_ID_ERROR_LOG_INTERVAL] = {
		.name = "error-log-interval", .kind = OPT_NUMBER,
		.metavar = "SECONDS",
		.help = "a disk's repeated host I/O errors: one line per SECONDS",
		.min = 1, .max = 86400, .def = 10,
		FIELD(FIELD_UINT, error_log_interval),
	},
	[OPT_ID_LIMIT_IOPS] = {
		.name = "limit-iops", .kind = OPT_NUMBER, .metavar = "N",
		.help = "requests per second per disk, unless its xenstore "
			"says (0: none)",
		.min = 0, .max = 10000000, .def = 0,
		FIELD(FIELD_UINT, limit_iops),
	},
	[OPT_ID_LIMIT_BANDWIDTH_MIB] = {
		.name = "limit-bandwidth-mib", .kind = OPT_NUMBER,
		.metavar = "N",
		.help = "MiB per second per disk, unless its xenstore says "
			"(0: none)",
		.min = 0, .max = 1048576, .def = 0,
		FIELD(FIELD_UINT, limit_bandwidth_mib),
	},
	[OPT_ID_NBD_RECONNECT_TIMEOUT] = {
		.name = "nbd-reconnect-timeout", .kind = OPT_NUMBER,
		.metavar = "SECONDS",
		.help = "requests wait this long for a lost NBD server "
			"(0: fail at once)",
		.min = 0, .max = 3600, .def = 60,
		FIELD(FIELD_UINT, nbd_reconnect_timeout),
	},
	[OPT_ID_RBD_ALLOW_NO_EXCLUSIVE_LOCK] = {
		.name = "rbd-allow-no-exclusive-lock", .kind = OPT_FLAG,
		.help = "serve writable RBD images without the exclusive-lock "
			"feature, which nothing keeps a second writer from",
		.choices = yes_no, .def = 0,
		FIELD(FIELD_BOOL, rbd_allow_no_exclusive_lock),
	},
	[OPT_ID_CONFIG] = {
		.name = "config", .kind = OPT_PATH, .metavar = "FILE",
		.help = "configuration file", .def_text = BLKBACKD_CONFIG_PATH,
	},
	[OPT_ID_CHECK_CONFIG] = {
		.name = "check-config", .kind = OPT_ACTION,
		.help = "check the configuration, print the settings and exit",
	},
	[OPT_ID_HELP] = {
		.name = "help", .short_name = 'h', .kind = OPT_ACTION,
		.help = "show this help and exit",
	},
	[OPT_ID_VERSION] = {
		.name = "version", .short_name = 'V', .kind = OPT_ACTION,
		.help = "show the version and exit",
	},
};

const struct opt_desc *option_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++)
		if (strcmp(option_table[i].name, name) == 0)
			return &option_table[i];
	return NULL;
}

bool option_is_setting(const struct opt_desc *d)
{
	return d->field != FIELD_NONE;
}

/*
 * Append item @i of @count to the list in @buf, as "a, b and c" with
 * @last_sep before the last one.
 */
static void list_append(char *buf, size_t len, size_t *used, const char *item,
			size_t i, size_t count, const char *last_sep)
{
	const char *sep = i == 0 ? "" : i + 1 == count ? last_sep : ", ";

	if (*used < len)
		*used += (size_t)snprintf(buf + *used, len - *used, "%s%s", sep,
					  item);
}

void options_list_settings(char *buf, size_t len)
{
	size_t used = 0, count = 0, i = 0;

	for (size_t k = 0; k < ARRAY_SIZE(option_table); k++)
		count += option_is_setting(&option_table[k]);
	buf[0] = '\0';
	for (size_t k = 0; k < ARRAY_SIZE(option_table); k++)
		if (option_is_setting(&option_table[k]))
			list_append(buf, len, &used, option_table[k].name, i++,
				    count, " and ");
}

/*
 * Digits (libblk/parse.h): -EINVAL for anything else, -ERANGE for digits
 * past what a long holds.
 */
static int parse_number(const char *s, long *out)
{
	bool digits = *s && s[strspn(s, "0123456789")] == '\0';
	uint64_t v;

	if (blk_parse_u64(s, UINT64_MAX, &v) < 0)
		return digits ? -ERANGE : -EINVAL;
	if (v > LONG_MAX)
		return -ERANGE;
	*out = (long)v;
	return 0;
}

static const struct opt_choice *find_choice(const struct opt_choice *c,
					    const char *name)
{
	for (; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static const char *choice_name(const struct opt_choice *c, long value)
{
	for (; c->name; c++)
		if (c->value == value)
			return c->name;
	return "?";
}

const char *option_choice_name(const struct opt_desc *d, long value)
{
	return d->choices ? choice_name(d->choices, value) : "?";
}

/* Parse @text for a number or choice option @d into @value. */
static int parse_value(const struct opt_desc *d, const char *text, long *value)
{
	const struct opt_choice *c;
	int ret;

	switch (d->kind) {
	case OPT_NUMBER:
		ret = parse_number(text, value);
		if (ret == 0 && (*value < d->min || *value > d->max))
			ret = -ERANGE;
		return ret;
	case OPT_CHOICE:
	case OPT_FLAG:
		c = find_choice(d->choices, text);
		if (!c)
			return -EINVAL;
		*value = c->value;
		return 0;
	default:
		return -EINVAL;
	}
}

void option_describe(const struct opt_desc *d, char *buf, size_t len)
{
	char quoted[32];
	size_t used = 0, count = 0;

	if (d->kind == OPT_NUMBER) {
		snprintf(buf, len, "a number from %ld to %ld", d->min, d->max);
		return;
	}
	if (d->kind == OPT_PATH) {
		snprintf(buf, len, "an absolute path");
		return;
	}
	if (d->kind == OPT_NAME) {
		snprintf(buf, len, "a name (no blank, no '/')");
		return;
	}
	while (d->choices[count].name)
		count++;
	buf[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		snprintf(quoted, sizeof(quoted), "'%s'", d->choices[i].name);
		list_append(buf, len, &used, quoted, i, count, " or ");
	}
}

static void *field_of(struct options *opts, const struct opt_desc *d)
{
	return (char *)opts + d->offset;
}

static void store_value(struct options *opts, const struct opt_desc *d,
			long value)
{
	void *field = field_of(opts, d);

	switch (d->field) {
	case FIELD_UINT:
		*(unsigned int *)field = (unsigned int)value;
		break;
	case FIELD_INT:
		*(int *)field = (int)value;
		break;
	case FIELD_BOOL:
		*(bool *)field = value != 0;
		break;
	case FIELD_CACHE_MODE:
		*(enum blk_cache_mode *)field = (enum blk_cache_mode)value;
		break;
	case FIELD_STRING:
	case FIELD_NONE:
		break;
	}
}

static const char **string_field(struct options *opts, const struct opt_desc *d)
{
	return field_of(opts, d);
}

static const char *string_value(const struct options *opts,
				const struct opt_desc *d)
{
	return *(const char *const *)((const char *)opts + d->offset);
}

int option_set(struct options *opts, const struct opt_desc *d, const char *text)
{
	char *copy;
	long v;
	int ret;

	if (d->field != FIELD_STRING) {
		ret = parse_value(d, text, &v);
		if (ret == 0)
			store_value(opts, d, v);
		return ret;
	}
	/* A relative path would depend on the directory started in. */
	if (d->kind == OPT_PATH && text[0] != '/')
		return -EINVAL;
	if (d->kind == OPT_NAME && (!text[0] || strpbrk(text, "/ \t\n")))
		return -EINVAL;
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	free((char *)*string_field(opts, d));
	*string_field(opts, d) = copy;
	return 0;
}

void options_release(struct options *opts)
{
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++) {
		const struct opt_desc *d = &option_table[i];

		if (d->field != FIELD_STRING)
			continue;
		free((char *)*string_field(opts, d));
		*string_field(opts, d) = NULL;
	}
}

static long option_load(const struct options *opts, const struct opt_desc *d)
{
	const void *field = (const char *)opts + d->offset;

	switch (d->field) {
	case FIELD_UINT:
		return *(const unsigned int *)field;
	case FIELD_INT:
		return *(const int *)field;
	case FIELD_BOOL:
		return *(const bool *)field;
	case FIELD_CACHE_MODE:
		return *(const enum blk_cache_mode *)field;
	case FIELD_STRING:
	case FIELD_NONE:
		break;
	}
	return 0;
}

static bool option_differs(const struct options *a, const struct options *b,
			   const struct opt_desc *d)
{
	const char *sa, *sb;

	if (d->field != FIELD_STRING)
		return option_load(a, d) != option_load(b, d);
	sa = *(const char *const *)((const char *)a + d->offset);
	sb = *(const char *const *)((const char *)b + d->offset);
	return !sa != !sb || (sa && strcmp(sa, sb) != 0);
}

void options_each_change(const struct options *a, const struct options *b,
			 void (*fn)(const struct opt_desc *d, void *arg),
			 void *arg)
{
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++)
		if (option_is_setting(&option_table[i]) &&
		    option_differs(a, b, &option_table[i]))
			fn(&option_table[i], arg);
}

int options_set_defaults(struct options *opts)
{
	const char *env;

	*opts = (struct options){ 0 };
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++) {
		const struct opt_desc *d = &option_table[i];

		if (d->field != FIELD_STRING) {
			store_value(opts, d, d->def);
			continue;
		}
		env = d->def_env ? getenv(d->def_env) : NULL;
		/* A copy, so that every string setting is freed alike. */
		if (env && env[0] && option_set(opts, d, env) == -ENOMEM) {
			options_release(opts);
			return -ENOMEM;
		}
	}
	return 0;
}

/* "-w, --workers N" */
static int format_synopsis(const struct opt_desc *d, char *buf, size_t len)
{
	char shortopt[8] = "    ";

	if (d->short_name)
		snprintf(shortopt, sizeof(shortopt), "-%c, ", d->short_name);
	return snprintf(buf, len, "%s--%s%s%s", shortopt, d->name,
			d->metavar ? " " : "", d->metavar ? d->metavar : "");
}

static void print_default(FILE *out, const struct opt_desc *d)
{
	if (d->def_text)
		fprintf(out, " (default: %s)", d->def_text);
	else if (d->kind == OPT_NUMBER)
		fprintf(out, " (default: %ld)", d->def);
	else if (d->kind == OPT_CHOICE || d->kind == OPT_FLAG)
		fprintf(out, " (default: %s)", choice_name(d->choices, d->def));
}

/* Where --help's descriptions start, after the synopses. */
#define HELP_COLUMN 22

static void usage(FILE *out)
{
	char synopsis[64], accepts[128];

	fprintf(out, "Usage: blkbackd [OPTION]...\n"
		     "Serve Xen guests' virtual block devices from image "
		     "files.\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++) {
		const struct opt_desc *d = &option_table[i];

		/* Long synopses get the help on a line of its own. */
		if (format_synopsis(d, synopsis, sizeof(synopsis)) >=
		    HELP_COLUMN)
			fprintf(out, "  %s\n  %-*s", synopsis, HELP_COLUMN, "");
		else
			fprintf(out, "  %-*s", HELP_COLUMN, synopsis);
		fprintf(out, "%s", d->help);
		if (option_is_setting(d)) {
			option_describe(d, accepts, sizeof(accepts));
			fprintf(out, ";\n  %-*s%s%s", HELP_COLUMN, "",
				d->kind == OPT_FLAG ? "in the file, " : "",
				accepts);
		}
		print_default(out, d);
		fputc('\n', out);
	}
	fprintf(out, "\nEvery setting can also be given in the configuration "
		     "file as 'name = value';\nthe command line wins. See "
		     "blkbackd(8) and blkbackd.conf(5).\n");
}

/* The settings in effect, as blkbackd.conf lines (--check-config). */
static void print_settings(FILE *out, const struct options *opts)
{
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++) {
		const struct opt_desc *d = &option_table[i];
		long v;

		if (!option_is_setting(d))
			continue;
		if (d->field == FIELD_STRING) {
			if (string_value(opts, d))
				fprintf(out, "%s = %s\n", d->name,
					string_value(opts, d));
			else
				fprintf(out, "# %s: %s\n", d->name,
					d->def_text);
			continue;
		}
		v = option_load(opts, d);
		if (d->def_text && v == d->def)
			fprintf(out, "# %s: %s\n", d->name, d->def_text);
		else if (d->kind == OPT_CHOICE || d->kind == OPT_FLAG)
			fprintf(out, "%s = %s\n", d->name,
				choice_name(d->choices, v));
		else
			fprintf(out, "%s = %ld\n", d->name, v);
	}
}

static void build_getopt_tables(struct option *longopts, char *shortopts)
{
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++) {
		const struct opt_desc *d = &option_table[i];
		bool arg = d->kind != OPT_ACTION && d->kind != OPT_FLAG;

		longopts[i] = (struct option){
			.name = d->name,
			.has_arg = arg ? required_argument : no_argument,
			.val = d->short_name ? d->short_name
					     : LONG_ONLY_BASE + (int)i,
		};
		if (d->short_name) {
			*shortopts++ = (char)d->short_name;
			if (arg)
				*shortopts++ = ':';
		}
	}
	longopts[ARRAY_SIZE(option_table)] = (struct option){ 0 };
	*shortopts = '\0';
}

static int option_index_of(int getopt_code)
{
	if (getopt_code >= LONG_ONLY_BASE)
		return getopt_code - LONG_ONLY_BASE;
	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++)
		if (option_table[i].short_name == getopt_code)
			return (int)i;
	return -1;
}

/*
 * First pass over argv: the last text given for each option, so that the
 * configuration file can be read (from --config) before the command line
 * is applied over it.
 */
static int scan_command_line(int argc, char **argv, const char **given)
{
	struct option longopts[NR_OPTIONS + 1];
	char shortopts[2 * NR_OPTIONS + 2];
	int c, i;

	build_getopt_tables(longopts, shortopts);
	/* 0 restarts getopt: each parse starts afresh (tests parse often). */
	optind = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		i = option_index_of(c);
		if (i < 0) {
			/* getopt_long() has said what it did not like. */
			usage(stderr);
			return -1;
		}
		given[i] = optarg ? optarg : "";
	}
	if (optind < argc) {
		log_err("unexpected argument '%s' (blkbackd takes only "
			"options; see --help)",
			argv[optind]);
		return -1;
	}
	return 0;
}

static int apply_command_line(struct options *opts, const char **given)
{
	char accepts[128];
	int errors = 0;

	for (size_t i = 0; i < ARRAY_SIZE(option_table); i++) {
		const struct opt_desc *d = &option_table[i];

		if (!given[i] || !option_is_setting(d))
			continue;
		if (d->kind == OPT_FLAG) {
			store_value(opts, d, 1);
			continue;
		}
		if (option_set(opts, d, given[i]) < 0) {
			option_describe(d, accepts, sizeof(accepts));
			log_err("--%s wants %s, not '%s'", d->name, accepts,
				given[i]);
			errors++;
		}
	}
	return errors ? -1 : 0;
}

/*
 * Settings that are fine alone and wrong together. A request's data must
 * fit in its ring's bounce buffers, or a guest that sends the largest
 * request offered waits for buffers forever.
 */
static int check_together(const struct options *opts)
{
	unsigned int per_mib = 1048576u / BLKIF_PAGE_SIZE;
	unsigned int need =
		(opts->max_indirect_segments + per_mib - 1) / per_mib;

	if (opts->ring_buffer_mib >= need)
		return 0;
	log_err("max-indirect-segments = %u needs ring-buffer-mib = %u or "
		"more: a ring's bounce buffers (%u MiB) must hold one request "
		"of that many 4 KiB segments; raise ring-buffer-mib or lower "
		"max-indirect-segments",
		opts->max_indirect_segments, need, opts->ring_buffer_mib);
	return -1;
}

int options_parse(struct options *opts, int argc, char **argv)
{
	const char *given[NR_OPTIONS] = { 0 };
	const char *config;
	int file_ret, cmdline_ret;

	if (scan_command_line(argc, argv, given) < 0)
		return -1;
	if (given[OPT_ID_HELP]) {
		usage(stdout);
		return 1;
	}
	if (given[OPT_ID_VERSION]) {
		printf("blkbackd %s\n", PACKAGE_VERSION);
		return 1;
	}
	if (options_set_defaults(opts) < 0) {
		log_err("out of memory");
		return -1;
	}
	/* A file named on the command line must exist; the default need not. */
	config = given[OPT_ID_CONFIG];
	file_ret = config_load(opts, config ? config : BLKBACKD_CONFIG_PATH,
			       config != NULL);
	cmdline_ret = apply_command_line(opts, given);
	if (file_ret < 0 || cmdline_ret < 0 || check_together(opts) < 0) {
		options_release(opts);
		return -1;
	}
	if (given[OPT_ID_CHECK_CONFIG]) {
		printf("# %s: %s\n", config ? config : BLKBACKD_CONFIG_PATH,
		       file_ret == CONFIG_ABSENT ? "absent, defaults apply"
						 : "OK");
		print_settings(stdout, opts);
		options_release(opts);
		return 1;
	}
	return 0;
}

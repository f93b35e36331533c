/* SPDX-License-Identifier: MIT */
/*
 * The daemon's settings and the one table that describes them.
 *
 * Every setting is a row of the option table in options.c: its long and
 * short command-line name (which is also its key in blkbackd.conf), its
 * default, its range or its choices, and its help line. getopt_long(),
 * the configuration file reader, the range checks, --help and
 * --check-config's listing are all driven by that table, so a new setting
 * is one row and one field of struct options.
 *
 * Everything here runs on the main thread at startup, before any worker
 * exists; the table is constant.
 */
#ifndef BLKBACKD_OPTIONS_H
#define BLKBACKD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "libblk/image.h"

/* The backend directories a daemon serves (the serve setting). */
#define SERVE_VBD 1u /* backend/vbd: xl's file: and phy: disks */
#define SERVE_VBD3 2u /* backend/vbd3: xl's backendtype=tap disks */

/*
 * Ring pages a device's queues may map together: 8 queues of the largest
 * (16-page) rings, as many as xen-blkback's defaults give a guest with 8
 * vCPUs; see blkbackd(8).
 */
#define DEFAULT_RING_PAGES_PER_DISK 128u

struct options {
	unsigned int workers; /* 0: one per online CPU */
	unsigned int serve; /* SERVE_* bits, at least one */
	enum blk_cache_mode cache;
	int domid; /* -1: ask xenstore */
	int log_level;
	unsigned int max_indirect_segments; /* 0: no indirect requests */
	unsigned int max_ring_order;
	unsigned int max_queues; /* 0: one per worker */
	/* Queues x ring pages a device may offer and use (vbd_cap_rings()). */
	unsigned int max_ring_pages_per_disk;
	bool persistent; /* offer persistent grants */
	unsigned int poll_us; /* busy-poll window cap, 0: never poll */
	bool pin_workers; /* worker N on CPU N, its interrupts too */
	unsigned int max_pgrants; /* persistent grants per ring */
	unsigned int max_mapped_grants; /* persistent grants of all rings */
	unsigned int ring_buffer_mib; /* bounce memory per ring */
	unsigned int buffer_mib; /* bounce memory for all rings together */
	unsigned int error_log_interval; /* seconds between error summaries */
	unsigned int nbd_reconnect_timeout; /* seconds requests wait for NBD */
	/* Serve a writable RBD image that has no exclusive-lock feature. */
	bool rbd_allow_no_exclusive_lock;
	bool stage_timing; /* time each request's stages */
	unsigned int rebalance_ms; /* balance.h's interval, 0: never */
	unsigned int limit_iops; /* a disk's default limit, 0: none */
	unsigned int limit_bandwidth_mib; /* MiB/s, the same */
	const char *state_dir; /* ring journals; NULL: none */
	const char *control_socket; /* NULL: <state_dir>/control, if any */
	const char *control_group; /* may use it too; NULL: root only */
};

/* What kind of text an option takes. */
enum opt_kind {
	OPT_NUMBER, /* a decimal number from .min to .max */
	OPT_CHOICE, /* one of the names in .choices */
	OPT_FLAG, /* no argument (on); in blkbackd.conf, yes or no */
	OPT_PATH, /* a file name; absolute for a setting */
	OPT_NAME, /* a user or group name: no blank, no '/', not empty */
	OPT_ACTION, /* no argument: do something and exit */
};

/* The type of the struct options field an option sets. */
enum opt_field {
	FIELD_NONE, /* --config and the actions: not a setting */
	FIELD_UINT,
	FIELD_INT,
	FIELD_BOOL,
	FIELD_CACHE_MODE,
	FIELD_STRING, /* const char *, NULL when unset */
};

struct opt_choice {
	const char *name;
	int value;
};

struct opt_desc {
	const char *name; /* --name, and the key in blkbackd.conf */
	int short_name; /* -x, or 0 */
	enum opt_kind kind;
	const char *metavar; /* the argument in --help */
	const char *help; /* one line; the range and default are added */
	long min, max; /* OPT_NUMBER */
	const struct opt_choice *choices; /* CHOICE, FLAG; NULL name ends it */
	long def; /* the default value of the field */
	const char *def_env; /* FIELD_STRING: the default's variable */
	/* Said instead of def when the default is not a value one can set. */
	const char *def_text;
	enum opt_field field;
	size_t offset; /* of the field in struct options */
};

/* The option named @name (without dashes), or NULL. */
const struct opt_desc *option_find(const char *name);
/* Whether @d is a setting, which blkbackd.conf may contain too. */
bool option_is_setting(const struct opt_desc *d);
/* The names of all settings, "workers, cache, ... and persistent-grants". */
void options_list_settings(char *buf, size_t len);

/*
 * Set the setting @d of @opts from @text, as written on the command line
 * or in the file: -EINVAL when it is not a number, not one of the choices
 * or not an absolute path, -ERANGE when the number is out of range,
 * -ENOMEM. String settings are copied and live as long as the process.
 */
int option_set(struct options *opts, const struct opt_desc *d,
	       const char *text);
/* What @d accepts, for an error message: "a number from 1 to 64". */
void option_describe(const struct opt_desc *d, char *buf, size_t len);
/* The name of the choice of @d whose value is @value, or "?". */
const char *option_choice_name(const struct opt_desc *d, long value);

/*
 * Every setting at its default; -ENOMEM. Whatever @opts held is dropped,
 * not freed: release it first.
 */
int options_set_defaults(struct options *opts);
/* Free the string settings @opts owns; they read NULL afterwards. */
void options_release(struct options *opts);

/* Call @fn with every setting whose value differs between @a and @b. */
void options_each_change(const struct options *a, const struct options *b,
			 void (*fn)(const struct opt_desc *d, void *arg),
			 void *arg);

/*
 * Fill @opts from the defaults, then the configuration file (--config, or
 * BLKBACKD_CONFIG_PATH, whose absence is fine), then the command line, so
 * that the command line wins. Errors are logged with log_err(), naming
 * the file and line or the option, what is accepted and the fix.
 *
 * Returns 0 to run, 1 when the program should exit successfully (--help,
 * --version, a valid --check-config), -1 when it should fail (any error;
 * all of them have been reported). Only after 0 does @opts own strings,
 * which options_release() frees once the workers that borrow them are
 * gone.
 */
int options_parse(struct options *opts, int argc, char **argv);

#endif /* BLKBACKD_OPTIONS_H */

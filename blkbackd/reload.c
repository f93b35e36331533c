// SPDX-License-Identifier: MIT
/*
 * Configuration reload.
 */
#include <errno.h>
#include <string.h>

#include "blkbackd/daemon.h"
#include "blkbackd/host-errors.h"
#include "blkbackd/log.h"
#include "blkbackd/reload.h"
#include "blkbackd/vbd.h"

struct reload {
	struct daemon *d;
	const struct options *fresh;
	reload_note_fn *note;
	void *arg;
};

static void apply_log_level(struct daemon *d, const struct options *fresh)
{
	d->opts.log_level = fresh->log_level;
	log_set_level(fresh->log_level);
}

static void apply_error_log_interval(struct daemon *d,
				     const struct options *fresh)
{
	d->opts.error_log_interval = fresh->error_log_interval;
	host_errors_set_interval(d->host_errors, fresh->error_log_interval);
}

/* New default I/O limits: for every disk whose xenstore sets none. */
static void apply_limit_iops(struct daemon *d, const struct options *fresh)
{
	d->opts.limit_iops = fresh->limit_iops;
	vbd_refresh_limits_all(d);
}

static void apply_limit_bandwidth(struct daemon *d, const struct options *fresh)
{
	d->opts.limit_bandwidth_mib = fresh->limit_bandwidth_mib;
	vbd_refresh_limits_all(d);
}

/* The settings a reload applies; see reload.h for why only these. */
/* Sharing the workers: the main loop reads the interval at each turn. */
static void apply_rebalance(struct daemon *d, const struct options *fresh)
{
	d->opts.rebalance_ms = fresh->rebalance_ms;
}

/* Asked at each open of a writable RBD image: the next attach sees it. */
static void apply_rbd_unlocked(struct daemon *d, const struct options *fresh)
{
	d->opts.rbd_allow_no_exclusive_lock =
		fresh->rbd_allow_no_exclusive_lock;
}

static const struct {
	const char *name;
	void (*apply)(struct daemon *d, const struct options *fresh);
} live_settings[] = {
	{ "log-level", apply_log_level },
	{ "error-log-interval", apply_error_log_interval },
	{ "limit-iops", apply_limit_iops },
	{ "limit-bandwidth-mib", apply_limit_bandwidth },
	{ "rebalance-ms", apply_rebalance },
	{ "rbd-allow-no-exclusive-lock", apply_rbd_unlocked },
};

static void apply_change(const struct opt_desc *opt, void *arg)
{
	struct reload *r = arg;

	for (size_t i = 0; i < sizeof(live_settings) / sizeof(live_settings[0]);
	     i++) {
		if (strcmp(opt->name, live_settings[i].name) == 0) {
			live_settings[i].apply(r->d, r->fresh);
			log_notice("reload: %s changed", opt->name);
			if (r->note)
				r->note(opt->name, true, r->arg);
			return;
		}
	}
	if (r->note)
		r->note(opt->name, false, r->arg);
	log_warn("reload: %s changed; it takes effect when blkbackd restarts "
		 "(systemctl restart blkbackd: the guests pause, they keep "
		 "running)",
		 opt->name);
}

int daemon_reload(struct daemon *d, reload_note_fn *note, void *arg)
{
	struct options fresh;
	struct reload r = { .d = d, .fresh = &fresh, .note = note, .arg = arg };

	log_info("reloading the configuration");
	if (options_parse(&fresh, d->argc, d->argv) != 0) {
		log_err("reload: the configuration has errors (above); the "
			"running settings stay");
		return -EINVAL;
	}
	options_each_change(&d->opts, &fresh, apply_change, &r);
	options_release(&fresh);
	return 0;
}

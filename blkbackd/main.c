// SPDX-License-Identifier: MIT
/*
 * blkbackd: the main thread. It owns xenstore, signals and the worker
 * pool; the workers own the data path.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "blkbackd/balance.h"
#include "blkbackd/control-server.h"
#include "blkbackd/daemon.h"
#include "blkbackd/host-errors.h"
#include "blkbackd/log.h"
#include "blkbackd/opener.h"
#include "blkbackd/options.h"
#include "blkbackd/reload.h"
#include "blkbackd/vbd-move.h"
#include "blkbackd/vbd.h"
#include "blkbackd/worker.h"
#include "libblk/parse.h"

/*
 * Linux's xen-blkback claims backend/vbd too; two backends answering one
 * device would corrupt it. It never looks at backend/vbd3, so a daemon
 * serving only that runs beside it. BLKBACKD_SYSFS lets tests point at a
 * fake tree.
 */
static int check_no_kernel_backend(void)
{
	const char *sysfs = getenv("BLKBACKD_SYSFS");
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/bus/xen-backend/drivers/vbd",
		 sysfs ? sysfs : "/sys");
	if (stat(path, &st) < 0)
		return 0;
	log_err("the kernel's xen-blkback driver is loaded (%s exists) and "
		"serves backend/vbd, which blkbackd would serve too. Either "
		"hand backend/vbd to blkbackd with 'blkbackd-takeover on' "
		"(it unloads xen-blkback, with 'modprobe -r xen-blkback', "
		"and keeps it out; see blkbackd-takeover(8)), or keep "
		"xen-blkback and serve backendtype=tap disks only "
		"(serve = vbd3 in blkbackd.conf, Xen 4.19 or later)",
		path);
	return -EBUSY;
}

/*
 * May the workers read CLOCK_MONOTONIC a few times per pass for the
 * requests' busy time? Only where the vDSO serves it without a system
 * call: the tsc clock source does; Xen's in a PV dom0 does not, and a
 * clock read per pass there would be a system call more per request.
 * With --stage-timing the clock is read anyway. Elsewhere the busy time
 * is measured with the tick-coarse clock, which the vDSO always serves:
 * exact on average over many requests, not for one.
 */
static bool precise_clock_is_cheap(const struct daemon *d)
{
	const char *sysfs = getenv("BLKBACKD_SYSFS");
	char path[256], source[32] = "";
	FILE *f;

	if (d->opts.stage_timing)
		return true;
	snprintf(path, sizeof(path),
		 "%s/devices/system/clocksource/clocksource0/"
		 "current_clocksource",
		 sysfs ? sysfs : "/sys");
	f = fopen(path, "re");
	if (f) {
		if (!fgets(source, sizeof(source), f))
			source[0] = '\0';
		fclose(f);
	}
	source[strcspn(source, "\n")] = '\0';
	log_info("request times: %s clock (clock source %s)",
		 strcmp(source, "tsc") == 0 ? "the precise" : "the tick-coarse",
		 source[0] ? source : "unknown");
	return strcmp(source, "tsc") == 0;
}

static int find_domid(struct daemon *d)
{
	uint64_t domid = 0;
	unsigned int len;
	char *s;
	int ret = 0;

	if (d->opts.domid >= 0) {
		d->domid = (unsigned int)d->opts.domid;
		return 0;
	}
	/*
	 * A relative path reads this domain's own /local/domain/N/domid;
	 * a xenstored that has none is dom0's.
	 */
	s = xs_read(d->xs, XBT_NULL, "domid", &len);
	if (s && blk_parse_u64(s, DOMID_FIRST_RESERVED - 1, &domid) < 0) {
		log_err("this domain's xenstore node domid holds '%s', not a "
			"domain id; start blkbackd with --domid N",
			s);
		ret = -EINVAL;
	}
	free(s);
	d->domid = (unsigned int)domid;
	return ret;
}

#define MIB_PAGES (1048576u / BLKIF_PAGE_SIZE)

/* What a failure to open the Xen devices means, for the log. */
static const char *xen_devices_hint(int err)
{
	return err == -ENOENT ? " (no /dev/xen/gntdev or /dev/xen/evtchn: is "
				"this a Xen domain with xen-gntdev and "
				"xen-evtchn loaded?)"
			      : "";
}

static int start_workers(struct daemon *d)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int n = d->opts.workers ? d->opts.workers
					 : (cpus > 0 ? (unsigned int)cpus : 1);
	struct worker_config cfg = {
		.poll_us = d->opts.poll_us,
		.pin = d->opts.pin_workers,
		.stage_timing = d->opts.stage_timing,
		.precise_clock = precise_clock_is_cheap(d),
		.state_dir = d->opts.state_dir,
		.mem = {
			.max_pgrants = d->opts.max_pgrants,
			.max_bounce_pages = d->opts.ring_buffer_mib * MIB_PAGES,
			.budget = &d->buffers,
			.grant_budget = &d->mappings,
		},
		.host_errors = d->host_errors,
	};
	int ret;

	blk_budget_init(&d->buffers, (long)d->opts.buffer_mib * MIB_PAGES);
	blk_budget_init(&d->mappings, (long)d->opts.max_mapped_grants);

	d->grants = blk_grants_open();
	if (!d->grants) {
		ret = -errno;
		log_err("cannot open the grant table: %s%s", strerror(-ret),
			xen_devices_hint(ret));
		return ret;
	}
	cfg.grants = d->grants;
	d->workers = calloc(n, sizeof(*d->workers));
	if (!d->workers || balance_new(&d->balance) < 0)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		ret = worker_start(&d->workers[i], i, d->broken_fd[1],
				   d->closed_fd, &cfg);
		if (ret < 0) {
			log_err("cannot start I/O worker %u: %s%s", i,
				strerror(-ret), xen_devices_hint(ret));
			return ret;
		}
		d->nr_workers++;
	}
	log_info("%u I/O worker%s", n, n == 1 ? "" : "s");
	return 0;
}

/*
 * After every ring is closed and every handover released: a kept ring's
 * mappings need the grant handle closed here.
 */
static void stop_workers(struct daemon *d)
{
	for (unsigned int i = 0; i < d->nr_workers; i++)
		worker_stop(d->workers[i]);
	free(d->workers);
	d->workers = NULL;
	d->nr_workers = 0;
	balance_free(d->balance);
	d->balance = NULL;
	blk_grants_close(d->grants);
	d->grants = NULL;
}

/* Watch each backend directory the serve setting names. */
static int watch_roots(struct daemon *d)
{
	static const struct {
		unsigned int bit;
		const char *kind;
	} kinds[] = { { SERVE_VBD, "vbd" }, { SERVE_VBD3, "vbd3" } };

	d->nr_roots = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char *root = d->be_root[d->nr_roots];

		if (!(d->opts.serve & kinds[i].bit))
			continue;
		snprintf(root, sizeof(d->be_root[0]),
			 "/local/domain/%u/backend/%s", d->domid,
			 kinds[i].kind);
		if (!xs_watch(d->xs, root, VBD_TOKEN_BACKEND)) {
			log_err("cannot watch %s: %m", root);
			return -1;
		}
		d->nr_roots++;
	}
	return 0;
}

static int open_xenstore(struct daemon *d)
{
	d->xs = xs_open(0);
	if (!d->xs) {
		log_err("cannot connect to xenstore: %m (is xenstored running, "
			"and /proc/xen mounted?)");
		return -errno;
	}
	if (find_domid(d) < 0)
		return -EINVAL;
	if (watch_roots(d) < 0)
		return -errno;
	if (!xs_watch(d->xs, "@releaseDomain", VBD_TOKEN_RELEASE)) {
		log_err("cannot watch @releaseDomain: %m");
		return -errno;
	}
	return 0;
}

static void drain_watches(struct daemon *d)
{
	char **ev;

	while ((ev = xs_check_watch(d->xs)) != NULL) {
		vbd_watch_fired(d, ev[XS_WATCH_PATH], ev[XS_WATCH_TOKEN]);
		free(ev);
	}
	vbd_reconcile_stale(d);
}

static void drain_broken(struct daemon *d)
{
	uint64_t cookie;

	while (read(d->broken_fd[0], &cookie, sizeof(cookie)) == sizeof(cookie))
		vbd_ring_broken(d, cookie);
}

static void drain_closed(struct daemon *d)
{
	uint64_t count;

	if (read(d->closed_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_err("reading the workers' closed rings: %m");
	vbd_rings_closed(d);
}

static void notify_status(struct daemon *d)
{
	sd_notifyf(0, "STATUS=serving %u device%s", d->nr_vbds,
		   d->nr_vbds == 1 ? "" : "s");
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the main loop does on a clock. */
struct timers {
	int64_t next_check; /* vbd_check_images() */
	int64_t next_handover; /* vbd_retry_handovers(), while one waits */
	int64_t next_connect; /* vbd_retry_connects(), while one waits */
	int64_t next_balance; /* balance_run(), with two workers or more */
	int64_t next_xenstat; /* vbd_xenstat_update_all(), while needed */
	int64_t next_quiesce; /* vbd_rings_closed(), while a device pauses */
	int64_t ping_ms; /* systemd's watchdog: 0 when it has none */
	int64_t next_ping;
};

static void timers_init(struct timers *t)
{
	uint64_t usec = 0;

	*t = (struct timers){ .next_check = now_ms() + VBD_IMAGE_CHECK_MS };
	/*
	 * WatchdogSec= in the unit: ping at half the interval, as
	 * sd_watchdog_enabled(3) advises. The pings come from this loop, so
	 * a main thread stuck anywhere (xenstore, a disconnect) gets the
	 * daemon restarted; a worker whose engine fails aborts it already.
	 */
	if (sd_watchdog_enabled(0, &usec) > 0)
		t->ping_ms = (int64_t)(usec / 2000) ?: 1;
}

/* Run @fn if @next is due, and then not for @period_ms; fold @next into
 * @soonest. */
static void run_due(struct daemon *d, void (*fn)(struct daemon *), int64_t now,
		    int64_t *next, int64_t period_ms, int64_t *soonest)
{
	if (now >= *next) {
		fn(d);
		*next = now + period_ms;
	}
	if (*next < *soonest)
		*soonest = *next;
}

static void share_workers(struct daemon *d)
{
	balance_run(d->balance, d, d->opts.rebalance_ms);
}

static void ping_watchdog(struct daemon *d)
{
	(void)d;
	sd_notify(0, "WATCHDOG=1");
}

/*
 * Run what is due, and return the poll() timeout: until the next of the
 * image check, sharing the workers, a migration's retry, a paced connect's
 * retry, the watchdog ping and the host errors' summaries owed
 * (@errors_ms, -1 for none).
 */
static int timers(struct daemon *d, struct timers *t, int errors_ms)
{
	int64_t now = now_ms(), soonest = INT64_MAX;

	run_due(d, vbd_check_images, now, &t->next_check, VBD_IMAGE_CHECK_MS,
		&soonest);
	if (d->opts.rebalance_ms && d->nr_workers > 1)
		run_due(d, share_workers, now, &t->next_balance,
			d->opts.rebalance_ms, &soonest);
	if (vbd_awaiting_remote(d))
		run_due(d, vbd_retry_handovers, now, &t->next_handover,
			VBD_HANDOVER_RETRY_MS, &soonest);
	if (vbd_connects_waiting(d))
		run_due(d, vbd_retry_connects, now, &t->next_connect,
			VBD_CONNECT_RETRY_MS, &soonest);
	if (vbd_xenstat_any())
		run_due(d, vbd_xenstat_update_all, now, &t->next_xenstat,
			VBD_XENSTAT_MS, &soonest);
	/* A paused device's drain deadline (vbd-quiesce.h). */
	if (vbd_quiesce_pending(d) || vbd_move_pending(d))
		run_due(d, vbd_rings_closed, now, &t->next_quiesce,
			VBD_QUIESCE_TICK_MS, &soonest);
	if (t->ping_ms)
		run_due(d, ping_watchdog, now, &t->next_ping, t->ping_ms,
			&soonest);
	if (errors_ms >= 0 && now + errors_ms < soonest)
		soonest = now + errors_ms;
	return (int)(soonest - now);
}

/* The sooner of two poll() timeouts, -1 meaning none. */
static int sooner(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* Returns the signal that ended the loop, or -errno. */
static int main_loop(struct daemon *d, int sig_fd, struct control_server *ctl)
{
	struct pollfd fds[6] = {
		{ .fd = xs_fileno(d->xs), .events = POLLIN },
		{ .fd = sig_fd, .events = POLLIN },
		{ .fd = d->broken_fd[0], .events = POLLIN },
		/* Ignored when -1. */
		{ .fd = ctl ? control_server_fd(ctl) : -1, .events = POLLIN },
		{ .fd = d->closed_fd, .events = POLLIN },
		{ .fd = opener_fd(d->opener), .events = POLLIN },
	};
	unsigned int last_count = ~0u;
	struct timers t;

	timers_init(&t);
	for (;;) {
		int timeout_ms =
			timers(d, &t, host_errors_log_due(d->host_errors));

		/* A control client's deadline (control-server.h). */
		if (ctl)
			timeout_ms = sooner(timeout_ms,
					    control_server_timeout_ms(ctl));

		if (d->nr_vbds != last_count) {
			last_count = d->nr_vbds;
			notify_status(d);
		}
		if (poll(fds, 6, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fds[1].revents) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) != sizeof(si))
				continue;
			/* SIGUSR1: each disk's counters to the log. */
			if (si.ssi_signo == SIGUSR1) {
				vbd_log_stats_all(d);
				continue;
			}
			/* SIGHUP: the configuration, never the images. */
			if (si.ssi_signo != SIGHUP)
				return (int)si.ssi_signo;
			daemon_reload(d, NULL, NULL);
		}
		/* Before the closed rings: their last news is no longer due. */
		if (fds[2].revents)
			drain_broken(d);
		if (fds[4].revents)
			drain_closed(d);
		if (fds[5].revents)
			vbd_opens_done(d);
		/* Every turn: it also drops the clients past their deadline. */
		if (ctl)
			control_server_run(ctl, d);
		if (fds[0].revents)
			drain_watches(d);
	}
}

/* The ring journals' directory; kept as it is if it exists. */
static int make_state_dir(const char *dir)
{
	if (!dir || mkdir(dir, 0700) == 0 || errno == EEXIST)
		return 0;
	log_err("cannot create the state directory %s: %m (give another "
		"with --state-dir)",
		dir);
	return -errno;
}

static int block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	/* Blocked before any thread starts, so every thread inherits it. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/*
 * The control-group setting's group id, or (gid_t)-1 for none. Looked up
 * once, at start-up (before READY=1): a reload does not change it.
 */
static int control_gid(const char *name, gid_t *gid)
{
	struct group *g;

	*gid = (gid_t)-1;
	if (!name)
		return 0;
	errno = 0;
	g = getgrnam(name);
	if (g) {
		*gid = g->gr_gid;
		return 0;
	}
	log_err("control-group names '%s', and there is no such group%s%s "
		"(create it with groupadd, or correct blkbackd.conf)",
		name, errno ? ": " : "", errno ? strerror(errno) : "");
	return -ENOENT;
}

/*
 * The control socket, if there is a place for it; the daemon serves its
 * guests without one (blkbackctl then cannot reach it), but not beside a
 * daemon that serves it already: that one answers for the same state
 * directory, and -EADDRINUSE ends this one.
 */
static int open_control(struct daemon *d, struct control_server **ctl)
{
	char path[PATH_MAX];
	pid_t holder = 0;
	gid_t gid;
	int ret;

	*ctl = NULL;
	if (d->opts.control_socket)
		snprintf(path, sizeof(path), "%s", d->opts.control_socket);
	else if (d->opts.state_dir)
		snprintf(path, sizeof(path), "%s/control", d->opts.state_dir);
	else
		return 0;
	ret = control_gid(d->opts.control_group, &gid);
	if (ret < 0) {
		d->refused = true;
		return ret;
	}
	ret = control_server_open(path, gid, ctl, &holder);
	if (ret == -EADDRINUSE) {
		char pid[32] = "";

		d->refused = true;

		if (holder > 0)
			snprintf(pid, sizeof(pid), " (pid %d)", (int)holder);
		log_err("another blkbackd%s serves %s; stop it first, or give "
			"this one its own --state-dir and --control-socket",
			pid, path);
		return ret;
	}
	if (ret < 0)
		log_err("cannot listen on the control socket %s: %s "
			"(blkbackctl will not reach this daemon)%s",
			path, strerror(-ret),
			ret == -EPERM && gid != (gid_t)-1
				? "; to give it to control-group, put it in a "
				  "directory of that group with the setgid bit "
				  "(see blkbackd.conf(5))"
				: "");
	return 0;
}

static int run(struct daemon *d)
{
	struct control_server *ctl;
	int sig_fd, ret;

	if ((d->opts.serve & SERVE_VBD) && check_no_kernel_backend() < 0) {
		d->refused = true;
		return -EBUSY;
	}
	sig_fd = block_signals();
	if (sig_fd < 0) {
		log_err("cannot set up signal handling: %m");
		return -errno;
	}
	if (pipe2(d->broken_fd, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	d->closed_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->closed_fd < 0)
		return -errno;
	ret = make_state_dir(d->opts.state_dir);
	if (ret < 0)
		return ret;
	/*
	 * The control socket exists before the first device is served and
	 * before READY=1: whoever sees either can reach blkbackctl's socket.
	 * First of all the rest: a second daemon stops here, having touched
	 * neither xenstore nor the Xen devices.
	 */
	ret = open_control(d, &ctl);
	if (ret < 0)
		return ret;
	if (d->opts.serve & SERVE_VBD3)
		vbd_xenstat_sweep();
	ret = open_xenstore(d);
	if (ret == 0)
		ret = host_errors_create(&d->host_errors,
					 d->opts.error_log_interval);
	if (ret == 0)
		ret = opener_new(&d->opener);
	if (ret == 0)
		ret = start_workers(d);
	if (ret < 0) {
		control_server_close(ctl);
		host_errors_destroy(d->host_errors);
		return ret;
	}

	/* Devices that exist already (a restart) are picked up here. */
	drain_watches(d);
	vbd_move_settle_gone(d);
	sd_notify(0, "READY=1");
	for (unsigned int i = 0; i < d->nr_roots; i++)
		log_info("serving %s", d->be_root[i]);

	ret = main_loop(d, sig_fd, ctl);
	sd_notify(0, "STOPPING=1");
	if (ret > 0)
		log_info("%s: answering in-flight I/O and stopping",
			 strsignal(ret));
	else
		log_err("main loop failed: %s", strerror(-ret));
	vbd_release_all(d);
	/* After: a snapshot that ends meanwhile answers its client. */
	control_server_close(ctl);
	stop_workers(d);
	/* A thread still in a connect is left to the exit (opener.h). */
	if (!opener_busy(d->opener)) {
		opener_free(d->opener);
		d->opener = NULL;
	}
	close(d->closed_fd);
	host_errors_destroy(d->host_errors);
	xs_close(d->xs);
	close(sig_fd);
	return ret > 0 ? 0 : ret;
}

/*
 * The exit status of a daemon that refused to start for a reason only its
 * operator mends: a wrong setting, the kernel's backend bound, another
 * daemon. The unit does not restart it (RestartPreventExitStatus=), which
 * would only repeat the refusal; 1 is left for what a restart may mend.
 */
#define EXIT_REFUSED 3

static int exit_status(const struct daemon *d, int ret)
{
	if (ret == 0)
		return EXIT_SUCCESS;
	return d->refused ? EXIT_REFUSED : EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	struct daemon d = { .argc = argc,
			    .argv = argv,
			    .broken_fd = { -1, -1 },
			    .closed_fd = -1 };
	int ret;

	/* Configuration errors reach the journal with their priority too. */
	log_init(LOG_INFO);
	ret = options_parse(&d.opts, argc, argv);
	if (ret != 0)
		return ret > 0 ? EXIT_SUCCESS : EXIT_REFUSED;
	log_init(d.opts.log_level);
	ret = run(&d);
	/*
	 * An opener thread still in a store's connect (opener.h) must not
	 * see its library's destructors run under it: leave without them.
	 */
	if (d.opener && opener_busy(d.opener)) {
		log_info("leaving an image's open to the exit");
		_exit(exit_status(&d, ret));
	}
	/* The workers that borrowed the string settings are gone. */
	options_release(&d.opts);
	return exit_status(&d, ret);
}

// SPDX-License-Identifier: MIT
/*
 * The simulated toolstack. Everything here mirrors an observable step of
 * libxl 4.17 (docs/architecture.md, "The xenstore contract"), since
 * the point is to present the daemon with exactly what xl would.
 */
#include "tools/xensim/toolstack.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libblk/toolstack.h"
#include "libblk/xenbus.h"
#include "tools/xensim/xensim.h"

static void set_error(struct toolstack_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct toolstack_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->what, sizeof(err->what), fmt, ap);
	va_end(ap);
}

static int xs_errno(void)
{
	return errno ? -errno : -EIO;
}

struct domain_args {
	uint32_t domid;
};

static int write_domain_nodes(struct xs_handle *xs, xs_transaction_t t,
			      void *arg)
{
	const struct domain_args *a = arg;
	/* As libxl__domain_make: dom0 owns, the guest may read. */
	struct xs_permissions roperm[2] = {
		{ .id = 0, .perms = XS_PERM_NONE },
		{ .id = a->domid, .perms = XS_PERM_READ },
	};
	struct xs_permissions rwperm[1] = {
		{ .id = a->domid, .perms = XS_PERM_NONE },
	};
	static const char *const rw_dirs[] = { "data", "drivers", "feature",
					       "attr", "error",	  "control" };
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "/local/domain/%u", a->domid);
	ret = xenbus_mkdir(xs, t, path, roperm, 2);
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "/local/domain/%u/device", a->domid);
	ret = xenbus_mkdir(xs, t, path, roperm, 2);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < sizeof(rw_dirs) / sizeof(rw_dirs[0]); i++) {
		snprintf(path, sizeof(path), "/local/domain/%u/%s", a->domid,
			 rw_dirs[i]);
		ret = xenbus_mkdir(xs, t, path, rwperm, 1);
		if (ret < 0)
			return ret;
	}
	snprintf(path, sizeof(path), "/local/domain/%u/name", a->domid);
	ret = xenbus_printf(xs, t, path, "xensim-guest%u", a->domid);
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "/local/domain/%u/domid", a->domid);
	return xenbus_printf(xs, t, path, "%u", a->domid);
}

int toolstack_domain_create(struct xs_handle *xs, const char *simdir,
			    uint32_t domid, uint32_t mem_mb)
{
	struct domain_args a = { .domid = domid };
	uint32_t pages = mem_mb * (1024 * 1024 / XENSIM_PAGE_SIZE);
	char path[64];
	int ret;

	if (domid == 0 || domid >= 0x7ff0 || mem_mb == 0)
		return -EINVAL;
	ret = xensim_domain_create(simdir, domid, pages);
	if (ret < 0)
		return ret;
	ret = xenbus_transact(xs, write_domain_nodes, &a);
	if (ret < 0)
		goto undo;
	/*
	 * The store ring mfn and port are what the xenstored shim maps and
	 * binds; they only need to be stable and non-zero.
	 */
	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	if (!xs_introduce_domain(xs, domid, 0xfefe0u + domid, 1)) {
		ret = xs_errno();
		xs_rm(xs, XBT_NULL, path);
		goto undo;
	}
	return 0;
undo:
	xensim_domain_destroy(simdir, domid);
	return ret;
}

int toolstack_domain_destroy(struct xs_handle *xs, const char *simdir,
			     uint32_t domid, bool remove_backends)
{
	char path[128];
	int ret, first = 0;

	/* Xen first kills the domain, then xenstored learns it is gone. */
	ret = xensim_domain_destroy(simdir, domid);
	if (ret < 0)
		first = ret;
	/*
	 * xensim's VIRQ_DOM_EXC usually has xenstored release the domain
	 * already; releasing it again is harmless and its error meaningless.
	 */
	xs_release_domain(xs, domid);
	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	if (!xs_rm(xs, XBT_NULL, path) && errno != ENOENT && !first)
		first = xs_errno();
	snprintf(path, sizeof(path), "/libxl/%u", domid);
	if (!xs_rm(xs, XBT_NULL, path) && errno != ENOENT && !first)
		first = xs_errno();
	for (unsigned int i = 0; remove_backends && i < 2; i++) {
		static const char *const kinds[] = { "vbd", "vbd3" };

		snprintf(path, sizeof(path), "/local/domain/0/backend/%s/%u",
			 kinds[i], domid);
		if (!xs_rm(xs, XBT_NULL, path) && errno != ENOENT && !first)
			first = xs_errno();
	}
	return first;
}

/* A disk, its xenstore trees (libblk/toolstack.h) and where they live. */
struct disk_paths {
	const struct toolstack_disk *disk;
	struct blk_vbd_spec spec;
	struct blk_vbd_paths paths;
};

static int disk_paths_init(struct disk_paths *p,
			   const struct toolstack_disk *disk)
{
	p->disk = disk;
	p->spec = (struct blk_vbd_spec){
		.domid = disk->domid,
		.backend_domid = disk->backend_domid,
		.vdev = disk->vdev,
		.target = disk->target,
		.readonly = disk->readonly,
		.script = disk->script,
		.device_type = disk->device_type,
		.no_discard = disk->no_discard,
		.tap = disk->tap,
		.format = disk->format,
		.libxl_record = true,
	};
	return blk_vbd_paths(&p->spec, &p->paths);
}

/*
 * Run the hotplug script as libxl does: XENBUS_PATH relative to the
 * backend domain's home, the action as the only argument. A script that
 * exits non-zero fails the operation, with its `hotplug-error` as the
 * message when it left one (device_hotplug_child_death_cb reads it only
 * then, and logs "script: <hotplug-error>").
 */
static int run_hotplug_script(struct xs_handle *xs, const struct disk_paths *p,
			      const char *action, struct toolstack_error *err)
{
	const char *script = p->disk->script;
	char xenbus_path[128];
	char *hp_err;
	int status;
	pid_t pid;

	snprintf(xenbus_path, sizeof(xenbus_path), "backend/%s/%u/%u",
		 p->paths.kind, p->disk->domid, p->paths.devid);
	if (access(script, X_OK) < 0) {
		int e = errno;

		set_error(err, "hotplug script %s: %s", script, strerror(e));
		return -e;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		setenv("XENBUS_PATH", xenbus_path, 1);
		setenv("XENBUS_TYPE", p->paths.kind, 1);
		setenv("XENBUS_BASE_PATH", "backend", 1);
		execl(script, script, action, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* Read as the daemon reads it (vbd_connect_after_hotplug()). */
	if (xenbus_read_str(xs, p->paths.be, "hotplug-error", &hp_err) == 0) {
		set_error(err, "script: %s", hp_err);
		free(hp_err);
	} else {
		set_error(err, "hotplug script %s %s failed (status %d)",
			  script, action,
			  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return -EIO;
}

/*
 * libxl runs a disk's hotplug script only when the backend is in its own
 * domain, 0; for any other ("assuming driver domains") `xl devd` runs it
 * in the backend's domain.
 */
static bool runs_script_here(const struct toolstack_disk *disk)
{
	return disk->script && disk->backend_domid == 0;
}

int toolstack_disk_attach(struct xs_handle *xs,
			  const struct toolstack_disk *disk,
			  struct toolstack_error *err)
{
	struct disk_paths p;
	int ret, last = 0;

	ret = disk_paths_init(&p, disk);
	if (ret < 0) {
		set_error(err, "invalid virtual device name");
		return ret;
	}
	ret = blk_vbd_add(xs, &p.spec, &p.paths);
	if (ret < 0) {
		set_error(err, "writing xenstore nodes: %s", strerror(-ret));
		return ret;
	}
	ret = xenbus_wait_state(xs, p.paths.be,
				XENBUS_STATE_BIT(XenbusStateInitWait),
				TOOLSTACK_STATE_TIMEOUT_MS, &last);
	if (ret < 0) {
		if (err)
			err->last_state = last;
		set_error(err,
			  "backend %s wanted state %d timed out (state %d): is "
			  "blkbackd running?",
			  p.paths.be, XenbusStateInitWait, last);
		return ret;
	}
	if (!runs_script_here(disk))
		return 0;
	if (disk->script_delay_ms)
		usleep(disk->script_delay_ms * 1000u);
	return run_hotplug_script(xs, &p, "add", err);
}

int toolstack_disk_detach(struct xs_handle *xs,
			  const struct toolstack_disk *disk, bool keep_nodes,
			  struct toolstack_error *err)
{
	struct disk_paths p;
	int ret, first = 0, last = 0;

	ret = disk_paths_init(&p, disk);
	if (ret < 0) {
		set_error(err, "invalid virtual device name");
		return ret;
	}
	ret = blk_vbd_unplug(xs, &p.paths);
	if (ret < 0) {
		set_error(err,
			  ret == -ENODEV ? "no such device %s"
					 : "writing %s: unplug failed",
			  p.paths.be);
		return ret;
	}
	ret = xenbus_wait_state(xs, p.paths.be,
				XENBUS_STATE_BIT(XenbusStateClosed),
				TOOLSTACK_STATE_TIMEOUT_MS, &last);
	if (ret < 0) {
		if (err)
			err->last_state = last;
		set_error(err,
			  "backend %s wanted state %d timed out (state %d)",
			  p.paths.be, XenbusStateClosed, last);
		first = ret;
	}
	if (runs_script_here(disk)) {
		ret = run_hotplug_script(xs, &p, "remove", first ? NULL : err);
		if (ret < 0 && !first)
			first = ret;
	}
	if (!keep_nodes)
		blk_vbd_remove(xs, &p.paths);
	return first;
}

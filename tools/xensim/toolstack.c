// SPDX-License-Identifier: MIT
/*
 * The simulated toolstack. Everything here mirrors an observable step of
 * libxl 4.17 (docs/architecture.md, "The xenstore contract"), since
 * the point is to present the daemon with exactly what xl would.
 */
#include "tools/xensim/toolstack.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libblk/xenbus.h"
#include "tools/xensim/xensim.h"

#define XVD_MAJOR 202
#define SD_MAJOR 8
#define HD_MAJOR_01 3
#define HD_MAJOR_23 22

/*
 * Parse "<prefix><letters>[<partition>]": letters a..z count bijectively in
 * base 26 (a=0, z=25, aa=26), a partition has no leading zero.
 */
static bool parse_letters_part(const char *name, const char *prefix,
			       unsigned long max_disk, unsigned long max_part,
			       unsigned long *disk, unsigned long *part)
{
	size_t plen = strlen(prefix);
	const char *p = name + plen;
	unsigned long d = 0, pt = 0;

	if (strncmp(name, prefix, plen) != 0 || !islower((unsigned char)*p))
		return false;
	for (; *p >= 'a' && *p <= 'z'; p++) {
		d = d * 26 + (unsigned long)(*p - 'a' + 1);
		if (d > max_disk + 1)
			return false;
	}
	d--;
	if (*p) {
		if (*p == '0')
			return false;
		for (; *p; p++) {
			if (!isdigit((unsigned char)*p))
				return false;
			pt = pt * 10 + (unsigned long)(*p - '0');
			if (pt > max_part)
				return false;
		}
	}
	*disk = d;
	*part = pt;
	return true;
}

static uint32_t xvd_devid(unsigned long disk, unsigned long part)
{
	if (disk <= 15 && part <= 15)
		return (XVD_MAJOR << 8) | (uint32_t)(disk << 4) |
		       (uint32_t)part;
	return (1u << 28) | (uint32_t)(disk << 8) | (uint32_t)part;
}

int toolstack_vdev_to_devid(const char *vdev, uint32_t *devid)
{
	unsigned long disk, part;
	unsigned int d, p;
	int used = -1;
	char *end;

	if (sscanf(vdev, "d%up%u%n", &d, &p, &used) >= 2 &&
	    used == (int)strlen(vdev) && d < (1u << 20) && p < 256) {
		*devid = xvd_devid(d, p);
		return 0;
	}
	if (parse_letters_part(vdev, "xvd", (1ul << 20) - 1, 255, &disk,
			       &part)) {
		*devid = xvd_devid(disk, part);
		return 0;
	}
	if (isdigit((unsigned char)vdev[0])) {
		errno = 0;
		unsigned long n = strtoul(vdev, &end, 0);

		if (errno || *end || n > INT_MAX)
			return -EINVAL;
		*devid = (uint32_t)n;
		return 0;
	}
	if (parse_letters_part(vdev, "hd", 3, 63, &disk, &part)) {
		*devid = ((disk < 2 ? HD_MAJOR_01 : HD_MAJOR_23) << 8) |
			 (uint32_t)((disk & 1) << 6) | (uint32_t)part;
		return 0;
	}
	if (parse_letters_part(vdev, "sd", 15, 15, &disk, &part)) {
		*devid = (SD_MAJOR << 8) | (uint32_t)(disk << 4) |
			 (uint32_t)part;
		return 0;
	}
	return -EINVAL;
}

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

/* mkdir @path with @perms inside @t (libxl__xs_mknod). */
static int mknod_perms(struct xs_handle *xs, xs_transaction_t t,
		       const char *path, struct xs_permissions *perms,
		       unsigned int n)
{
	if (!xs_mkdir(xs, t, path) ||
	    !xs_set_permissions(xs, t, path, perms, n))
		return xs_errno();
	return 0;
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
	ret = mknod_perms(xs, t, path, roperm, 2);
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "/local/domain/%u/device", a->domid);
	ret = mknod_perms(xs, t, path, roperm, 2);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < sizeof(rw_dirs) / sizeof(rw_dirs[0]); i++) {
		snprintf(path, sizeof(path), "/local/domain/%u/%s", a->domid,
			 rw_dirs[i]);
		ret = mknod_perms(xs, t, path, rwperm, 1);
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
	for (unsigned int i = 0; remove_backends && i < 2; i++) {
		static const char *const kinds[] = { "vbd", "vbd3" };

		snprintf(path, sizeof(path), "/local/domain/0/backend/%s/%u",
			 kinds[i], domid);
		if (!xs_rm(xs, XBT_NULL, path) && errno != ENOENT && !first)
			first = xs_errno();
	}
	return first;
}

struct disk_paths {
	const struct toolstack_disk *disk;
	uint32_t devid;
	const char *kind; /* the backend's directory: "vbd" or "vbd3" */
	char be[256]; /* /local/domain/B/backend/KIND/D/N */
	char fe[256]; /* /local/domain/D/device/vbd/N */
};

static int disk_paths_init(struct disk_paths *p,
			   const struct toolstack_disk *disk)
{
	int ret = toolstack_vdev_to_devid(disk->vdev, &p->devid);

	if (ret < 0)
		return ret;
	p->disk = disk;
	p->kind = disk->tap ? "vbd3" : "vbd";
	snprintf(p->be, sizeof(p->be), "/local/domain/%u/backend/%s/%u/%u",
		 disk->backend_domid, p->kind, disk->domid, p->devid);
	snprintf(p->fe, sizeof(p->fe), "/local/domain/%u/device/vbd/%u",
		 disk->domid, p->devid);
	return 0;
}

/* Write "@dir/@key" = printf(@fmt, ...) inside @t. */
static int write_key(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		     const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int write_key(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		     const char *key, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	int ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, key) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	ret = xenbus_vprintf(xs, t, path, fmt, ap);
	va_end(ap);
	return ret;
}

/* The frontend half: what the guest's blkfront will find. */
static int write_frontend_keys(struct xs_handle *xs, xs_transaction_t t,
			       const struct disk_paths *p)
{
	const struct toolstack_disk *d = p->disk;
	const char *fe = p->fe;
	int ret = 0;

	ret = ret ?: write_key(xs, t, fe, "backend", "%s", p->be);
	ret = ret ?: write_key(xs, t, fe, "backend-id", "%u", d->backend_domid);
	ret = ret
		      ?: write_key(xs, t, fe, "device-type", "%s",
				   d->device_type ? d->device_type : "disk");
	ret = ret ?: write_key(xs, t, fe, "virtual-device", "%u", p->devid);
	ret = ret ?: write_key(xs, t, fe, "trusted", "1");
	ret = ret
		      ?: write_key(xs, t, fe, "state", "%d",
				   XenbusStateInitialising);
	return ret;
}

/* The backend half, with libxl's keys for a `script=` disk. */
static int write_backend_keys(struct xs_handle *xs, xs_transaction_t t,
			      const struct disk_paths *p)
{
	const struct toolstack_disk *d = p->disk;
	const char *be = p->be;
	int ret = 0;

	ret = ret ?: write_key(xs, t, be, "frontend", "%s", p->fe);
	ret = ret ?: write_key(xs, t, be, "frontend-id", "%u", d->domid);
	if (d->tap)
		ret = ret
			      ?: write_key(xs, t, be, "params", "%s:%s",
					   d->format ? d->format : "aio",
					   d->target);
	else
		ret = ret ?: write_key(xs, t, be, "params", "%s", d->target);
	ret = ret
		      ?: write_key(xs, t, be, "mode", "%s",
				   d->readonly ? "r" : "w");
	ret = ret
		      ?: write_key(xs, t, be, "type", "%s",
				   d->tap ? "vbd3" : "phy");
	if (d->script)
		ret = ret ?: write_key(xs, t, be, "script", "%s", d->script);
	ret = ret ?: write_key(xs, t, be, "online", "1");
	ret = ret ?: write_key(xs, t, be, "removable", "0");
	ret = ret ?: write_key(xs, t, be, "bootable", "1");
	ret = ret ?: write_key(xs, t, be, "dev", "%s", d->vdev);
	ret = ret
		      ?: write_key(xs, t, be, "device-type", "%s",
				   d->device_type ? d->device_type : "disk");
	ret = ret
		      ?: write_key(xs, t, be, "discard-enable", "%d",
				   d->readonly || d->no_discard ? 0 : 1);
	ret = ret ?: write_key(xs, t, be, "specification", "xen");
	ret = ret
		      ?: write_key(xs, t, be, "state", "%d",
				   XenbusStateInitialising);
	return ret;
}

/* libxl__device_generic_add: both trees, owned and readable as in Xen. */
static int write_disk_nodes(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct disk_paths *p = arg;
	const struct toolstack_disk *d = p->disk;
	struct xs_permissions be_perms[2] = {
		{ .id = d->backend_domid, .perms = XS_PERM_NONE },
		{ .id = d->domid, .perms = XS_PERM_READ },
	};
	struct xs_permissions fe_perms[2] = {
		{ .id = d->domid, .perms = XS_PERM_NONE },
		{ .id = d->backend_domid, .perms = XS_PERM_READ },
	};
	int ret;

	/* libxl starts from clean directories. */
	xs_rm(xs, t, p->fe);
	xs_rm(xs, t, p->be);
	ret = mknod_perms(xs, t, p->fe, fe_perms, 2);
	if (ret < 0)
		return ret;
	ret = mknod_perms(xs, t, p->be, be_perms, 2);
	if (ret < 0)
		return ret;
	ret = write_frontend_keys(xs, t, p);
	if (ret < 0)
		return ret;
	return write_backend_keys(xs, t, p);
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

	snprintf(xenbus_path, sizeof(xenbus_path), "backend/%s/%u/%u", p->kind,
		 p->disk->domid, p->devid);
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
		setenv("XENBUS_TYPE", p->kind, 1);
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
	if (xenbus_read_str(xs, p->be, "hotplug-error", &hp_err) == 0) {
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
	ret = xenbus_transact(xs, write_disk_nodes, &p);
	if (ret < 0) {
		set_error(err, "writing xenstore nodes: %s", strerror(-ret));
		return ret;
	}
	ret = xenbus_wait_state(xs, p.be, XENBUS_STATE_BIT(XenbusStateInitWait),
				TOOLSTACK_STATE_TIMEOUT_MS, &last);
	if (ret < 0) {
		if (err)
			err->last_state = last;
		set_error(err,
			  "backend %s wanted state %d timed out (state %d): is "
			  "blkbackd running?",
			  p.be, XenbusStateInitWait, last);
		return ret;
	}
	if (!runs_script_here(disk))
		return 0;
	if (disk->script_delay_ms)
		usleep(disk->script_delay_ms * 1000u);
	return run_hotplug_script(xs, &p, "add", err);
}

static unsigned int path_depth(const char *path)
{
	unsigned int n = 0;

	for (; *path; path++)
		n += *path == '/';
	return n;
}

/*
 * Remove @path, then each parent it leaves empty, up to (not including)
 * the domain's own directory /local/domain/N.
 */
static void remove_with_empty_parents(struct xs_handle *xs, xs_transaction_t t,
				      const char *path)
{
	char dir[256];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	xs_rm(xs, t, dir);
	while ((slash = strrchr(dir, '/'))) {
		unsigned int n = 0;
		char **left;

		*slash = '\0';
		if (path_depth(dir) <= 3)
			return;
		left = xs_directory(xs, t, dir, &n);
		free(left);
		if (!left || n)
			return;
		xs_rm(xs, t, dir);
	}
}

/*
 * As libxl removes a device: both trees in one transaction, with the
 * directories they leave empty (the backend's per-domain directory), so
 * that a backend never sees one tree without the other.
 */
static int remove_disk_nodes(struct xs_handle *xs, xs_transaction_t t,
			     void *arg)
{
	const struct disk_paths *p = arg;

	remove_with_empty_parents(xs, t, p->fe);
	remove_with_empty_parents(xs, t, p->be);
	return 0;
}

static int write_unplug(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct disk_paths *p = arg;
	char path[300];
	int ret;

	/* A device that is already gone is not an error. */
	if (!xenbus_exists(xs, p->be))
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/online", p->be);
	ret = xenbus_printf(xs, t, path, "0");
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "%s/state", p->be);
	return xenbus_printf(xs, t, path, "%d", XenbusStateClosing);
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
	ret = xenbus_transact(xs, write_unplug, &p);
	if (ret < 0) {
		set_error(err,
			  ret == -ENODEV ? "no such device %s"
					 : "writing %s: unplug failed",
			  p.be);
		return ret;
	}
	ret = xenbus_wait_state(xs, p.be, XENBUS_STATE_BIT(XenbusStateClosed),
				TOOLSTACK_STATE_TIMEOUT_MS, &last);
	if (ret < 0) {
		if (err)
			err->last_state = last;
		set_error(err,
			  "backend %s wanted state %d timed out (state %d)",
			  p.be, XenbusStateClosed, last);
		first = ret;
	}
	if (runs_script_here(disk)) {
		ret = run_hotplug_script(xs, &p, "remove", first ? NULL : err);
		if (ret < 0 && !first)
			first = ret;
	}
	if (!keep_nodes)
		xenbus_transact(xs, remove_disk_nodes, &p);
	return first;
}

// SPDX-License-Identifier: MIT
/*
 * What libxl 4.17 writes to plug and unplug a vbd (see toolstack.h).
 */
#include "libblk/toolstack.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/xenbus.h"

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

int blk_vdev_to_devid(const char *vdev, uint32_t *devid)
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

/* A disk and its paths: one transaction's argument. */
struct vbd_nodes {
	const struct blk_vbd_spec *spec;
	const struct blk_vbd_paths *paths;
};

int blk_vbd_paths(const struct blk_vbd_spec *s, struct blk_vbd_paths *out)
{
	int ret = blk_vdev_to_devid(s->vdev, &out->devid);

	if (ret < 0)
		return ret;
	out->kind = s->tap ? "vbd3" : "vbd";
	snprintf(out->be, sizeof(out->be), "/local/domain/%u/backend/%s/%u/%u",
		 s->backend_domid, out->kind, s->domid, out->devid);
	snprintf(out->fe, sizeof(out->fe), "/local/domain/%u/device/vbd/%u",
		 s->domid, out->devid);
	out->libxl[0] = '\0';
	if (s->libxl_record)
		snprintf(out->libxl, sizeof(out->libxl),
			 "/libxl/%u/device/vbd/%u", s->domid, out->devid);
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

/* A key of a tree and its value; a NULL value is not written. */
struct key_value {
	const char *key;
	const char *value;
};

static int write_keys(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		      const struct key_value *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret = kv[i].value ? write_key(xs, t, dir, kv[i].key, "%s",
						  kv[i].value)
				      : 0;

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Room for an unsigned int or a state in decimal. */
#define NUMBER_MAX 16

/* The frontend half: what the guest's blkfront will find. */
static int write_frontend_keys(struct xs_handle *xs, xs_transaction_t t,
			       const struct blk_vbd_spec *d,
			       const struct blk_vbd_paths *p)
{
	char backend_id[NUMBER_MAX], devid[NUMBER_MAX], state[NUMBER_MAX];
	const struct key_value kv[] = {
		{ "backend", p->be },
		{ "backend-id", backend_id },
		{ "device-type", d->device_type ? d->device_type : "disk" },
		{ "virtual-device", devid },
		{ "trusted", "1" },
		{ "state", state },
	};

	snprintf(backend_id, sizeof(backend_id), "%u", d->backend_domid);
	snprintf(devid, sizeof(devid), "%u", p->devid);
	snprintf(state, sizeof(state), "%d", XenbusStateInitialising);
	return write_keys(xs, t, p->fe, kv, sizeof(kv) / sizeof(*kv));
}

/*
 * The backend half, with libxl's keys for a `script=` disk, into @be: the
 * backend's directory, or libxl's record of it.
 */
static int write_backend_keys(struct xs_handle *xs, xs_transaction_t t,
			      const struct blk_vbd_spec *d,
			      const struct blk_vbd_paths *p, const char *be)
{
	char frontend_id[NUMBER_MAX], state[NUMBER_MAX], tap_params[PATH_MAX];
	const struct key_value kv[] = {
		{ "frontend", p->fe },
		{ "frontend-id", frontend_id },
		/* tapdisk's "FORMAT:TARGET" for a vbd3 disk. */
		{ "params", d->tap ? tap_params : d->target },
		{ "mode", d->readonly ? "r" : "w" },
		{ "type", d->tap ? "vbd3" : "phy" },
		{ "script", d->script },
		{ "online", "1" },
		{ "removable", "0" },
		{ "bootable", "1" },
		{ "dev", d->vdev },
		{ "device-type", d->device_type ? d->device_type : "disk" },
		{ "discard-enable", d->readonly || d->no_discard ? "0" : "1" },
		{ "specification", "xen" },
		{ "state", state },
	};

	snprintf(frontend_id, sizeof(frontend_id), "%u", d->domid);
	snprintf(state, sizeof(state), "%d", XenbusStateInitialising);
	if (d->tap && (size_t)snprintf(tap_params, sizeof(tap_params), "%s:%s",
				       d->format ? d->format : "aio",
				       d->target) >= sizeof(tap_params))
		return -ENAMETOOLONG;
	return write_keys(xs, t, be, kv, sizeof(kv) / sizeof(*kv));
}

/* libxl's record of the disk: dom0's alone, the backend's keys and where. */
static int write_libxl_record(struct xs_handle *xs, xs_transaction_t t,
			      const struct blk_vbd_spec *d,
			      const struct blk_vbd_paths *p)
{
	struct xs_permissions perms[1] = {
		{ .id = 0, .perms = XS_PERM_NONE },
	};
	int ret;

	xs_rm(xs, t, p->libxl);
	ret = xenbus_mkdir(xs, t, p->libxl, perms, 1);
	ret = ret ?: write_backend_keys(xs, t, d, p, p->libxl);
	return ret ?: write_key(xs, t, p->libxl, "backend", "%s", p->be);
}

/* libxl__device_generic_add: both trees, owned and readable as in Xen. */
static int write_disk_nodes(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct vbd_nodes *n = arg;
	const struct blk_vbd_spec *d = n->spec;
	const struct blk_vbd_paths *p = n->paths;
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
	ret = xenbus_mkdir(xs, t, p->fe, fe_perms, 2);
	if (ret < 0)
		return ret;
	ret = xenbus_mkdir(xs, t, p->be, be_perms, 2);
	if (ret < 0)
		return ret;
	ret = write_frontend_keys(xs, t, d, p);
	ret = ret ?: write_backend_keys(xs, t, d, p, p->be);
	if (ret < 0 || !p->libxl[0])
		return ret;
	return write_libxl_record(xs, t, d, p);
}

int blk_vbd_add(struct xs_handle *xs, const struct blk_vbd_spec *s,
		const struct blk_vbd_paths *p)
{
	struct vbd_nodes n = { s, p };

	return xenbus_transact(xs, write_disk_nodes, &n);
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
	const struct blk_vbd_paths *p = arg;

	remove_with_empty_parents(xs, t, p->fe);
	remove_with_empty_parents(xs, t, p->be);
	if (p->libxl[0])
		xs_rm(xs, t, p->libxl);
	return 0;
}

int blk_vbd_remove(struct xs_handle *xs, const struct blk_vbd_paths *p)
{
	return xenbus_transact(xs, remove_disk_nodes, (void *)p);
}

static int write_unplug(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct blk_vbd_paths *p = arg;
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

int blk_vbd_unplug(struct xs_handle *xs, const struct blk_vbd_paths *p)
{
	return xenbus_transact(xs, write_unplug, (void *)p);
}

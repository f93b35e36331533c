// SPDX-License-Identifier: MIT
/*
 * Watch events routed to devices. An event only marks the device it names
 * stale (vbd_device_seen()) and vbd_reconcile_stale() looks at each once
 * after the batch; a change of a domain's or of the root's directory
 * rescans it, which finds new devices and those whose directory is gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkbackd/vbd-internal.h"

/* No memory for a device: it is not served, and the journal says whose. */
static void vbd_ignored(struct daemon *d, unsigned int root, uint32_t domid,
			uint32_t devid)
{
	const struct log_disk who = { .domid = domid, .devid = devid };

	log_disk_msg(LOG_ERR, &who, ENOMEM,
		     "%s %" PRIu32 "/%" PRIu32 ": out of memory, "
		     "device ignored",
		     vbd_root_kind(d, root), domid, devid);
}

/* A device directory exists when its state node does. */
void vbd_device_seen(struct daemon *d, unsigned int root, uint32_t domid,
		     uint32_t devid)
{
	struct vbd *v = vbd_find(d, root, domid, devid);

	if (!v) {
		char be[VBD_PATH_MAX];

		snprintf(be, sizeof(be), "%s/%" PRIu32 "/%" PRIu32,
			 d->be_root[root], domid, devid);
		if (xenbus_read_state(d->xs, be) == XenbusStateUnknown)
			return;
		v = vbd_new(d, root, domid, devid);
		if (!v) {
			vbd_ignored(d, root, domid, devid);
			return;
		}
		/* A device left behind by a domain that died meanwhile. */
		v->domain_gone = xenbus_domain_gone(d->xs, domid);
		vbd_log(v, LOG_DEBUG, 0, "new device");
	}
	v->stale = true;
	v->limits_stale = true;
}

static char **list_dir(struct daemon *d, const char *path, unsigned int *n)
{
	char **names = xs_directory(d->xs, XBT_NULL, path, n);

	if (!names)
		*n = 0;
	return names;
}

/*
 * Look at the device directories of domain @domid under @root; the devices
 * of that domain there whose directory is gone are the state machine's to
 * forget.
 */
static void vbd_rescan_domain(struct daemon *d, unsigned int root,
			      uint32_t domid)
{
	char path[VBD_PATH_MAX];
	const char *end;
	uint32_t devid;
	unsigned int nv;
	char **devs;
	struct vbd *v, *next;

	snprintf(path, sizeof(path), "%s/%" PRIu32, d->be_root[root], domid);
	devs = list_dir(d, path, &nv);
	for (unsigned int j = 0; j < nv; j++)
		if (!blk_xenbus_parse_id(devs[j], &end, &devid) && !*end)
			vbd_device_seen(d, root, domid, devid);
	free(devs);
	for (v = d->vbds; v; v = next) {
		next = v->next;
		if (v->root == root && v->fe_domid == domid &&
		    xenbus_read_state(d->xs, v->be) == XenbusStateUnknown)
			vbd_directory_gone(v);
	}
}

/*
 * Look at every domain's device directories under @root, and at every
 * device we know there. Only for a change of the root itself: a change
 * below one domain rescans that domain alone, so that plugging N devices
 * costs N, not N^2, reads.
 */
static void vbd_rescan(struct daemon *d, unsigned int root)
{
	unsigned int nd;
	char **doms = list_dir(d, d->be_root[root], &nd);
	struct vbd *v, *next;

	for (unsigned int i = 0; i < nd; i++) {
		const char *end;
		uint32_t domid;

		if (!blk_xenbus_parse_id(doms[i], &end, &domid) && !*end)
			vbd_rescan_domain(d, root, domid);
	}
	free(doms);
	for (v = d->vbds; v; v = next) {
		next = v->next;
		if (v->root == root &&
		    xenbus_read_state(d->xs, v->be) == XenbusStateUnknown)
			vbd_directory_gone(v);
	}
}

/*
 * Nodes of a known device's backend directory whose change needs no look
 * at the device: those only the daemon writes (what it offers, the disk's
 * properties, its error) and those the toolstack writes once, with the
 * device, and nothing reads. A connection writes a dozen of the first
 * kind and a toolstack as many of the second, and every write comes back
 * as an event of the backend watch; re-reading the device's state for
 * each was two xenstore reads an event, half the daemon's traffic with
 * xenstored while guests attach. Any other node (state, online,
 * hotplug-status, params, ..., or one this list does not know) is looked
 * at.
 */
static bool vbd_inert_node(const char *node)
{
	static const char *const inert[] = {
		/* the daemon's */
		"discard-alignment",
		"discard-granularity",
		"discard-secure",
		"error",
		"feature-barrier",
		"feature-discard",
		"feature-flush-cache",
		"feature-max-indirect-segments",
		"feature-persistent",
		"info",
		"max-ring-page-order",
		"multi-queue-max-queues",
		"physical-device-path",
		"physical-sector-size",
		"sector-size",
		"sectors",
		/* libxl's, read by nobody here */
		"bootable",
		"frontend-id",
		"specification",
		"type",
	};

	for (size_t i = 0; i < sizeof(inert) / sizeof(inert[0]); i++)
		if (strcmp(node, inert[i]) == 0)
			return true;
	return false;
}

/*
 * Which served directory @path is in or is, and the rest of it after the
 * root in @rest; -1 for none. ".../backend/vbd" is a prefix of
 * ".../backend/vbd3" as text, not as a path.
 */
static int root_of(const struct daemon *d, const char *path, const char **rest)
{
	for (unsigned int i = 0; i < d->nr_roots; i++) {
		size_t n = strlen(d->be_root[i]);

		if (strncmp(path, d->be_root[i], n) == 0 &&
		    (path[n] == '/' || path[n] == '\0')) {
			*rest = path + n;
			return (int)i;
		}
	}
	return -1;
}

void vbd_backend_changed(struct daemon *d, const char *path)
{
	const char *p, *end;
	uint32_t domid, devid;
	int root = root_of(d, path, &p);

	if (root < 0)
		return;
	if (p[0] == '/' && blk_xenbus_parse_id(p + 1, &end, &domid) == 0) {
		if (end[0] == '/' &&
		    blk_xenbus_parse_id(end + 1, &end, &devid) == 0) {
			if (end[0] == '/' && vbd_inert_node(end + 1) &&
			    vbd_find(d, (unsigned int)root, domid, devid))
				return;
			vbd_device_seen(d, (unsigned int)root, domid, devid);
		} else if (end[0] == '\0') {
			vbd_rescan_domain(d, (unsigned int)root, domid);
		}
		return;
	}
	/* The root itself changed. */
	vbd_rescan(d, (unsigned int)root);
}

void vbd_frontend_changed(struct daemon *d, const char *path)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		if (strcmp(v->fe_state, path) == 0) {
			v->stale = true;
			return;
		}
	}
}

void vbd_watch_fired(struct daemon *d, const char *path, const char *token)
{
	if (strcmp(token, VBD_TOKEN_BACKEND) == 0)
		vbd_backend_changed(d, path);
	else if (strcmp(token, VBD_TOKEN_FRONTEND) == 0)
		vbd_frontend_changed(d, path);
	else if (strcmp(token, VBD_TOKEN_RELEASE) == 0)
		vbd_domains_released(d);
}

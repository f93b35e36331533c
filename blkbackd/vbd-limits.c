// SPDX-License-Identifier: MIT
/*
 * What a device's disk may do and how large it is, changed under a
 * running guest: its I/O limits (from its xenstore keys, the defaults or
 * blkbackctl limit; limits.h) and its size (blkbackctl resize).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "blkbackd/limits.h"
#include "blkbackd/vbd-internal.h"
#include "blkbackd/worker.h"

static void vbd_apply_limits(struct vbd *v, const struct blk_throttle_limits *l)
{
	char text[96];

	if (l->iops == v->limits.iops && l->bps == v->limits.bps)
		return;
	v->limits = *l;
	blk_throttle_set(&v->throttle, l);
	limits_describe(l, text, sizeof(text));
	vbd_log(v, LOG_INFO, 0, "I/O limit %s", text);
}

/*
 * The limits its xenstore keys or the defaults give; a malformed key keeps
 * the limits in force and is reported once until it changes. A device
 * whose directory is gone keeps them too: it is being removed.
 */
void vbd_refresh_limits(struct vbd *v)
{
	struct blk_throttle_limits l;
	const char *bad = NULL;

	if (limits_read(v->d->xs, v->be, &v->d->opts, &l, &bad) < 0) {
		if (!v->limits_bad)
			vbd_log(v, LOG_WARNING, 0,
				"%s/%s is not a number; the I/O limit "
				"stays as it was. Write a number of "
				"%s there, 0 for none",
				v->be, bad,
				strcmp(bad, BLK_XENBUS_LIMIT_IOPS) == 0
					? "requests per second"
					: "bytes per second");
		v->limits_bad = true;
		return;
	}
	v->limits_bad = false;
	if (l.iops == v->limits.iops && l.bps == v->limits.bps)
		return;
	if (xenbus_read_state(v->d->xs, v->be) != XenbusStateUnknown)
		vbd_apply_limits(v, &l);
}

void vbd_refresh_limits_all(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		vbd_refresh_limits(v);
}

int vbd_set_limits(struct daemon *d, uint32_t domid, uint32_t devid,
		   const struct blk_throttle_limits *l)
{
	struct vbd *v = vbd_find(d, ANY_ROOT, domid, devid);
	int ret;

	if (!v)
		return -ENOENT;
	/* Kept with the device, so that a restarted daemon keeps them. */
	ret = blk_xenbus_write_limits(d->xs, v->be, l->iops, l->bps);
	if (ret < 0)
		return ret;
	v->limits_bad = false;
	vbd_apply_limits(v, l);
	return 0;
}

/* ---- resize ---- */

/* Re-read one image's size; tell its rings and its frontend if it changed. */
static void vbd_resize(struct vbd *v)
{
	uint64_t old = v->image.sectors;
	int ret;

	if (!vbd_image_open(v))
		return;
	ret = blk_image_refresh_size(&v->image);
	if (ret < 0) {
		vbd_log(v, LOG_ERR, -ret, "cannot re-read the image size: %s",
			strerror(-ret));
		return;
	}
	if (v->image.sectors == old)
		return;
	vbd_log(v, LOG_INFO, 0,
		"image resized from %" PRIu64 " to %" PRIu64 " sectors", old,
		v->image.sectors);
	if (!v->nr_queues || v->closing)
		return;
	for (unsigned int q = 0; q < v->nr_queues; q++)
		worker_resize(v->queue[q].w, queue_cookie(v, q),
			      vbd_capacity(v));
	ret = blk_xenbus_resized(v->d->xs, v->be, vbd_capacity(v));
	if (ret < 0)
		vbd_log(v, LOG_ERR, -ret, "cannot publish the new size: %s",
			strerror(-ret));
}

void vbd_resize_all(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		vbd_resize(v);
}

int vbd_resize_one(struct daemon *d, uint32_t domid, uint32_t devid)
{
	struct vbd *v = vbd_find(d, ANY_ROOT, domid, devid);

	if (!v)
		return -ENOENT;
	vbd_resize(v);
	return 0;
}

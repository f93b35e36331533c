// SPDX-License-Identifier: MIT
/*
 * The devices the daemon serves (d->vbds), found by directory or by a
 * ring's cookie, and named in messages: every message about one carries
 * its journal fields (vbd_log()).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkbackd/vbd-internal.h"

struct vbd *vbd_find(struct daemon *d, unsigned int root, uint32_t domid,
		     uint32_t devid)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->fe_domid == domid && v->devid == devid &&
		    (root == ANY_ROOT || v->root == root))
			return v;
	return NULL;
}

const char *vbd_root_kind(const struct daemon *d, unsigned int root)
{
	return strrchr(d->be_root[root], '/') + 1;
}

struct vbd *vbd_by_cookie(struct daemon *d, uint64_t cookie)
{
	cookie &= ~QUEUE_MASK;
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->cookie == cookie)
			return v;
	return NULL;
}

struct log_disk vbd_who(const struct vbd *v)
{
	return (struct log_disk){ .domid = v->fe_domid,
				  .devid = v->devid,
				  .vdev = v->vdev[0] ? v->vdev : NULL };
}

void vbd_log(const struct vbd *v, int priority, int err, const char *fmt, ...)
{
	const struct log_disk who = vbd_who(v);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_disk_msg(priority, &who, err, "%s: %s", v->name, msg);
}

struct vbd *vbd_new(struct daemon *d, unsigned int root, uint32_t domid,
		    uint32_t devid)
{
	struct vbd *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->d = d;
	v->fe_domid = domid;
	v->devid = devid;
	v->cookie = ++d->next_cookie << QUEUE_BITS;
	v->image.fd = -1;
	v->root = root;
	blk_throttle_init(&v->throttle);
	snprintf(v->name, sizeof(v->name), "%s %" PRIu32 "/%" PRIu32,
		 vbd_root_kind(d, root), domid, devid);
	snprintf(v->be, sizeof(v->be), "%s/%" PRIu32 "/%" PRIu32,
		 d->be_root[root], domid, devid);
	v->next = d->vbds;
	d->vbds = v;
	d->nr_vbds++;
	return v;
}

void vbd_free(struct vbd *v)
{
	struct daemon *d = v->d;

	for (struct vbd **pp = &d->vbds; *pp; pp = &(*pp)->next) {
		if (*pp == v) {
			*pp = v->next;
			break;
		}
	}
	d->nr_vbds--;
	blk_throttle_destroy(&v->throttle);
	free(v);
}

int vbd_why(struct vbd_why *why, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
	return err;
}

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
#include "libblk/poll.h" /* blk_now_ns() */

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

/* Say that @held of @v's messages were held back, if any were. */
static void vbd_log_held(const struct vbd *v, unsigned int held)
{
	const struct log_disk who = vbd_who(v);

	if (held)
		log_disk_msg(LOG_NOTICE, &who, 0,
			     "%s: %u messages held back (more than %u at "
			     "once, %u a second after)",
			     v->name, held, LOG_LIMIT_BURST, LOG_LIMIT_PER_S);
}

bool vbd_log_pass(struct vbd *v, int priority, unsigned int lines)
{
	unsigned int held;

	if (!log_wanted(priority) ||
	    !log_limit_pass(&v->log_limit, priority, lines, blk_now_ns(),
			    &held))
		return false;
	vbd_log_held(v, held);
	return true;
}

void vbd_log(struct vbd *v, int priority, int err, const char *fmt, ...)
{
	const struct log_disk who = vbd_who(v);
	char msg[1024];
	va_list ap;

	if (!vbd_log_pass(v, priority, 1))
		return;
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
	v->xenstat_fd = -1;
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
	vbd_xenstat_remove(v);
	vbd_log_held(v, log_limit_take_held(&v->log_limit));
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

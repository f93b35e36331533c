// SPDX-License-Identifier: MIT
/*
 * A live move (vbd-move.c) across a restart of the daemon. A daemon that
 * was killed, or stopped, while it moved a guest's disk leaves the move's
 * record (move-record.h); the next one opens the device's image by it:
 *
 *   MOVE_COPYING    the copy was not finished: the source is the guest's
 *                   disk. The copy and the record are removed once the
 *                   source is open, and the move is to be run again.
 *   MOVE_SWITCHED   the guest was switched to the destination, and may
 *                   have written there since: the destination is its disk,
 *                   whatever the backend's params node still names. The
 *                   source carries the moved-to mark, which
 *                   blk_image_open() refuses; the restart may have come
 *                   between the record and the mark, so it is set here if
 *                   it is missing.
 *
 * The image to open is chosen before anything opens one (a switched
 * move's source is marked, and refused). A record whose device is gone
 * at start-up is settled the same way and removed.
 *
 * A remote store's copy is not removed nor its source marked here: that
 * connects to the store, which the main thread never waits for
 * (opener.h); the journal says what to run instead.
 *
 * Main thread only. The state directory's files are read and written
 * in place (a few small, local files).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "blkbackd/move-record.h"
#include "blkbackd/vbd-internal.h"
#include "libblk/image-copy.h"

/* Whom a message is about: a device, or the record of one that is gone. */
struct about {
	struct log_disk who;
	const char *name;
};

static void say(const struct about *a, int priority, int err, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static void say(const struct about *a, int priority, int err, const char *fmt,
		...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_disk_msg(priority, &a->who, err, "%s: %s", a->name, msg);
}

static bool is_remote(const char *path)
{
	return blk_image_caps_of(path) & BLK_CAP_REMOTE_OPEN;
}

/* The copy of a move that will not finish goes. */
static void vbd_move_drop_copy(const struct about *a,
			       const struct move_record *r)
{
	char why[VBD_WHY_MAX];
	int ret;

	if (is_remote(r->dest)) {
		say(a, LOG_WARNING, 0,
		    "%s, the unfinished copy of a move abandoned by a "
		    "restart, is left in its store; remove it (rbd rm "
		    "POOL/IMAGE) before moving the disk there again",
		    r->dest);
		return;
	}
	ret = blk_image_remove(r->dest, why, sizeof(why));
	if (ret < 0 && ret != -ENOENT)
		say(a, LOG_WARNING, -ret,
		    "cannot remove %s, the unfinished copy of a move abandoned "
		    "by a restart: %s; remove it by hand",
		    r->dest, why);
}

/*
 * The source of a switched move carries its moved-to mark: set it if the
 * restart came before the move did; nothing to do for one marked already,
 * nor for one removed since, which no one can attach by mistake. Without
 * taking its lock, which the killed daemon's I/O still in flight may hold.
 */
static void vbd_move_mark_source(const struct about *a,
				 const struct move_record *r)
{
	char why[VBD_WHY_MAX];
	int ret;

	if (is_remote(r->source)) {
		say(a, LOG_NOTICE, 0,
		    "cannot check here that %s carries the mark of its move "
		    "to %s; if it does not (rbd image-meta get POOL/IMAGE "
		    "" BLK_MOVED_TO_KEY "), set it with rbd image-meta set "
		    "POOL/IMAGE " BLK_MOVED_TO_KEY " %s",
		    r->source, r->dest, r->dest);
		return;
	}
	ret = blk_image_mark_moved_path(r->source, r->dest, why, sizeof(why));
	if (ret == -EALREADY || ret == -ENOENT)
		return;
	if (ret < 0)
		say(a, LOG_WARNING, -ret,
		    "cannot mark %s as moved to %s: %s; until it is marked, "
		    "nothing keeps a guest from being given its old data",
		    r->source, r->dest, why);
	else
		say(a, LOG_NOTICE, 0,
		    "marked %s as moved to %s: the restart came before its "
		    "move had marked it",
		    r->source, r->dest);
}

/* Its record, or false (none, or damaged: said, and left for a look). */
static bool vbd_move_record(struct vbd *v, struct move_record *r)
{
	const char *dir = v->d->opts.state_dir;
	char path[PATH_MAX];
	int ret;

	if (!dir)
		return false;
	ret = move_record_load(dir, v->fe_domid, v->devid, r);
	if (ret == 0 || ret == -ENOENT)
		return ret == 0;
	move_record_path(dir, v->fe_domid, v->devid, path, sizeof(path));
	vbd_log(v, LOG_ERR, -ret,
		"the record of its move, %s, is %s: serving the image its "
		"params names (refused if that was moved: its mark then says "
		"where to); remove the record once the disk is right",
		path, ret == -EINVAL ? "damaged" : strerror(-ret));
	return false;
}

const char *vbd_move_image_path(struct vbd *v, const char *params, char *buf)
{
	struct move_record r;

	if (!vbd_move_record(v, &r))
		return params;
	snprintf(buf, VBD_PATH_MAX, "%s",
		 r.phase == MOVE_SWITCHED ? r.dest : r.source);
	return buf;
}

/* @v's record, as a device at rest with the image named @params needs it. */
static int vbd_move_record_rest_as(struct vbd *v, const char *params)
{
	const char *dir = v->d->opts.state_dir;
	struct move_record r = { .domid = v->fe_domid,
				 .devid = v->devid,
				 .phase = MOVE_SWITCHED };

	if (strcmp(params, v->image_path) == 0)
		return move_record_remove(dir, v->fe_domid, v->devid);
	snprintf(r.source, sizeof(r.source), "%s", params);
	snprintf(r.dest, sizeof(r.dest), "%s", v->image_path);
	return move_record_save(dir, &r);
}

int vbd_move_record_rest(struct vbd *v)
{
	const char *dir = v->d->opts.state_dir;
	struct blk_vbd_config cfg;
	char path[PATH_MAX];
	const char *bad;
	int ret;

	if (!dir)
		return 0;
	ret = blk_xenbus_read_vbd_config(v->d->xs, v->be, &cfg, &bad);
	if (ret == 0) {
		ret = vbd_move_record_rest_as(v, cfg.path);
		blk_vbd_config_free(&cfg);
	}
	if (ret < 0) {
		move_record_path(dir, v->fe_domid, v->devid, path,
				 sizeof(path));
		vbd_log(v, LOG_ERR, -ret,
			"cannot update the record of its moves, %s: %s; a "
			"restart may not find the disk's image %s",
			path, strerror(-ret), v->image_path);
	}
	return ret;
}

void vbd_move_opened(struct vbd *v, const char *params)
{
	const struct about a = { vbd_who(v), v->name };
	struct move_record r;

	/* A damaged record was said when the image was chosen. */
	if (!v->d->opts.state_dir ||
	    move_record_load(v->d->opts.state_dir, v->fe_domid, v->devid, &r) <
		    0)
		return;
	if (r.phase == MOVE_COPYING) {
		vbd_log(v, LOG_NOTICE, 0,
			"move to %s abandoned by a restart; the source %s "
			"stays authoritative; run it again",
			r.dest, r.source);
		vbd_move_drop_copy(&a, &r);
		vbd_move_record_rest(v);
		return;
	}
	if (strcmp(params, r.dest) != 0)
		vbd_log(v, LOG_NOTICE, 0,
			"serving %s, to which a move switched the disk before "
			"the restart (its params still names %s: point the "
			"domain's configuration at %s)",
			r.dest, params, r.dest);
	vbd_move_mark_source(&a, &r);
}

/*
 * Is the device there, under any backend directory? Asked of xenstore, not
 * of d->vbds: at start-up the watch events that make the devices may still
 * be on their way, and a live device's record must never be taken for a
 * gone one's.
 */
static bool vbd_move_device_exists(struct daemon *d, uint32_t domid,
				   uint32_t devid)
{
	char be[VBD_PATH_MAX];

	if (vbd_find(d, ANY_ROOT, domid, devid))
		return true;
	for (unsigned int i = 0; i < d->nr_roots; i++) {
		snprintf(be, sizeof(be), "%s/%" PRIu32 "/%" PRIu32,
			 d->be_root[i], domid, devid);
		if (xenbus_read_state(d->xs, be) != XenbusStateUnknown)
			return true;
	}
	return false;
}

/* One record at start-up: left to its device if there is one. */
static int vbd_move_settle(void *arg, uint32_t domid, uint32_t devid)
{
	struct daemon *d = arg;
	char name[48], path[PATH_MAX];
	struct about a = { .who = { .domid = domid, .devid = devid },
			   .name = name };
	struct move_record r;
	int ret;

	if (vbd_move_device_exists(d, domid, devid))
		return 0;
	snprintf(name, sizeof(name), "vbd %" PRIu32 "/%" PRIu32, domid, devid);
	ret = move_record_load(d->opts.state_dir, domid, devid, &r);
	if (ret < 0) {
		move_record_path(d->opts.state_dir, domid, devid, path,
				 sizeof(path));
		say(&a, LOG_WARNING, -ret,
		    "removing %s, the %s record of a move of a device that "
		    "is gone",
		    path, ret == -EINVAL ? "damaged" : "unreadable");
		move_record_remove(d->opts.state_dir, domid, devid);
		return 0;
	}
	if (r.phase == MOVE_COPYING) {
		say(&a, LOG_NOTICE, 0,
		    "the device is gone; its move to %s, abandoned by a "
		    "restart, is removed",
		    r.dest);
		vbd_move_drop_copy(&a, &r);
	} else {
		say(&a, LOG_NOTICE, 0,
		    "the device is gone; its disk is %s, to which a move "
		    "switched it from %s",
		    r.dest, r.source);
		vbd_move_mark_source(&a, &r);
	}
	ret = move_record_remove(d->opts.state_dir, domid, devid);
	if (ret < 0)
		say(&a, LOG_WARNING, -ret,
		    "cannot remove its move's record: %s", strerror(-ret));
	return 0;
}

void vbd_move_settle_gone(struct daemon *d)
{
	int ret;

	if (!d->opts.state_dir)
		return;
	ret = move_record_foreach(d->opts.state_dir, vbd_move_settle, d);
	if (ret < 0)
		log_err("cannot read the moves' records in %s/moves: %s",
			d->opts.state_dir, strerror(-ret));
}

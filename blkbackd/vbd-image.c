// SPDX-License-Identifier: MIT
/*
 * A device's image: opened as the toolstack named it, locked against a
 * second writer, and the features offered for it; the hand-over of a
 * migration (the image taken once the same VM's other device let it go,
 * here or on another host); and what an operator did to an open image.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blkbackd/opener.h"
#include "blkbackd/vbd-internal.h"

static const char *const image_phase_names[] = {
	[VBD_IMAGE_NONE] = "none",
	[VBD_IMAGE_AWAITING] = "awaiting",
	[VBD_IMAGE_AWAITING_REMOTE] = "awaiting-remote",
	[VBD_IMAGE_OPENING] = "opening",
	[VBD_IMAGE_OPEN] = "open",
};

/* The moves enum vbd_image_phase allows (vbd-internal.h), from -> to. */
static const bool image_phase_moves[][VBD_IMAGE_OPEN + 1] = {
	[VBD_IMAGE_NONE] = { [VBD_IMAGE_AWAITING] = true,
			     [VBD_IMAGE_AWAITING_REMOTE] = true,
			     [VBD_IMAGE_OPENING] = true,
			     [VBD_IMAGE_OPEN] = true },
	[VBD_IMAGE_AWAITING] = { [VBD_IMAGE_NONE] = true,
				 [VBD_IMAGE_AWAITING_REMOTE] = true,
				 [VBD_IMAGE_OPEN] = true },
	[VBD_IMAGE_AWAITING_REMOTE] = { [VBD_IMAGE_NONE] = true,
					[VBD_IMAGE_OPEN] = true },
	[VBD_IMAGE_OPENING] = { [VBD_IMAGE_NONE] = true,
				[VBD_IMAGE_AWAITING] = true,
				[VBD_IMAGE_AWAITING_REMOTE] = true,
				[VBD_IMAGE_OPEN] = true },
	[VBD_IMAGE_OPEN] = { false },
};

/*
 * Any other move is a bug that could have two writers on one image or a
 * guest wait for ever. Die instead: the service manager restarts the
 * daemon, which resumes every device from what xenstore says.
 */
static void vbd_set_image_phase(struct vbd *v, enum vbd_image_phase to)
{
	if (!image_phase_moves[v->image_phase][to]) {
		vbd_log(v, LOG_ERR, 0,
			"bug: its image cannot go from %s to %s; aborting so "
			"that a restart takes over",
			image_phase_names[v->image_phase],
			image_phase_names[to]);
		abort();
	}
	v->image_phase = to;
	/* Only an AWAITING_REMOTE image counts its tries. */
	v->remote_ticks = 0;
}

/*
 * An NBD connection of @arg's lost or found its server (on a worker
 * thread: it reads only what vbd_name_for_nbd() set before lending the
 * backends).
 */
static void vbd_nbd_said(void *arg, int priority, const char *msg)
{
	const struct vbd *v = arg;

	log_disk_msg(priority, &v->nbd_who, 0, "%s: %s", v->nbd_who_name, msg);
}

void vbd_name_for_nbd(struct vbd *v)
{
	v->nbd_who = vbd_who(v);
	if (v->vdev[0])
		snprintf(v->nbd_who_name, sizeof(v->nbd_who_name), "%s (%s)",
			 v->name, v->vdev);
	else
		snprintf(v->nbd_who_name, sizeof(v->nbd_who_name), "%s",
			 v->name);
}

/* The toolstack's discard-enable, for a writable image that can punch. */
static bool discard_enabled(const struct vbd *v)
{
	return v->discard_enable && !v->image.readonly &&
	       v->image.discard_granularity;
}

static void vbd_choose_features(struct vbd *v)
{
	const struct options *o = &v->d->opts;

	v->features = (struct blk_backend_features){
		.flush = true,
		.barrier = true,
		.persistent = o->persistent,
		.discard = discard_enabled(v),
		.discard_granularity = v->image.discard_granularity,
		.discard_alignment = 0,
		.max_indirect_segments = (uint16_t)o->max_indirect_segments,
		.max_ring_order = o->max_ring_order,
		.max_queues = o->max_queues ? o->max_queues : v->d->nr_workers,
	};
	if (v->features.max_queues > BLK_MAX_QUEUES)
		v->features.max_queues = BLK_MAX_QUEUES;
	if (v->image.max_queues && v->features.max_queues > v->image.max_queues)
		v->features.max_queues = v->image.max_queues;
}

/*
 * xl migrate sets up the receiving domain's disks (hotplug scripts
 * included) before it destroys the sending domain, so with both ends in
 * one host the new device asks for an image the old one still holds
 * writable. Xen's block script allows that overlap for two devices of the
 * same VM; so does blkbackd, without two writers: the new device is
 * offered with the old one's features and takes the image only once the
 * old device has let it go (docs/migration.md).
 */

/* The VM a domain runs (/local/domain/N/vm), or NULL; the caller frees. */
static char *vbd_vm_of(struct daemon *d, uint32_t domid)
{
	char dir[32];
	char *vm;

	snprintf(dir, sizeof(dir), "/local/domain/%" PRIu32, domid);
	if (xenbus_read_str(d->xs, dir, "vm", &vm) < 0)
		return NULL;
	if (!vm[0]) {
		free(vm);
		return NULL;
	}
	return vm;
}

static bool vbd_same_vm(const struct vbd *a, const struct vbd *b)
{
	char *va = vbd_vm_of(a->d, a->fe_domid);
	char *vb = va ? vbd_vm_of(b->d, b->fe_domid) : NULL;
	bool same = vb && strcmp(va, vb) == 0;

	free(va);
	free(vb);
	return same;
}

/*
 * The device of the same VM as @v that holds @path writable, if that is
 * what keeps @v from opening it.
 */
static struct vbd *vbd_handover_holder(struct vbd *v, const char *path)
{
	for (struct vbd *w = v->d->vbds; w; w = w->next)
		if (w != v && vbd_image_open(w) && !w->image.readonly &&
		    strcmp(w->image_path, path) == 0 && vbd_same_vm(v, w))
			return w;
	return NULL;
}

/*
 * No device here holds @v's image, but its lock's holder named @v's VM
 * as its owner (blk_image_open(), img->holder): the same VM's disk on another
 * host, whose domain xl destroys once this one runs. Offer @v as the
 * failed open described the image, and take it once the lock is free;
 * returns true then. Between hosts there is no local release to wait
 * for, so the main loop tries again (vbd_retry_handovers()); the lock
 * itself keeps the two ends from writing at once.
 */
static bool vbd_await_remote_handover(struct vbd *v, const char *path)
{
	char *vm;
	bool same;

	/*
	 * A lock held under no name while @v waits: the sender removes its
	 * record just before it lets the lock go (blk_rbd_close(), the file
	 * backend likewise), and a try between the two finds that. Wait on;
	 * a holder that names another VM still ends the wait.
	 */
	if (!v->image.holder[0])
		return v->image_phase == VBD_IMAGE_AWAITING_REMOTE;
	vm = vbd_vm_of(v->d, v->fe_domid);
	same = vm && strcmp(vm, v->image.holder) == 0;
	free(vm);
	if (!same)
		return false;
	if (v->image_phase != VBD_IMAGE_AWAITING_REMOTE) {
		vbd_choose_features(v);
		vbd_log(v, LOG_INFO, 0,
			"%s is locked by a disk of the same VM on another "
			"host (a migration): offering the disk, taking the "
			"image when its lock is free",
			path);
		vbd_set_image_phase(v, VBD_IMAGE_AWAITING_REMOTE);
	}
	return true;
}

/*
 * @v could not lock its image because @path is busy. If a device of the
 * same VM holds it, here or on another host, offer @v with that device's
 * view of the image and wait for it; returns true then.
 */
static bool vbd_await_handover(struct vbd *v, const char *path)
{
	struct vbd *holder = vbd_handover_holder(v, path);

	if (!holder)
		return vbd_await_remote_handover(v, path);
	v->features = holder->features;
	/* One that waits for another host's lock waits for both. */
	if (!vbd_awaits_image(v)) {
		vbd_log(v, LOG_INFO, 0,
			"%s is held by %s of the same VM (a migration): "
			"offering the disk, taking the image when %s "
			"releases it",
			path, holder->name, holder->name);
		vbd_set_image_phase(v, VBD_IMAGE_AWAITING);
	}
	return true;
}

/*
 * A store that keeps data but has no lock that a migration's two ends
 * meet at (an NBD export; an image file and an RBD image have theirs, and
 * the second writer gets -EBUSY): a device of the same VM that has @path
 * open writable stands for the lock, so that the receiving device waits
 * for its release as for a file's. Without that it would connect beside
 * the sending device, whose requests in flight at the suspend could
 * still land after the receiver's writes.
 */
static bool vbd_export_held(struct vbd *v, const char *path)
{
	unsigned int caps = blk_image_caps_of(path);

	return (caps & BLK_CAP_STORES) && !(caps & BLK_CAP_LOCK) &&
	       vbd_handover_holder(v, path);
}

/* @path was closed by a device: whoever waits for it looks again. */
static void vbd_image_released(struct daemon *d, const char *path)
{
	for (struct vbd *w = d->vbds; w; w = w->next)
		if (vbd_awaits_image(w) && strcmp(w->image_path, path) == 0)
			w->stale = true;
}

static const char *open_advice(int err)
{
	switch (err) {
	case -ENOENT:
		return "check the target= of the guest's disk line";
	case -EBUSY:
		return "another device or program holds it writable; detach it "
		       "there, or give every user access=ro";
	case -EINVAL:
		return "the target must be a regular file or a block device";
	case -EACCES:
	case -EPERM:
	case -EROFS:
		return "blkbackd needs read-write access for access=rw, or "
		       "use access=ro";
	default:
		return "check the image and the host's logs";
	}
}

/*
 * A remote store's image (BLK_CAP_REMOTE_OPEN) is opened on an opener
 * thread (opener.h), so that a store that is away (an NBD server that
 * accepts and never answers, a Ceph monitor nobody reaches) holds up its
 * own device only. Such an attempt that fails because the store is away
 * is tried again, after 1 s, then doubling up to 30 s between attempts,
 * for as long as the device exists: the device waits, and says why in
 * its error node and the log. Any other failure (no such export or
 * image, a read-only export for a writable disk, a lock held elsewhere)
 * is the device's answer, as for a file.
 */
#define OPEN_RETRY_FIRST_MS 1000u
#define OPEN_RETRY_MAX_MS 30000u

static bool vbd_store_is_remote(const char *path)
{
	return blk_image_caps_of(path) & BLK_CAP_REMOTE_OPEN;
}

/* Errors that mean the store did not answer, or is not there now. */
static bool vbd_store_away(int err)
{
	switch (err) {
	case -ETIMEDOUT:
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
		return true;
	default:
		return false;
	}
}

/* The wait before the next attempt, after @tries that found it away. */
static unsigned int vbd_open_backoff(unsigned int tries)
{
	unsigned int ms = OPEN_RETRY_FIRST_MS;

	while (tries-- && ms < OPEN_RETRY_MAX_MS)
		ms *= 2;
	return ms < OPEN_RETRY_MAX_MS ? ms : OPEN_RETRY_MAX_MS;
}

static int vbd_start_open(struct vbd *v, const char *path, bool readonly,
			  const char *owner, unsigned int delay_ms,
			  struct vbd_why *why)
{
	const struct opener_request req = { .path = path,
					    .readonly = readonly,
					    .cache = v->d->opts.cache,
					    .owner = owner,
					    .delay_ms = delay_ms };
	int err;

	v->image.detail[0] = '\0';
	v->open_job = opener_open(v->d->opener, v->cookie, &req, &err);
	if (!v->open_job)
		return vbd_why(why, err, "cannot start a thread to open it: %s",
			       strerror(-err));
	if (v->image_phase == VBD_IMAGE_NONE)
		vbd_set_image_phase(v, VBD_IMAGE_OPENING);
	return -EINPROGRESS;
}

/*
 * Open a remote store's image on an opener thread: -EINPROGRESS while an
 * attempt runs or waits (the device is made stale when it ends), else
 * the attempt's result, its image in v->image. A device whose store is
 * away says so in @why and tries again after a backoff, unless it
 * awaits another host's release, which vbd_retry_handovers() retries.
 */
static int vbd_open_remote(struct vbd *v, const char *path, bool readonly,
			   const char *owner, struct vbd_why *why)
{
	unsigned int delay_ms;
	int ret;

	why->msg[0] = '\0';
	if (v->open_job)
		return -EINPROGRESS;
	if (!v->open_done)
		return vbd_start_open(v, path, readonly, owner, 0, why);
	v->open_done = false;
	ret = v->open_ret;
	if (!vbd_store_away(ret) ||
	    v->image_phase == VBD_IMAGE_AWAITING_REMOTE) {
		v->open_tries = 0;
		return ret;
	}
	delay_ms = vbd_open_backoff(v->open_tries++);
	vbd_why(why, ret,
		"cannot reach the store of image %s: %s; trying again in "
		"%u s (the guest waits)",
		path, v->image.detail[0] ? v->image.detail : strerror(-ret),
		delay_ms / 1000);
	vbd_log(v, LOG_WARNING, -ret, "%s", why->msg);
	return vbd_start_open(v, path, readonly, owner, delay_ms, why);
}

/*
 * How long a daemon resuming a connected device tries its image's lock
 * again, for I/O its dead predecessor left in flight (see
 * blk_image_open()): every VBD_HANDOVER_RETRY_MS from the main loop
 * (vbd_retry_handovers()), never sleeping in it.
 */
#define RESUME_LOCK_WAIT_MS 5000

/* An image of no whole sector, which no guest could use. */
static bool vbd_image_empty(const struct vbd *v)
{
	return v->image.sectors == 0 && !v->cdrom;
}

/*
 * Any local user who can read an image can lock it (a POSIX read lock
 * keeps blkbackd's write lock out), and read the guest's data: said once
 * per attach, with the fix.
 */
static void vbd_warn_world_readable(struct vbd *v)
{
	if (v->image.world_readable)
		vbd_log(v, LOG_WARNING, 0,
			"image %s is readable by every local user, who can "
			"read the guest's data and lock the image against its "
			"next attach; chmod o-r %s (docs/security.md)",
			v->image_path, v->image_path);
}

/*
 * A writable image of a kind that locks (BLK_CAP_LOCK) but which could
 * not take the lock has nothing that keeps a second writer out (another
 * host's daemon, another disk): refused, unless the operator allowed it,
 * and then said. Only an RBD image without its exclusive-lock feature is
 * so (libblk/backend-rbd.h). -EPERM and @why when refused.
 */
static int vbd_check_single_writer(struct vbd *v, struct vbd_why *why)
{
	if (v->image.readonly || (v->image.caps & BLK_CAP_LOCK) ||
	    !(blk_image_caps_of(v->image_path) & BLK_CAP_LOCK))
		return 0;
	if (!v->d->opts.rbd_allow_no_exclusive_lock)
		return vbd_why(why, -EPERM,
			       "RBD image %s has no exclusive-lock feature, "
			       "so nothing keeps a second writer out; enable "
			       "it (rbd feature enable IMAGE exclusive-lock), "
			       "give the disk access=ro, or set "
			       "rbd-allow-no-exclusive-lock = yes in "
			       "blkbackd.conf",
			       v->image_path);
	vbd_log(v, LOG_WARNING, 0,
		"RBD image %s has no exclusive-lock feature: nothing keeps a "
		"second writer out (allowed by rbd-allow-no-exclusive-lock)",
		v->image_path);
	return 0;
}

/*
 * Open the image the toolstack named, trying its lock once. On failure,
 * @why says what is wrong and what to do about it.
 */
static int vbd_open_image(struct vbd *v, struct vbd_why *why)
{
	struct blk_vbd_config cfg;
	const char *path, *bad;
	char moved[VBD_PATH_MAX];
	bool readonly;
	int ret;

	ret = blk_xenbus_read_vbd_config(v->d->xs, v->be, &cfg, &bad);
	if (ret < 0 && strcmp(bad, "mode") == 0) {
		snprintf(why->msg, sizeof(why->msg), "mode must be 'r' or 'w'");
		return ret;
	}
	if (ret < 0) {
		snprintf(why->msg, sizeof(why->msg),
			 "no params node: the toolstack must "
			 "write the image path there");
		return ret;
	}
	if (cfg.vhd) {
		snprintf(why->msg, sizeof(why->msg),
			 "%s is a VHD image; blkbackd serves raw images: "
			 "convert it with 'qemu-img convert -O raw', or serve "
			 "it from qemu-storage-daemon as an NBD export "
			 "(docs/nbd.md)",
			 cfg.path);
		blk_vbd_config_free(&cfg);
		return -EINVAL;
	}
	/* A moved disk's source is marked, and refused: chosen first. */
	path = vbd_move_image_path(v, cfg.path, moved);
	readonly = cfg.readonly;
	v->cdrom = cfg.cdrom;
	v->removable = cfg.removable;
	v->discard_enable = cfg.discard;

	/* Named even when busy: a device waiting for it is found by it. */
	snprintf(v->image_path, sizeof(v->image_path), "%s", path);
	if (!readonly && vbd_export_held(v, path)) {
		ret = -EBUSY;
	} else {
		/* Named with the lock it takes, for another host. */
		char *vm = vbd_vm_of(v->d, v->fe_domid);

		if (vbd_store_is_remote(path))
			ret = vbd_open_remote(v, path, readonly, vm, why);
		else
			ret = blk_image_open(&v->image, path, readonly,
					     v->d->opts.cache, vm);
		free(vm);
	}
	if (ret == -EINPROGRESS) {
		blk_vbd_config_free(&cfg);
		return ret;
	}
	if (ret < 0 && v->image.detail[0]) {
		snprintf(why->msg, sizeof(why->msg), "cannot open image %s: %s",
			 path, v->image.detail);
	} else if (ret < 0) {
		snprintf(why->msg, sizeof(why->msg),
			 "cannot open image %s: %s; %s", path, strerror(-ret),
			 open_advice(ret));
	} else if (vbd_check_single_writer(v, why) < 0) {
		blk_image_close(&v->image);
		ret = -EPERM;
	} else if (vbd_image_empty(v)) {
		blk_image_close(&v->image);
		snprintf(why->msg, sizeof(why->msg),
			 "image %s is empty (smaller than one 512-byte "
			 "sector); give it a size (truncate -s SIZE) or fix "
			 "the target= of the guest's disk line",
			 path);
		ret = -EINVAL;
	} else {
		vbd_set_image_phase(v, VBD_IMAGE_OPEN);
		/*
		 * Chosen here, not at InitWait, so that a daemon resuming a
		 * connected device knows what its predecessor offered.
		 */
		vbd_choose_features(v);
		blk_image_set_nbd_reconnect(
			&v->image, v->d->opts.nbd_reconnect_timeout * 1000,
			vbd_nbd_said, v);
		/* The cache mode is a local file's (BLK_CAP_LOCAL). */
		if (v->d->opts.cache == BLK_CACHE_NONE && !v->image.direct &&
		    (v->image.caps & BLK_CAP_LOCAL))
			vbd_log(v, LOG_NOTICE, 0,
				"the filesystem of %s refuses O_DIRECT; "
				"serving it through the page cache "
				"(flushes still reach the disk)",
				path);
		if (v->image.tail_ignored)
			vbd_log(v, LOG_WARNING, 0,
				"%s is not a multiple of 512 bytes; the "
				"guest sees the image without its last "
				"partial sector",
				path);
		vbd_log(v, LOG_INFO, 0, "image %s, %" PRIu64 " sectors%s", path,
			v->image.sectors, readonly ? ", read-only" : "");
		vbd_warn_world_readable(v);
		vbd_move_opened(v, cfg.path);
	}
	/* An opener's attempt ended: the device is where a failed open is. */
	if (ret < 0 && v->image_phase == VBD_IMAGE_OPENING)
		vbd_set_image_phase(v, VBD_IMAGE_NONE);
	blk_vbd_config_free(&cfg);
	return ret;
}

/*
 * The frontend of a device offered during a hand-over wants to connect:
 * take the image if its holder let it go. -EAGAIN while it still holds it
 * (its release makes the device stale again); -errno and @why if someone
 * else has it.
 */
static int vbd_take_over(struct vbd *v, struct vbd_why *why)
{
	int ret = vbd_open_image(v, why);

	/* An attempt on an opener thread, or a store away: tried again. */
	if (ret == -EINPROGRESS || vbd_store_away(ret))
		return -EAGAIN;
	if (ret == -EBUSY && vbd_await_handover(v, v->image_path)) {
		vbd_log(v, LOG_DEBUG, 0, "the guest waits for %s",
			v->image_path);
		return -EAGAIN;
	}
	if (ret < 0) {
		vbd_set_image_phase(v, VBD_IMAGE_NONE);
		return ret;
	}
	vbd_log(v, LOG_INFO, 0, "took %s over", v->image_path);
	return 0;
}

/*
 * A device resumed from an earlier run found its image locked: the dead
 * daemon's I/O still in flight, or another program. True while it may
 * try again (vbd_retry_handovers() makes it stale); past
 * RESUME_LOCK_WAIT_MS it fails with @why, which names the holder.
 */
static bool vbd_resume_waits(struct vbd *v, const struct vbd_why *why)
{
	if (v->resume_ticks == 0)
		vbd_log(v, LOG_NOTICE, 0,
			"%s; trying again for %u s (a killed daemon's I/O "
			"still in flight holds it that long at most)",
			why->msg, RESUME_LOCK_WAIT_MS / 1000);
	if (v->resume_ticks * VBD_HANDOVER_RETRY_MS >= RESUME_LOCK_WAIT_MS) {
		v->resume_ticks = 0;
		return false;
	}
	if (v->resume_ticks == 0)
		v->resume_ticks = 1;
	return true;
}

int vbd_reopen_image(struct vbd *v, struct vbd_why *why)
{
	int ret;

	if (vbd_image_open(v))
		return 0;
	if (vbd_awaits_image(v))
		return vbd_take_over(v, why);
	ret = vbd_open_image(v, why);
	if (ret == -EBUSY && vbd_resume_waits(v, why))
		return -EAGAIN;
	v->resume_ticks = 0;
	return ret;
}

int vbd_offer_image(struct vbd *v, struct vbd_why *why)
{
	int ret;

	if (vbd_image_open(v) || vbd_awaits_image(v))
		return 0;
	ret = vbd_open_image(v, why);
	if (ret == -EBUSY && vbd_await_handover(v, v->image_path))
		return 0;
	return ret;
}

/* An open on an opener thread, or its result not taken yet: dropped. */
static void vbd_cancel_open(struct vbd *v)
{
	if (v->open_job)
		opener_cancel(v->open_job);
	v->open_job = NULL;
	if (v->open_done && v->open_ret == 0)
		blk_image_close(&v->image);
	v->open_done = false;
}

void vbd_drop_image(struct vbd *v)
{
	vbd_cancel_open(v);
	if (vbd_image_open(v))
		blk_image_close(&v->image);
}

void vbd_close_image(struct vbd *v)
{
	vbd_cancel_open(v);
	if (!vbd_image_open(v))
		return;
	blk_image_close(&v->image);
	vbd_log(v, LOG_INFO, 0, "released");
	vbd_image_released(v->d, v->image_path);
}

/* An opener's attempt for the device named @cookie ended (opener.h). */
static bool vbd_open_ended(void *arg, uint64_t cookie, int ret,
			   struct blk_image *img)
{
	struct vbd *v = vbd_by_cookie(arg, cookie);

	if (!v || !v->open_job)
		return false;
	v->open_job = NULL;
	/* Open, or described as the failed open left it (holder, detail). */
	memcpy(&v->image, img, sizeof(*img));
	v->open_ret = ret;
	v->open_done = true;
	v->stale = true;
	return true;
}

void vbd_opens_done(struct daemon *d)
{
	opener_take_done(d->opener, vbd_open_ended, d);
	if (!d->stopping)
		vbd_reconcile_stale(d);
}

bool vbd_awaiting_remote(const struct daemon *d)
{
	for (const struct vbd *v = d->vbds; v; v = v->next)
		if (v->image_phase == VBD_IMAGE_AWAITING_REMOTE ||
		    v->resume_ticks)
			return true;
	return false;
}

/*
 * A migration's receiving end waits for the sending host to release the
 * image, which it does within seconds of the guest running here. Past
 * that something is wrong there (its domain not destroyed, its daemon
 * stuck): say so, and try less often, since each try of an RBD image is
 * a connection to the cluster.
 */
#define HANDOVER_FAST_TRIES 50 /* 10 s at VBD_HANDOVER_RETRY_MS */
#define HANDOVER_SLOW_EVERY 10 /* then every 2 s */

void vbd_retry_handovers(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		if (v->resume_ticks) {
			v->resume_ticks++;
			v->stale = true;
			continue;
		}
		if (v->image_phase != VBD_IMAGE_AWAITING_REMOTE)
			continue;
		if (++v->remote_ticks == HANDOVER_FAST_TRIES)
			vbd_log(v, LOG_WARNING, 0,
				"%s is still locked by the disk on the "
				"other host after %u s; the guest waits until "
				"that host releases it (its domain destroyed, "
				"as xl migrate does once the guest runs here)",
				v->image_path,
				HANDOVER_FAST_TRIES * VBD_HANDOVER_RETRY_MS /
					1000);
		if (v->remote_ticks <= HANDOVER_FAST_TRIES ||
		    v->remote_ticks % HANDOVER_SLOW_EVERY == 0)
			v->stale = true;
	}
	vbd_reconcile_stale(d);
}

/* What vbd_check_images() finds in one device's image file. */
static void vbd_check_image(struct vbd *v)
{
	uint64_t disk_bytes = v->image.sectors * BLKIF_SECTOR_SIZE;
	struct stat st;
	bool deleted, shrunk;

	if (!vbd_image_open(v) || !(v->image.caps & BLK_CAP_LOCAL) ||
	    v->image.blockdev || fstat(v->image.fd, &st) < 0)
		return;
	deleted = st.st_nlink == 0;
	shrunk = (uint64_t)st.st_size < disk_bytes;
	if (deleted && !v->warned_deleted)
		vbd_log(v, LOG_WARNING, 0,
			"image %s was deleted while in use; the guest "
			"keeps it until the disk is detached, then its data "
			"is gone",
			v->image_path);
	if (shrunk && !v->warned_shrunk)
		vbd_log(v, LOG_WARNING, 0,
			"image %s shrank to %lld bytes under the running "
			"guest, which sees %" PRIu64 "; its reads past the "
			"end fail and its writes there grow the file again "
			"(restore the size, or detach the disk first)",
			v->image_path, (long long)st.st_size, disk_bytes);
	v->warned_deleted = deleted;
	v->warned_shrunk = shrunk;
}

void vbd_check_images(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		vbd_check_image(v);
}

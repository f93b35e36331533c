// SPDX-License-Identifier: MIT
/*
 * The device state machine (docs/architecture.md, xenstore contract): a
 * watch event marks its device stale, and after each batch of events every
 * stale device re-reads what xenstore says about it and moves to where it
 * should be. Doing the same work twice is harmless, so coalesced or
 * repeated watch events need no special care.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blkbackd/host-errors.h"
#include "blkbackd/limits.h"
#include "blkbackd/log.h"
#include "blkbackd/stats-log.h"
#include "blkbackd/vbd.h"
#include "blkbackd/worker.h"
#include "libblk/backend-nbd.h" /* blk_nbd_is_uri() */
#include "libblk/image.h"
#include "libblk/poll.h" /* blk_now_ns() */
#include "libblk/xenbus.h"

#define VBD_PATH_MAX 192

/* One of a device's rings, as the main thread knows it. */
struct vbd_queue {
	struct worker *w; /* serving it */
	struct blk_backend *backend; /* where its I/O goes; ours, lent to w */
	/* As it was connected, to connect it again on another worker. */
	struct blk_conn_params params;
	struct worker *moving_to; /* vbd_move_ring() under way */
	uint64_t move_start_ns; /* when it began, while moving_to is set */
};

struct vbd {
	struct vbd *next;
	struct daemon *d;
	uint32_t fe_domid;
	uint32_t devid;
	uint64_t cookie; /* names this device to the workers */
	char name[48]; /* "vbd 5/51712", for messages */
	char vdev[32]; /* "xvda", as xl names it; "" until connected */
	/* The disk in an NBD backend's messages; set while it has none. */
	struct log_disk nbd_who;
	char nbd_who_name[96];
	char be[VBD_PATH_MAX];
	char fe[VBD_PATH_MAX]; /* empty until read */
	char fe_state[VBD_PATH_MAX + 8];

	struct blk_image image;
	bool image_open;
	bool cdrom;
	bool removable;
	bool discard_enable; /* the toolstack's discard-enable */
	struct blk_backend_features features; /* as published at InitWait */
	uint32_t sector_size; /* as published at Connected */
	/* Its rings; nr_queues is 0 (and queue NULL) when it has none. */
	struct vbd_queue *queue;
	unsigned int nr_queues;
	/* The counters of rings that moved, up to their move; or NULL. */
	struct blk_stats *moved;
	/* Its rings' moves since it was attached, and their pauses in all. */
	struct vbd_moves moves;
	/*
	 * Queues whose rings are still closing (vbd_disconnect_as()): the
	 * device waits for them, and their counters are summed in @final.
	 */
	unsigned int closing;
	struct blk_stats *final;
	bool forget; /* freed once its rings are closed */
	struct blk_frontend_summary link; /* as negotiated at Connected */
	char image_path[VBD_PATH_MAX];
	bool domain_gone;
	bool failed; /* a fatal error was reported */
	bool warned_deleted; /* vbd_check_images() said so already */
	bool warned_shrunk;
	bool stale; /* a watch event came: look again after this batch */
	/*
	 * Offered while another device of the same VM holds the image (a
	 * migration's two ends in one host): the image is taken when that
	 * device lets it go (vbd_handover).
	 */
	bool awaiting_handover;
	/*
	 * Of those, offered while the same VM's disk on another host holds
	 * the image's lock (an RBD image's, or a shared file's: a migration
	 * between hosts): the image is taken once the lock is free, tried
	 * every VBD_HANDOVER_RETRY_MS at first (remote_ticks counts them).
	 */
	bool awaiting_remote;
	unsigned int remote_ticks;
	unsigned int root; /* its directory: d->be_root[root] */
	/* Its I/O limits, shared by its queues' rings; see limits.h. */
	struct blk_throttle throttle;
	struct blk_throttle_limits limits; /* in force */
	bool limits_stale; /* its backend changed: read them again */
	bool limits_bad; /* a malformed limit key was reported */
};

/* ---- lookup ---- */

/* Any backend directory, for a device named by domain and number alone. */
#define ANY_ROOT UINT_MAX

static struct vbd *vbd_find(struct daemon *d, unsigned int root, uint32_t domid,
			    uint32_t devid)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->fe_domid == domid && v->devid == devid &&
		    (root == ANY_ROOT || v->root == root))
			return v;
	return NULL;
}

/* "vbd" or "vbd3": the last component of the device's directory's root. */
static const char *root_kind(const struct daemon *d, unsigned int root)
{
	return strrchr(d->be_root[root], '/') + 1;
}

/* A queue's cookie is its device's with the queue number in the low byte. */
#define QUEUE_BITS 8

static uint64_t queue_cookie(const struct vbd *v, unsigned int q)
{
	return v->cookie | q;
}

static struct vbd *vbd_by_cookie(struct daemon *d, uint64_t cookie)
{
	cookie &= ~((1ull << QUEUE_BITS) - 1);
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->cookie == cookie)
			return v;
	return NULL;
}

/* The disk @v as the journal's fields name it. */
static struct log_disk vbd_who(const struct vbd *v)
{
	return (struct log_disk){ .domid = v->fe_domid,
				  .devid = v->devid,
				  .vdev = v->vdev[0] ? v->vdev : NULL };
}

/*
 * A message about @v, after its name, with the journal's DOMID=, VBD= and
 * VDEV= fields (log_disk_msg()), so that `journalctl DOMID=N` finds every
 * message about a guest's disks; @err is the errno that caused it, or 0.
 * Main thread (it reads v->vdev).
 */
static void vbd_log(const struct vbd *v, int priority, int err, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));

static void vbd_log(const struct vbd *v, int priority, int err, const char *fmt,
		    ...)
{
	const struct log_disk who = vbd_who(v);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_disk_msg(priority, &who, err, "%s: %s", v->name, msg);
}

static struct vbd *vbd_new(struct daemon *d, unsigned int root, uint32_t domid,
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
		 root_kind(d, root), domid, devid);
	snprintf(v->be, sizeof(v->be), "%s/%" PRIu32 "/%" PRIu32,
		 d->be_root[root], domid, devid);
	v->next = d->vbds;
	d->vbds = v;
	d->nr_vbds++;
	return v;
}

/* ---- rings ---- */

/* The counters of every queue of @v, summed. */
static void vbd_stats(struct vbd *v, struct blk_stats *sum)
{
	*sum = (struct blk_stats){ 0 };
	if (v->moved)
		blk_stats_add(sum, v->moved);
	for (unsigned int q = 0; q < v->nr_queues; q++) {
		struct blk_stats one;

		if (worker_stats(v->queue[q].w, queue_cookie(v, q), &one) == 0)
			blk_stats_add(sum, &one);
	}
}

/*
 * One queue's ring is closed: its backend goes. After the last one the
 * device has no ring, and true is returned.
 */
static bool vbd_queue_closed(struct vbd *v, unsigned int q,
			     const struct blk_stats *final)
{
	blk_backend_destroy(v->queue[q].backend);
	v->queue[q].backend = NULL;
	if (v->final && final)
		blk_stats_add(v->final, final);
	if (--v->closing)
		return false;
	free(v->queue);
	v->queue = NULL;
	v->nr_queues = 0;
	free(v->moved);
	v->moved = NULL;
	vbd_log(v, LOG_INFO, 0, "disconnected");
	if (v->final) {
		const struct log_disk who = vbd_who(v);

		stats_log(&who, v->name, v->final);
	}
	free(v->final);
	v->final = NULL;
	return true;
}

/*
 * Ask every queue's worker to answer its started I/O, then unmap and
 * unbind its ring, and return at once: a guest with deep queues on slow
 * storage must not hold up the others' attach and detach. Until
 * vbd_rings_closed() has seen the last ring closed, v->closing says so
 * and the device waits.
 */
static void vbd_disconnect_as(struct vbd *v, enum blk_disconnect_mode mode)
{
	unsigned int n = v->nr_queues;

	if (!n || v->closing)
		return;
	/* Its counters are logged once all are in; without memory, not. */
	v->final = calloc(1, sizeof(*v->final));
	if (v->final && v->moved)
		blk_stats_add(v->final, v->moved);
	v->closing = n;
	for (unsigned int q = 0; q < n; q++) {
		struct vbd_queue *vq = &v->queue[q];

		/* A ring on its way to another worker is closing already. */
		if (vq->moving_to) {
			vq->moving_to = NULL;
			v->d->moving_rings--;
			continue;
		}
		if (worker_disconnect(vq->w, queue_cookie(v, q), mode) < 0)
			vbd_queue_closed(v, q, NULL);
	}
}

/* The guest is going away: what was not started is answered as failed. */
static void vbd_disconnect(struct vbd *v)
{
	vbd_disconnect_as(v, BLK_DISCONNECT_CLOSE);
}

/*
 * Count and log the host's I/O errors on its rings, with the name xl
 * gives it (the backend's dev node).
 */
static void vbd_count_host_errors(struct vbd *v)
{
	char *dev;

	if (xenbus_read_str(v->d->xs, v->be, "dev", &dev) == 0) {
		snprintf(v->vdev, sizeof(v->vdev), "%s", dev);
		free(dev);
	}
	if (host_errors_add_disk(v->d->host_errors, v->cookie,
				 (1ull << QUEUE_BITS) - 1, v->fe_domid,
				 v->devid, v->vdev) < 0)
		vbd_log(v, LOG_WARNING, 0,
			"out of memory: its host I/O errors go uncounted");
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

/* Called while @v lends no backend, so no worker reads it meanwhile. */
static void vbd_name_for_nbd(struct vbd *v)
{
	v->nbd_who = vbd_who(v);
	if (v->vdev[0])
		snprintf(v->nbd_who_name, sizeof(v->nbd_who_name), "%s (%s)",
			 v->name, v->vdev);
	else
		snprintf(v->nbd_who_name, sizeof(v->nbd_who_name), "%s",
			 v->name);
}

static struct worker *least_loaded_worker(struct daemon *d)
{
	struct worker *best = d->workers[0];

	for (unsigned int i = 1; i < d->nr_workers; i++)
		if (worker_nr_rings(d->workers[i]) < worker_nr_rings(best))
			best = d->workers[i];
	return best;
}

/* ---- a migration's two ends ---- */

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
		if (w != v && w->image_open && !w->image.readonly &&
		    strcmp(w->image_path, path) == 0 && vbd_same_vm(v, w))
			return w;
	return NULL;
}

static void vbd_choose_features(struct vbd *v);

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

	if (!v->image.holder[0])
		return false;
	vm = vbd_vm_of(v->d, v->fe_domid);
	same = vm && strcmp(vm, v->image.holder) == 0;
	free(vm);
	if (!same)
		return false;
	if (!v->awaiting_remote) {
		vbd_choose_features(v);
		vbd_log(v, LOG_INFO, 0,
			"%s is locked by a disk of the same VM on another "
			"host (a migration): offering the disk, taking the "
			"image when its lock is free",
			path);
	}
	v->awaiting_handover = true;
	v->awaiting_remote = true;
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
	if (!v->awaiting_handover)
		vbd_log(v, LOG_INFO, 0,
			"%s is held by %s of the same VM (a migration): "
			"offering the disk, taking the image when %s "
			"releases it",
			path, holder->name, holder->name);
	v->awaiting_handover = true;
	return true;
}

/*
 * An NBD export has no lock that a migration's two ends meet at (an image
 * file and an RBD image have theirs, and the second writer gets -EBUSY):
 * a device of the same VM that has @path open writable stands for it, so
 * that the receiving device waits for its release as for a file's.
 * Without that it would connect beside the sending device, whose requests
 * in flight at the suspend could still land after the receiver's writes.
 */
static bool vbd_export_held(struct vbd *v, const char *path)
{
	return blk_nbd_is_uri(path) && vbd_handover_holder(v, path);
}

/* @path was closed by a device: whoever waits for it looks again. */
static void vbd_image_released(struct daemon *d, const char *path)
{
	for (struct vbd *w = d->vbds; w; w = w->next)
		if (w->awaiting_handover && strcmp(w->image_path, path) == 0)
			w->stale = true;
}

/* ---- forgetting a device ---- */

static void vbd_unwatch_frontend(struct vbd *v)
{
	if (v->fe_state[0])
		xs_unwatch(v->d->xs, v->fe_state, VBD_TOKEN_FRONTEND);
	v->fe_state[0] = '\0';
}

/*
 * Stop serving @v and free it, once its rings are closed. Its xenstore
 * nodes stay: libxl owns them.
 */
static void vbd_forget(struct vbd *v)
{
	struct daemon *d = v->d;

	vbd_disconnect(v);
	if (v->closing) {
		v->forget = true;
		return;
	}
	vbd_unwatch_frontend(v);
	host_errors_remove_disk(d->host_errors, v->cookie);
	if (v->image_open) {
		blk_image_close(&v->image);
		vbd_log(v, LOG_INFO, 0, "released");
		vbd_image_released(d, v->image_path);
	}
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

/* ---- failure ---- */

/*
 * The text of the backend's error node: what xl prints, so it names the
 * disk as the user wrote it ("xvda of domain 5") as well as the device.
 */
static void vbd_error_text(struct vbd *v, const char *msg, char *out,
			   size_t len)
{
	char *dev;

	if (xenbus_read_str(v->d->xs, v->be, "dev", &dev) == 0) {
		snprintf(out, len,
			 "blkbackd: %s of domain %" PRIu32 " (%s): %s", dev,
			 v->fe_domid, v->name, msg);
		free(dev);
	} else {
		snprintf(out, len, "blkbackd: %s: %s", v->name, msg);
	}
}

/*
 * Record a fatal error for this device: log it with what to do (under
 * systemd with the disk's journal fields, so that `journalctl DOMID=N`
 * finds why a guest's disk was refused), write it to the backend's error
 * node and switch to @state, in one transaction.
 */
static void vbd_report(struct vbd *v, enum xenbus_state state, const char *msg)
{
	char text[768];
	int ret;

	vbd_log(v, LOG_ERR, 0, "%s", msg);
	vbd_disconnect(v);
	v->failed = true;
	vbd_error_text(v, msg, text, sizeof(text));
	ret = xenbus_switch_state(v->d->xs, v->be, state, text);
	if (ret < 0 && ret != -ENOENT)
		vbd_log(v, LOG_ERR, -ret, "cannot publish the error: %s",
			strerror(-ret));
}

/*
 * A fatal error for this device: reported as above, and the device goes
 * to Closing, as Linux's backends do.
 */
static void vbd_fail(struct vbd *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void vbd_fail(struct vbd *v, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vbd_report(v, XenbusStateClosing, msg);
}

/* ---- the hotplug script ---- */

/*
 * libxl runs the script named by the backend's `script` node once the
 * backend is in InitWait, and in the domain that waits for the device only
 * when the backend is in the toolstack's domain (0); for a driver domain,
 * `xl devd` runs it there and dom0's xl waits for InitWait alone.
 */
static bool vbd_script_reports_to_xl(struct vbd *v)
{
	return v->d->domid == 0 && blk_xenbus_has_script(v->d->xs, v->be);
}

/*
 * Where the hotplug script stands. libxl and Xen's scripts count on a
 * vbd not connecting before its script wrote `hotplug-status=connected`
 * (kernel blkback cannot: it waits for the script's physical-device), so
 * a device with a script waits for it. The backend watch covers the node,
 * so the write itself wakes the device up.
 */
static enum blk_hotplug_state vbd_hotplug_state(struct vbd *v)
{
	return blk_xenbus_hotplug_state(v->d->xs, v->be);
}

/* ---- the backend's own configuration ---- */

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
 * How long a daemon resuming a connected device waits for I/O its dead
 * predecessor left in flight (see blk_image_open()).
 */
#define RESUME_LOCK_WAIT_MS 5000

/* An image of no whole sector, which no guest could use. */
static bool vbd_image_empty(const struct vbd *v)
{
	return v->image.sectors == 0 && !v->cdrom;
}

/*
 * Open the image the toolstack named. On failure, @why (of @why_len bytes)
 * says what is wrong and what to do about it.
 */
static int vbd_open_image(struct vbd *v, unsigned int lock_wait_ms, char *why,
			  size_t why_len)
{
	struct blk_vbd_config cfg;
	const char *path, *bad;
	bool readonly;
	int ret;

	ret = blk_xenbus_read_vbd_config(v->d->xs, v->be, &cfg, &bad);
	if (ret < 0 && strcmp(bad, "mode") == 0) {
		snprintf(why, why_len, "mode must be 'r' or 'w'");
		return ret;
	}
	if (ret < 0) {
		snprintf(why, why_len,
			 "no params node: the toolstack must "
			 "write the image path there");
		return ret;
	}
	if (cfg.vhd) {
		snprintf(why, why_len,
			 "%s is a VHD image; blkbackd serves raw images: "
			 "convert it with 'qemu-img convert -O raw', or serve "
			 "it from qemu-storage-daemon as an NBD export "
			 "(docs/nbd.md)",
			 cfg.path);
		blk_vbd_config_free(&cfg);
		return -EINVAL;
	}
	path = cfg.path;
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

		ret = blk_image_open(&v->image, path, readonly,
				     v->d->opts.cache, lock_wait_ms, vm);
		free(vm);
	}
	if (ret < 0 && v->image.detail[0]) {
		snprintf(why, why_len, "cannot open image %s: %s", path,
			 v->image.detail);
	} else if (ret < 0) {
		snprintf(why, why_len, "cannot open image %s: %s; %s", path,
			 strerror(-ret), open_advice(ret));
	} else if (vbd_image_empty(v)) {
		blk_image_close(&v->image);
		snprintf(why, why_len,
			 "image %s is empty (smaller than one 512-byte "
			 "sector); give it a size (truncate -s SIZE) or fix "
			 "the target= of the guest's disk line",
			 path);
		ret = -EINVAL;
	} else {
		v->image_open = true;
		/*
		 * Chosen here, not at InitWait, so that a daemon resuming a
		 * connected device knows what its predecessor offered.
		 */
		vbd_choose_features(v);
		blk_image_set_nbd_reconnect(
			&v->image, v->d->opts.nbd_reconnect_timeout * 1000,
			vbd_nbd_said, v);
		/* An NBD export or an RBD image has no file (fd < 0). */
		if (v->d->opts.cache == BLK_CACHE_NONE && !v->image.direct &&
		    v->image.fd >= 0)
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
	}
	blk_vbd_config_free(&cfg);
	return ret;
}

/*
 * A daemon resuming a device its predecessor offered or connected: the
 * image is opened again, or the device fails.
 */
/*
 * The frontend of a device offered during a hand-over wants to connect:
 * take the image if its holder let it go. -EAGAIN while it still holds it
 * (its release makes the device stale again); the device fails if someone
 * else has it.
 */
static int vbd_take_over(struct vbd *v)
{
	char why[512];
	int ret = vbd_open_image(v, 0, why, sizeof(why));

	if (ret == -EBUSY && vbd_await_handover(v, v->image_path)) {
		vbd_log(v, LOG_DEBUG, 0, "the guest waits for %s",
			v->image_path);
		return -EAGAIN;
	}
	v->awaiting_handover = false;
	v->awaiting_remote = false;
	v->remote_ticks = 0;
	if (ret < 0) {
		vbd_fail(v, "%s", why);
		return ret;
	}
	vbd_log(v, LOG_INFO, 0, "took %s over", v->image_path);
	return 0;
}

static int vbd_reopen_image(struct vbd *v)
{
	char why[512];
	int ret;

	if (v->image_open)
		return 0;
	if (v->awaiting_handover)
		return vbd_take_over(v);
	ret = vbd_open_image(v, RESUME_LOCK_WAIT_MS, why, sizeof(why));
	if (ret < 0)
		vbd_fail(v, "%s", why);
	return ret;
}

/*
 * The disk cannot be served, found before InitWait. libxl waits for
 * InitWait only (a backend that closes instead just times it out after
 * 10 s, "unable to add device"), then runs the hotplug script and prints
 * the script's hotplug-error. So when xl is about to run the script, the
 * device goes to InitWait with the reason in its error node, where the
 * script finds it and hands it to xl at once; the device itself closes
 * once the script has reported. Without such a script it goes to Closing.
 */
static void vbd_refuse(struct vbd *v, const char *why)
{
	vbd_report(v,
		   vbd_script_reports_to_xl(v) ? XenbusStateInitWait
					       : XenbusStateClosing,
		   why);
}

/*
 * An HVM guest boots from QEMU's emulated disk until its PV driver takes
 * over. libxl hands a disk with a hotplug script to QEMU only through
 * physical-device-path (libxl__device_disk_find_local_path() in libxl
 * 4.17), read after the script ran; without it the guest has no emulated
 * disk to boot from. So the image blkbackd opened is written there before
 * InitWait. libxl does not read it for a driver domain's disks. An NBD or
 * RBD target is no local file: QEMU gets nothing, and the guest has its
 * PV disk only, as before.
 */
static void vbd_publish_image_path(struct vbd *v)
{
	int ret;

	if (v->image.fd < 0)
		return;
	ret = blk_xenbus_write_image_path(v->d->xs, v->be, v->image_path);
	if (ret < 0)
		vbd_log(v, LOG_WARNING, -ret,
			"cannot write %s/physical-device-path: %s; an HVM "
			"guest will have no emulated disk to boot from",
			v->be, strerror(-ret));
}

/* InitWait: the image is open and the features are published. */
static void vbd_init_wait(struct vbd *v)
{
	char why[512];
	int ret;

	if (!v->image_open && !v->awaiting_handover) {
		ret = vbd_open_image(v, 0, why, sizeof(why));
		if (ret < 0 &&
		    !(ret == -EBUSY && vbd_await_handover(v, v->image_path))) {
			vbd_refuse(v, why);
			return;
		}
	}
	/* A device offered again has no error left from its last failure. */
	blk_xenbus_clear_error(v->d->xs, v->be);
	vbd_publish_image_path(v);
	ret = blk_xenbus_init_wait(v->d->xs, v->be, &v->features);
	if (ret < 0 && ret != -ENOENT)
		vbd_log(v, LOG_ERR, -ret, "cannot publish InitWait: %s",
			strerror(-ret));
}

/* ---- the frontend ---- */

/*
 * The frontend path is written by the toolstack into the backend's
 * directory, which the guest cannot write; it is still checked for shape.
 */
static int vbd_read_frontend_path(struct vbd *v)
{
	int ret;

	if (v->fe[0])
		return 0;
	ret = blk_xenbus_read_frontend_path(v->d->xs, v->be, v->fe,
					    sizeof(v->fe));
	if (ret < 0)
		return ret;
	snprintf(v->fe_state, sizeof(v->fe_state), "%s/state", v->fe);
	if (!xs_watch(v->d->xs, v->fe_state, VBD_TOKEN_FRONTEND)) {
		v->fe_state[0] = '\0';
		return -errno;
	}
	return 0;
}

static enum xenbus_state vbd_frontend_state(struct vbd *v)
{
	if (v->domain_gone || !v->fe[0])
		return XenbusStateClosed;
	return xenbus_read_state(v->d->xs, v->fe);
}

static unsigned int vbd_info(const struct vbd *v)
{
	return (v->image.readonly ? VDISK_READONLY : 0) |
	       (v->cdrom ? VDISK_CDROM : 0) |
	       (v->removable ? VDISK_REMOVABLE : 0);
}

static const char *abi_name(enum blkif_abi abi)
{
	return abi == BLKIF_ABI_X86_64 ? XEN_IO_PROTO_ABI_X86_64
				       : XEN_IO_PROTO_ABI_X86_32;
}

/*
 * The sector size the guest sees: the image's own when the frontend can
 * take large sectors, else 512 (blkif.h).
 */
static uint32_t vbd_sector_size(struct vbd *v, const struct blk_frontend *fe)
{
	if (fe->large_sectors && v->image.logical_block > BLKIF_SECTOR_SIZE)
		return v->image.logical_block;
	if (v->image.logical_block > BLKIF_SECTOR_SIZE && v->image.direct)
		vbd_log(v, LOG_WARNING, 0,
			"the image has %u-byte sectors but the frontend "
			"does not take large sectors; requests not aligned "
			"to them will fail",
			v->image.logical_block);
	return BLKIF_SECTOR_SIZE;
}

static uint64_t vbd_capacity(const struct vbd *v)
{
	return v->image.sectors * BLKIF_SECTOR_SIZE / v->sector_size;
}

/* Connecting failed: without a ring connected, the device has none. */
static int vbd_queues_failed(struct vbd *v, int err)
{
	if (!v->nr_queues) {
		free(v->queue);
		v->queue = NULL;
	}
	return err;
}

/*
 * Connect the frontend's rings, each on the worker with the fewest. When
 * one fails, those connected before it stay, for vbd_disconnect() to close.
 */
static int vbd_connect_queues(struct vbd *v, const struct blk_frontend *fe)
{
	struct blk_conn_params p = {
		.domid = v->fe_domid,
		.ring_order = fe->ring_order,
		.abi = fe->abi,
		.limits = {
			.sectors = vbd_capacity(v),
			.sector_size = v->sector_size,
			.max_indirect_segments =
				v->features.max_indirect_segments,
			.readonly = v->image.readonly,
			.discard = v->features.discard,
			.barrier = v->features.barrier,
		},
		.persistent = fe->persistent,
		.throttle = &v->throttle,
	};

	v->queue = calloc(fe->nr_queues, sizeof(*v->queue));
	if (!v->queue) {
		vbd_fail(v, "out of memory for %u rings", fe->nr_queues);
		return -ENOMEM;
	}
	for (unsigned int q = 0; q < fe->nr_queues; q++) {
		const struct blk_frontend_queue *fq = &fe->queue[q];
		struct worker *w = least_loaded_worker(v->d);
		int ret;

		memcpy(p.ring_refs, fq->ring_refs, sizeof(p.ring_refs));
		p.remote_port = fq->event_channel;
		p.owner = (void *)(uintptr_t)queue_cookie(v, q);
		ret = blk_image_new_backend(&v->image, &p.backend);
		if (ret < 0) {
			vbd_fail(v, "queue %u: cannot reach image %s: %s%s%s",
				 q, v->image_path, strerror(-ret),
				 v->image.detail[0] ? ": " : "",
				 v->image.detail);
			return vbd_queues_failed(v, ret);
		}
		ret = worker_connect(w, &p);
		if (ret < 0) {
			blk_backend_destroy(p.backend);
			vbd_fail(v,
				 "queue %u: cannot map ring-ref %" PRIu32
				 " (%u pages) or bind event-channel %" PRIu32
				 ": %s",
				 q, fq->ring_refs[0], 1u << fe->ring_order,
				 fq->event_channel, strerror(-ret));
			return vbd_queues_failed(v, ret);
		}
		v->queue[q] = (struct vbd_queue){ .w = w,
						  .backend = p.backend,
						  .params = p };
		v->nr_queues = q + 1;
		vbd_log(v, LOG_DEBUG, 0, "queue %u on worker %u", q,
			worker_index(w));
	}
	return 0;
}

static void vbd_connect(struct vbd *v)
{
	struct blk_frontend fe;
	struct blk_disk_info disk;
	char what[VBD_PATH_MAX + 32];
	int ret;

	if (v->nr_queues || !v->image_open)
		return;
	ret = blk_xenbus_read_frontend(v->d->xs, v->fe, &v->features, &fe, what,
				       sizeof(what));
	if (ret < 0) {
		vbd_fail(v, "frontend node %s is %s", what,
			 ret == -ENOENT ? "missing"
					: "invalid or beyond what "
					  "the backend offered");
		return;
	}
	/* From here on QEMU must stay away (see blk_image_open()). */
	if (blk_image_lock_like_qemu(&v->image) < 0) {
		vbd_fail(v,
			 "QEMU still has image %s open for writing: the "
			 "emulated disk of an HVM guest that did not unplug "
			 "it, or another QEMU; not connecting, so that they "
			 "do not both write it. Let the guest unplug its "
			 "emulated disks (no xen_emul_unplug=never), or stop "
			 "the other QEMU",
			 v->image_path);
		return;
	}
	v->sector_size = vbd_sector_size(v, &fe);
	vbd_count_host_errors(v);
	vbd_name_for_nbd(v);
	if (vbd_connect_queues(v, &fe) < 0)
		return;
	v->link = (struct blk_frontend_summary){ .abi = abi_name(fe.abi),
						 .ring_order = fe.ring_order,
						 .persistent = fe.persistent };
	disk = (struct blk_disk_info){
		.sectors = vbd_capacity(v),
		.info = vbd_info(v),
		.sector_size = v->sector_size,
		.physical_sector_size = v->image.physical_block > v->sector_size
						? v->image.physical_block
						: v->sector_size,
	};
	ret = blk_xenbus_connected(v->d->xs, v->be, &disk);
	if (ret < 0) {
		vbd_log(v, LOG_ERR, -ret, "cannot publish Connected: %s",
			strerror(-ret));
		vbd_disconnect(v);
		return;
	}
	vbd_log(v, LOG_INFO, 0,
		"connected (%s, %u queue%s of %u-page rings, "
		"%s grants, %u-byte sectors)",
		abi_name(fe.abi), fe.nr_queues, fe.nr_queues == 1 ? "" : "s",
		1u << fe.ring_order, fe.persistent ? "persistent" : "copied",
		v->sector_size);
}

/* ---- the state machine ---- */

static void vbd_switch(struct vbd *v, enum xenbus_state be_state,
		       enum xenbus_state want)
{
	if (be_state != want)
		xenbus_switch_state(v->d->xs, v->be, want, NULL);
}

static bool vbd_online(struct vbd *v)
{
	return blk_xenbus_online(v->d->xs, v->be);
}

/*
 * The frontend closed (or vanished, or its domain died): answer in-flight
 * I/O, release the ring and report Closed; a device taken offline is
 * forgotten. Returns true when @v was freed.
 */
static bool vbd_closed(struct vbd *v, enum xenbus_state be_state)
{
	/* Closed tells the guest its pages are free: not before. */
	vbd_disconnect(v);
	if (v->closing)
		return false;
	vbd_switch(v, be_state, XenbusStateClosed);
	if (vbd_online(v) && !v->domain_gone)
		return false;
	vbd_forget(v);
	return true;
}

/* The frontend is ready: connect once the hotplug script has reported. */
static void vbd_connect_after_hotplug(struct vbd *v)
{
	char *why;

	switch (vbd_hotplug_state(v)) {
	case BLK_HOTPLUG_PENDING:
		vbd_log(v, LOG_DEBUG, 0,
			"frontend ready, waiting for the hotplug "
			"script's hotplug-status");
		break;
	case BLK_HOTPLUG_FAILED:
		if (xenbus_read_str(v->d->xs, v->be, "hotplug-error", &why))
			why = NULL;
		vbd_fail(v, "the hotplug script failed (%s); not connecting",
			 why ? why : "it left no hotplug-error");
		free(why);
		break;
	case BLK_HOTPLUG_CONNECTED:
		if (vbd_reopen_image(v) == 0)
			vbd_connect(v);
		break;
	}
}

/*
 * A failed device waits for its frontend to close, then goes Closed as
 * blkback does; a frontend that starts over from there (Initialising,
 * after kexec, kdump or a driver reload) gets InitWait and a fresh try.
 * Until then the only news is the hotplug script reporting the error the
 * device was refused with: the device then closes, so that the frontend
 * stops waiting for it too.
 */
static void vbd_failed_changed(struct vbd *v, enum xenbus_state be_state,
			       enum xenbus_state fe_state)
{
	if (fe_state == XenbusStateClosed) {
		v->failed = false;
		vbd_closed(v, be_state);
		return;
	}
	if (be_state == XenbusStateInitWait &&
	    vbd_hotplug_state(v) == BLK_HOTPLUG_FAILED)
		vbd_switch(v, be_state, XenbusStateClosing);
}

static void vbd_reconcile(struct vbd *v)
{
	enum xenbus_state be_state;
	enum xenbus_state fe_state;

	/* Looked at again when its last ring has closed. */
	if (v->closing)
		return;
	be_state = xenbus_read_state(v->d->xs, v->be);
	if (be_state == XenbusStateUnknown) {
		/* The toolstack removed the device. */
		vbd_forget(v);
		return;
	}
	/*
	 * Taken offline and closed: the toolstack is removing it (its hotplug
	 * script's remove can make it look new again). Never offer it again,
	 * whatever state the frontend was left in.
	 */
	if (be_state == XenbusStateClosed && !vbd_online(v)) {
		vbd_forget(v);
		return;
	}
	if (vbd_read_frontend_path(v) < 0) {
		/*
		 * The toolstack may have removed the device between the two
		 * reads (libxl deletes both trees at once when it unplugs):
		 * that is a device going away, not a malformed one.
		 */
		if (xenbus_read_state(v->d->xs, v->be) == XenbusStateUnknown)
			vbd_forget(v);
		else
			vbd_fail(v, "the backend's frontend node is missing "
				    "or malformed");
		return;
	}
	fe_state = vbd_frontend_state(v);

	/* The toolstack unplugs: Closing, online=0 (docs/architecture.md). */
	if (be_state == XenbusStateClosing && !vbd_online(v) &&
	    fe_state != XenbusStateInitialised &&
	    fe_state != XenbusStateConnected) {
		vbd_closed(v, be_state);
		return;
	}
	if (v->failed) {
		vbd_failed_changed(v, be_state, fe_state);
		return;
	}

	switch (fe_state) {
	case XenbusStateInitialising:
	case XenbusStateInitWait:
		/* A new frontend, or one that restarted: offer the disk. */
		vbd_disconnect(v);
		if (be_state == XenbusStateInitialising ||
		    be_state == XenbusStateClosed)
			vbd_init_wait(v);
		break;
	case XenbusStateInitialised:
	case XenbusStateConnected:
		if (be_state == XenbusStateInitialising)
			vbd_init_wait(v);
		else if (be_state == XenbusStateInitWait)
			vbd_connect_after_hotplug(v);
		else if (be_state == XenbusStateConnected &&
			 vbd_reopen_image(v) == 0)
			/* Connected by an earlier run: resume it. */
			vbd_connect(v);
		break;
	case XenbusStateClosing:
		vbd_disconnect(v);
		vbd_switch(v, be_state, XenbusStateClosing);
		break;
	case XenbusStateUnknown:
		/* No frontend yet: still offer the disk. */
		if (be_state == XenbusStateInitialising) {
			vbd_init_wait(v);
			break;
		}
		vbd_closed(v, be_state);
		break;
	default:
		vbd_closed(v, be_state);
		break;
	}
}

/* ---- I/O limits ---- */

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
static void vbd_refresh_limits(struct vbd *v)
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

/* ---- watch events ---- */

/* A device directory exists when its state node does. */
static void vbd_device_seen(struct daemon *d, unsigned int root, uint32_t domid,
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
			const struct log_disk who = { .domid = domid,
						      .devid = devid };

			log_disk_msg(LOG_ERR, &who, ENOMEM,
				     "%s %" PRIu32 "/%" PRIu32 ": out of "
							       "memory, "
				     "device ignored",
				     root_kind(d, root), domid, devid);
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
 * Look at the device directories of domain @domid under @root, and forget
 * the devices of that domain there whose directory is gone.
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
			vbd_forget(v);
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
			vbd_forget(v);
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

void vbd_reconcile_stale(struct daemon *d)
{
	struct vbd *v, *next;
	bool again = true;

	/* A device looked at can make another stale (an image released). */
	while (again) {
		again = false;
		for (v = d->vbds; v; v = next) {
			next = v->next;
			if (!v->stale)
				continue;
			v->stale = false;
			again = true;
			if (v->limits_stale) {
				v->limits_stale = false;
				vbd_refresh_limits(v);
			}
			vbd_reconcile(v);
		}
	}
}

bool vbd_awaiting_remote(const struct daemon *d)
{
	for (const struct vbd *v = d->vbds; v; v = v->next)
		if (v->awaiting_remote)
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
		if (!v->awaiting_remote)
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

void vbd_domains_released(struct daemon *d)
{
	struct vbd *v, *next;

	for (v = d->vbds; v; v = next) {
		next = v->next;
		if (v->domain_gone || !xenbus_domain_gone(d->xs, v->fe_domid))
			continue;
		vbd_log(v, LOG_INFO, 0, "domain %" PRIu32 " is gone",
			v->fe_domid);
		v->domain_gone = true;
		vbd_reconcile(v);
	}
}

void vbd_ring_broken(struct daemon *d, uint64_t cookie)
{
	struct vbd *v = vbd_by_cookie(d, cookie);

	/* A ring closing or closed already is no news. */
	if (v && v->nr_queues && !v->closing)
		vbd_fail(v, "the guest broke the ring protocol (request "
			    "indexes out of range); ring disconnected");
}

/* Re-read one image's size; tell its rings and its frontend if it changed. */
static void vbd_resize(struct vbd *v)
{
	uint64_t old = v->image.sectors;
	int ret;

	if (!v->image_open)
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

/* ---- moving rings between workers (balance.c decides which) ---- */

int vbd_move_ring(struct daemon *d, uint64_t cookie, struct worker *to)
{
	struct vbd *v = vbd_by_cookie(d, cookie);
	unsigned int q = cookie & ((1ull << QUEUE_BITS) - 1);
	struct vbd_queue *vq;
	int ret;

	/*
	 * Not while the device closes; not an NBD disk's ring, whose backend
	 * is a connection to its server that a move would make anew.
	 */
	if (!v || q >= v->nr_queues || v->closing || v->image.nbd_uri)
		return -EBUSY;
	vq = &v->queue[q];
	if (vq->moving_to || vq->w == to)
		return -EBUSY;
	/*
	 * As for a restart, what it has not started stays on the ring; but
	 * the ring and its persistent grants stay mapped for the new worker.
	 */
	ret = worker_disconnect(vq->w, cookie, BLK_DISCONNECT_MOVE);
	if (ret < 0)
		return ret;
	vq->moving_to = to;
	vq->move_start_ns = blk_now_ns();
	d->moving_rings++;
	vbd_log(v, LOG_DEBUG, 0, "queue %u moves from worker %u to worker %u",
		q, worker_index(vq->w), worker_index(to));
	return 0;
}

bool vbd_rings_moving(const struct daemon *d)
{
	return d->moving_rings > 0;
}

/* Keep a moved ring's counters: the disk's totals must not go back. */
static void vbd_keep_moved_stats(struct vbd *v, const struct blk_stats *final)
{
	if (!v->moved)
		v->moved = calloc(1, sizeof(*v->moved));
	if (v->moved && final)
		blk_stats_add(v->moved, final);
	else
		vbd_log(v, LOG_WARNING, 0,
			"out of memory: its counters restart");
}

/*
 * A moving ring closed on its old worker: connect it on the new one with
 * the mappings it kept (@kept), as a restarted daemon would
 * (blk_engine_connect() resumes from the ring's indexes and sends the
 * event the guest may be waiting for).
 */
static void vbd_ring_moved(struct vbd *v, unsigned int q,
			   const struct blk_stats *final,
			   struct blk_handover *kept)
{
	struct vbd_queue *vq = &v->queue[q];
	struct worker *to = vq->moving_to;
	/* Closing it took from its stop until now. */
	uint64_t closing_ns = blk_now_ns() - vq->move_start_ns, pause_ns;
	/* Of it, the old worker's (struct blk_stats' close). */
	uint64_t drain_ns = final ? final->close.drain_ns : 0;
	uint64_t release_ns = final ? final->close.release_ns : 0;
	/* Read before the connect takes it. */
	bool mapped = kept != NULL;
	int ret;

	vq->moving_to = NULL;
	v->d->moving_rings--;
	vbd_keep_moved_stats(v, final);
	blk_backend_destroy(vq->backend);
	vq->backend = NULL;
	/* Even on failure: vbd_disconnect() then finds it gone from there. */
	vq->w = to;
	ret = blk_image_new_backend(&v->image, &vq->backend);
	if (ret == 0) {
		vq->params.backend = vq->backend;
		vq->params.limits.sectors = vbd_capacity(v);
		/* Taken by the connect, whatever it returns; used once. */
		vq->params.handover = kept;
		ret = worker_connect(to, &vq->params);
		vq->params.handover = NULL;
		if (ret < 0) {
			blk_backend_destroy(vq->backend);
			vq->backend = NULL;
		}
	} else {
		blk_handover_release(kept);
	}
	/* The ring served nothing from its stop until it is connected again. */
	pause_ns = blk_now_ns() - vq->move_start_ns;
	v->moves.count++;
	v->moves.kept += ret == 0 && mapped;
	v->moves.paused_ns += pause_ns;
	v->moves.closing_ns += closing_ns;
	v->moves.draining_ns += drain_ns;
	v->moves.releasing_ns += release_ns;
	vbd_log(v, LOG_DEBUG, 0,
		"queue %u on worker %u after a pause of %.1f ms (%.1f "
		"to close it on the other: %.1f draining, %.1f releasing)",
		q, worker_index(to), (double)pause_ns / 1e6,
		(double)closing_ns / 1e6, (double)drain_ns / 1e6,
		(double)release_ns / 1e6);
	if (ret < 0)
		vbd_fail(v,
			 "queue %u: cannot connect its ring on worker %u "
			 "after moving it: %s",
			 q, worker_index(to), strerror(-ret));
}

/* A ring of a device closed: the device goes on once all have. */
static void vbd_ring_closed(void *arg, uint64_t cookie,
			    const struct blk_stats *final,
			    struct blk_handover *kept)
{
	struct daemon *d = arg;
	struct vbd *v = vbd_by_cookie(d, cookie);
	unsigned int q = cookie & ((1ull << QUEUE_BITS) - 1);
	unsigned int root;
	uint32_t domid, devid;

	if (v && q < v->nr_queues && v->queue[q].moving_to) {
		vbd_ring_moved(v, q, final, kept);
		return;
	}
	/* The move was called off: its device closes. */
	blk_handover_release(kept);
	if (!v || !vbd_queue_closed(v, q, final) || d->stopping)
		return;
	if (!v->forget) {
		v->stale = true;
		return;
	}
	/* The toolstack may have made the device anew meanwhile. */
	root = v->root;
	domid = v->fe_domid;
	devid = v->devid;
	vbd_forget(v);
	vbd_device_seen(d, root, domid, devid);
}

void vbd_rings_closed(struct daemon *d)
{
	for (unsigned int i = 0; i < d->nr_workers; i++)
		worker_take_closed(d->workers[i], vbd_ring_closed, d);
	if (!d->stopping)
		vbd_reconcile_stale(d);
}

static bool vbd_any_closing(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->closing)
			return true;
	return false;
}

/*
 * Shutdown: every ring is closed, and waited for here (the guests stay:
 * a pause, not an error, blkbackd(8)); devices whose detach was still
 * under way finish it first.
 */
static void vbd_close_all_rings(struct daemon *d)
{
	struct pollfd pfd = { .fd = d->closed_fd, .events = POLLIN };
	uint64_t count;

	d->stopping = true;
	for (struct vbd *v = d->vbds; v; v = v->next)
		vbd_disconnect_as(v, BLK_DISCONNECT_STOP);
	/* Leaving earlier would free backends the workers still use. */
	while (vbd_any_closing(d)) {
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			log_err("waiting for the rings to close: %m");
		if (read(d->closed_fd, &count, sizeof(count)) < 0 &&
		    errno != EAGAIN)
			log_err("reading the workers' closed rings: %m");
		vbd_rings_closed(d);
	}
}

void vbd_release_all(struct daemon *d)
{
	vbd_close_all_rings(d);
	while (d->vbds) {
		struct vbd *v = d->vbds;

		vbd_unwatch_frontend(v);
		host_errors_remove_disk(d->host_errors, v->cookie);
		if (v->image_open)
			blk_image_close(&v->image);
		d->vbds = v->next;
		blk_throttle_destroy(&v->throttle);
		free(v);
	}
	d->nr_vbds = 0;
}

/* What vbd_check_images() finds in one device's image file. */
static void vbd_check_image(struct vbd *v)
{
	uint64_t disk_bytes = v->image.sectors * BLKIF_SECTOR_SIZE;
	struct stat st;
	bool deleted, shrunk;

	if (!v->image_open || v->image.fd < 0 || v->image.blockdev ||
	    fstat(v->image.fd, &st) < 0)
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

void vbd_log_stats_all(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		const struct log_disk who = vbd_who(v);
		struct blk_stats sum;

		if (!v->nr_queues)
			continue;
		vbd_stats(v, &sum);
		stats_log(&who, v->name, &sum);
	}
}

void vbd_visit_all(struct daemon *d, vbd_visit_fn fn, void *arg)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		struct vbd_info info = {
			.domid = v->fe_domid,
			.devid = v->devid,
			.name = v->name,
			.vdev = v->vdev,
			.image = v->image_path,
			.connected = v->nr_queues > 0 && !v->closing,
			.failed = v->failed,
			.nr_queues = v->nr_queues,
			.link = v->link,
			/* Its sector size is known once the guest connected. */
			.sectors = v->image_open && v->sector_size
					   ? vbd_capacity(v)
					   : 0,
			.sector_size = v->sector_size,
			.readonly = v->image_open && v->image.readonly,
			.features = v->features,
			.moves = v->moves,
		};

		blk_throttle_read(&v->throttle, blk_now_ns(), &info.throttle);
		vbd_stats(v, &info.stats);
		info.nbd = v->image_open && v->image.nbd_uri;
		if (info.nbd)
			blk_nbd_link_read(&v->image.nbd_link.stats,
					  &info.nbd_link);
		info.nr_host_errors = host_errors_counts(
			d->host_errors, v->cookie, info.host_errors);
		fn(&info, arg);
	}
}

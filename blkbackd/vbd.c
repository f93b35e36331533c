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
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkbackd/host-errors.h"
#include "blkbackd/vbd-internal.h"
#include "blkbackd/vbd-move.h"
#include "blkbackd/vbd-quiesce.h"
#include "blkbackd/worker.h"
#include "libblk/xenbus.h"

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
	vbd_disconnect(v);
	if (v->closing) {
		v->forget = true;
		return;
	}
	vbd_unwatch_frontend(v);
	host_errors_remove_disk(v->d->host_errors, v->cookie);
	vbd_move_end(v, true);
	vbd_close_image(v);
	vbd_free(v);
}

void vbd_directory_gone(struct vbd *v)
{
	vbd_forget(v);
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
 * InitWait. libxl does not read it for a driver domain's disks. An image
 * without BLK_CAP_LOCAL (an NBD, RBD or null target) is no local file:
 * QEMU gets nothing, and the guest has its PV disk only, as before.
 */
static void vbd_publish_image_path(struct vbd *v)
{
	int ret;

	if (!(v->image.caps & BLK_CAP_LOCAL))
		return;
	ret = blk_xenbus_write_image_path(v->d->xs, v->be, v->image_path);
	if (ret < 0)
		vbd_log(v, LOG_WARNING, -ret,
			"cannot write %s/physical-device-path: %s; an HVM "
			"guest will have no emulated disk to boot from",
			v->be, strerror(-ret));
}

/*
 * The image's store is away and the device waits for it (vbd-image.c
 * logged why): the error node says so meanwhile, without a change of
 * state, so that the operator finds it where a refusal would be.
 */
static void vbd_waits_for_store(struct vbd *v, const struct vbd_why *why)
{
	char path[VBD_PATH_MAX + 8];
	char text[768];
	int ret;

	if (!why->msg[0])
		return; /* an attempt under way, nothing new to say */
	vbd_error_text(v, why->msg, text, sizeof(text));
	snprintf(path, sizeof(path), "%s/error", v->be);
	ret = xenbus_printf(v->d->xs, XBT_NULL, path, "%s", text);
	if (ret < 0 && ret != -ENOENT)
		vbd_log(v, LOG_ERR, -ret, "cannot publish the error: %s",
			strerror(-ret));
	snprintf(v->store_away, sizeof(v->store_away), "%s", why->msg);
}

/* The image is open: an error node saying its store was away goes. */
static void vbd_store_back(struct vbd *v)
{
	if (!v->store_away[0])
		return;
	v->store_away[0] = '\0';
	blk_xenbus_clear_error(v->d->xs, v->be);
	vbd_log(v, LOG_NOTICE, 0, "the store of image %s answered",
		v->image_path);
}

/* InitWait: the image is open and the features are published. */
static void vbd_init_wait(struct vbd *v)
{
	struct vbd_why why;
	int ret;

	ret = vbd_offer_image(v, &why);
	if (ret == -EINPROGRESS) {
		vbd_waits_for_store(v, &why);
		return;
	}
	if (ret < 0) {
		vbd_refuse(v, why.msg);
		return;
	}
	vbd_store_back(v);
	/* A device offered again has no error left from its last failure. */
	blk_xenbus_clear_error(v->d->xs, v->be);
	vbd_publish_image_path(v);
	vbd_cap_rings(v);
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

static void vbd_connect(struct vbd *v)
{
	struct blk_frontend fe;
	struct blk_disk_info disk;
	char what[VBD_PATH_MAX + 32];
	struct vbd_why why;
	int ret;

	if (v->nr_queues || !vbd_image_open(v) || !vbd_connect_due(v))
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
	vbd_read_domain_name(v);
	vbd_name_for_nbd(v);
	if (vbd_connect_queues(v, &fe, &why) < 0) {
		vbd_fail(v, "%s", why.msg);
		return;
	}
	vbd_xenstat_publish(v);
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

/*
 * Have the image open to connect: true when it is. A hand-over still
 * waiting for the image's holder, or a resumed device trying its lock
 * again, leaves the device as it is; any other failure fails it.
 */
static bool vbd_image_ready(struct vbd *v)
{
	struct vbd_why why;
	int ret = vbd_reopen_image(v, &why);

	if (ret == 0) {
		vbd_store_back(v);
		return true;
	}
	if (ret == -EINPROGRESS)
		vbd_waits_for_store(v, &why);
	else if (!vbd_awaits_image(v) && !v->resume_ticks)
		vbd_fail(v, "%s", why.msg);
	return false;
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
		if (!vbd_image_ready(v))
			break;
		/* As offered at InitWait, by this daemon or the last. */
		vbd_cap_rings(v);
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

	be_state = xenbus_read_state(v->d->xs, v->be);
	if (be_state == XenbusStateUnknown) {
		/*
		 * The toolstack removed the device: forgotten, once its rings
		 * closed if they still close, so that a directory made anew
		 * meanwhile is a new device, not this one's failure
		 * (tests/fuzz/vbd.c found it).
		 */
		vbd_forget(v);
		return;
	}
	/* Looked at again when its last ring has closed. */
	if (v->closing)
		return;
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
		else if (!v->failed)
			/*
			 * Once: the failure's own write fires the backend
			 * watch, and failing again there would write again,
			 * for ever (tests/fuzz/vbd.c found it).
			 */
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
		else if (be_state == XenbusStateConnected && vbd_image_ready(v))
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

/* A ring of a device closed: the device goes on once all have. */
static void vbd_ring_closed(void *arg, uint64_t cookie,
			    const struct blk_stats *final,
			    struct blk_handover *kept)
{
	struct daemon *d = arg;
	struct vbd *v = vbd_by_cookie(d, cookie);
	unsigned int q = cookie & QUEUE_MASK;
	struct vbd_why why;

	if (v && q < v->nr_queues && v->queue[q].quiesced) {
		vbd_quiesce_ring_closed(v, q, final, kept);
		return;
	}
	if (v && q < v->nr_queues && v->queue[q].moving_to) {
		if (vbd_ring_moved(v, q, final, kept, &why) < 0)
			vbd_fail(v, "%s", why.msg);
		return;
	}
	/* The move was called off: its device closes. */
	blk_handover_release(kept);
	vbd_ring_ended(d, v, q, final);
}

void vbd_ring_lost(struct vbd *v, const char *why)
{
	vbd_fail(v, "%s", why);
}

void vbd_ring_ended(struct daemon *d, struct vbd *v, unsigned int q,
		    const struct blk_stats *final)
{
	unsigned int root;
	uint32_t domid, devid;

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
	/* A paused device's action signals its end on the same fd. */
	vbd_quiesce_run(d);
	/* So does a live move's copier thread. */
	vbd_move_run(d);
	if (!d->stopping)
		vbd_reconcile_stale(d);
}

void vbd_release_all(struct daemon *d)
{
	vbd_close_all_rings(d);
	while (d->vbds) {
		struct vbd *v = d->vbds;

		vbd_unwatch_frontend(v);
		host_errors_remove_disk(d->host_errors, v->cookie);
		/* Quietly, and no device waits for it: the daemon stops. */
		vbd_move_end(v, false);
		vbd_drop_image(v);
		vbd_free(v);
	}
}

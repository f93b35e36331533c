/* SPDX-License-Identifier: MIT */
/*
 * The toolstack's half of a virtual block device's xenstore contract:
 * the two trees libxl 4.17 writes to plug a `vbd` disk
 * (libxl__device_generic_add), the nodes it writes to unplug it, and how
 * it removes them. Used by `blkbackctl attach`/`detach` for guests no xl
 * manages, and by the simulator's toolstack, so that both present the
 * daemon with exactly what xl would.
 *
 * Nothing here keeps state: any thread may call it with its own handle.
 */
#ifndef LIBBLK_TOOLSTACK_H
#define LIBBLK_TOOLSTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

/*
 * The device number Xen derives from a virtual device name: xvd[a-p][1-15]
 * → (202 << 8) | disk << 4 | part, larger xvd names → 1 << 28 | disk << 8 |
 * part, hd[a-d], sd[a-p], "dDpP" and plain numbers as libxl accepts them.
 * -EINVAL for a name Xen would refuse.
 */
int blk_vdev_to_devid(const char *vdev, uint32_t *devid);

/* One disk, as a disk= line or `blkbackctl attach` describes it. */
struct blk_vbd_spec {
	uint32_t domid; /* the guest */
	uint32_t backend_domid;
	const char *vdev; /* "xvda" */
	const char *target; /* written verbatim as params */
	bool readonly;
	const char *script; /* the hotplug script; NULL: no script node */
	const char *device_type; /* "disk" (NULL) or "cdrom" */
	bool no_discard; /* discard-enable=0 even when writable */
	/*
	 * backendtype=tap, as libxl 4.19 and later write it: the backend
	 * under backend/vbd3 with type "vbd3" and params "FORMAT:TARGET";
	 * @format is "aio" (raw, NULL) or "vhd", libxl's names for the two
	 * formats it allows.
	 */
	bool tap;
	const char *format;
	/*
	 * Also write libxl's own record of the disk, the backend's keys
	 * and "backend" under /libxl/D/device/vbd/N (vbd for a vbd3 disk
	 * too), in the same transaction, as xl does (seen under libxl
	 * 4.20): for the simulated toolstack, which stands for xl; not for
	 * `blkbackctl attach`, which is no libxl.
	 */
	bool libxl_record;
};

/* Where its two trees live. */
struct blk_vbd_paths {
	uint32_t devid;
	const char *kind; /* the backend's directory: "vbd" or "vbd3" */
	char be[128]; /* /local/domain/B/backend/KIND/D/N */
	char fe[128]; /* /local/domain/D/device/vbd/N */
	char libxl[128]; /* /libxl/D/device/vbd/N, or "" without libxl_record */
};

/* The paths of @s's trees; -EINVAL for a vdev Xen would refuse. */
int blk_vbd_paths(const struct blk_vbd_spec *s, struct blk_vbd_paths *out);

/*
 * Both trees in one transaction, from clean directories, with libxl's
 * permissions (each end owns its tree and may read the other's) and
 * states 1 (Initialising).
 */
int blk_vbd_add(struct xs_handle *xs, const struct blk_vbd_spec *s,
		const struct blk_vbd_paths *p);

/*
 * Ask the backend to let go, as libxl does: online=0 and state 5
 * (Closing) in one transaction. -ENODEV when the backend is gone.
 */
int blk_vbd_unplug(struct xs_handle *xs, const struct blk_vbd_paths *p);

/*
 * Remove both trees, and the directories they leave empty (the backend's
 * per-domain directory), and libxl's record when there is one, in one
 * transaction, so that a backend never sees one tree without the other.
 */
int blk_vbd_remove(struct xs_handle *xs, const struct blk_vbd_paths *p);

#endif /* LIBBLK_TOOLSTACK_H */

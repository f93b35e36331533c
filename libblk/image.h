/* SPDX-License-Identifier: MIT */
/*
 * The backing image of a virtual block device: a regular file, a block
 * device, an export on an NBD server (libblk/backend-nbd.h), an image in
 * Ceph RBD (libblk/backend-rbd.h) or the null image, which stores nothing
 * (libblk/backend-null.h).
 */
#ifndef LIBBLK_IMAGE_H
#define LIBBLK_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "libblk/backend-nbd.h"
#include "libblk/backend-rbd.h"

struct blk_backend;

enum blk_cache_mode {
	BLK_CACHE_NONE, /* O_DIRECT: no host page cache */
	BLK_CACHE_WRITEBACK, /* buffered through the host page cache */
};

struct blk_image {
	int fd;
	uint64_t sectors; /* 512-byte sectors exposed to the guest */
	uint32_t logical_block; /* smallest I/O unit the image accepts */
	uint32_t physical_block; /* the unit that avoids read-modify-write */
	uint32_t discard_granularity; /* bytes; 0 when it cannot discard */
	bool readonly;
	bool direct; /* opened with O_DIRECT */
	bool blockdev;
	bool tail_ignored; /* file size was not a multiple of 512 */
	unsigned int max_queues; /* rings it can serve at once; 0: any */
	/*
	 * What it can do (libblk/backend.h's enum blk_cap), set by
	 * blk_image_open() from its kind's set, narrower for an image that
	 * lacks one of them; 0 once closed, or after a failed open.
	 */
	unsigned int caps;

	/* An NBD export: its URI, and the first connection until used. */
	char *nbd_uri;
	struct nbd_handle *nbd_spare;
	struct blk_nbd_export nbd;
	struct blk_nbd_link nbd_link; /* its connections' reconnection */
	struct blk_rbd *rbd; /* an RBD image, shared by its rings */
	bool null; /* the null image: no file, no I/O */
	/*
	 * Why an open failed, beyond its errno (room for two paths of the
	 * moved-to refusal, -ESTALE, and its fix).
	 */
	char detail[480];
	/*
	 * After -EBUSY for an RBD image or an image file: the owner its
	 * lock's holder named (struct blk_rbd_owner; a file's in its
	 * user.blkbackd.owner attribute, read only when holder_remote),
	 * "" when none; the fields above then describe the image as it
	 * would have been opened.
	 */
	char holder[128];
	/*
	 * After -EBUSY for a file: the pid of the process whose POSIX lock
	 * keeps it busy (0: none named), or holder_remote when the lock
	 * names no pid (an OFD lock: another blkbackd, here or on another
	 * host sharing the filesystem, or QEMU). img->detail says which.
	 */
	int holder_pid;
	bool holder_remote;
	bool owner_named; /* our user.blkbackd.owner is on the file */
	bool world_readable; /* any local user can read, and lock, the file */
};

/*
 * Open @path for a guest. With BLK_CACHE_NONE the image is opened O_DIRECT
 * when the filesystem supports it; img->direct says whether it was. The
 * image is locked (shared for read-only, exclusive otherwise) against other
 * users that honour open file description locks, so two writable devices
 * cannot share one image. The lock is tried once, never waited for: a
 * lock held elsewhere is -EBUSY at once, and img->detail names its holder
 * (a process of this host by its pid when it can, or another host) and
 * the fix. The lock is held until the last reference to the open file
 * goes, which includes I/O a dead process left in flight: a restarted
 * daemon tries again later (vbd-image.c), never here. Returns 0 or
 * -errno: -EBUSY when the lock is held elsewhere, -EINVAL for something
 * that is neither a regular file nor a block device. An NBD URI or an RBD
 * target is connected to instead (blocking: not on a worker); @cache and
 * the file lock do not apply, and on failure img->detail says what went
 * wrong. @owner names the opener (the VM whose disk it is, or NULL) to
 * whoever finds a writable RBD image's or image file's lock taken by it
 * from another host: img->holder, there (a file's name is an extended
 * attribute, set when it can be, and removed when the image is closed).
 *
 * An image that a live move left behind (marked by blk_image_mark_moved(),
 * libblk/image-copy.h: its guest's disk lives on in the move's target) is
 * refused, -ESTALE, for reading too, and img->detail names the target and
 * how to remove the mark if the image is meant to be used again.
 *
 * QEMU is not locked out of a file here: the lock leaves out the bytes
 * QEMU's own locking uses, because an HVM guest's emulated disk (QEMU in
 * the same domain) opens the image after the device is offered and holds
 * it until the guest unplugs it. blk_image_lock_like_qemu() keeps QEMU out
 * from the moment the PV driver connects.
 */
int blk_image_open(struct blk_image *img, const char *path, bool readonly,
		   enum blk_cache_mode cache, const char *owner);

/*
 * The capabilities of the kind of store @path names (an NBD URI, an RBD
 * target, a null image, else a file or block device), for a decision
 * made before it is opened; an open image may have fewer (img->caps).
 */
unsigned int blk_image_caps_of(const char *path);

/*
 * Take QEMU's lock bytes as a QEMU drive of the same access would: reading,
 * writing unless read-only, and letting no one else write. From then on
 * QEMU refuses to open the image writable (or at all, when it is served
 * writable). Call when the frontend connects, by which time an HVM guest
 * has unplugged its emulated disk and QEMU has closed the image; calling
 * it again is harmless. Returns 0, or -EBUSY (nothing is left taken) when
 * QEMU still writes the image, or the image is writable and a QEMU forbids
 * others to write it. An image without BLK_CAP_LOCAL (an NBD export, an
 * RBD or null image) has no file QEMU could share: 0.
 */
int blk_image_lock_like_qemu(struct blk_image *img);

/*
 * Re-read the size, for an image that may have grown; 0 without a change
 * for an image without BLK_CAP_RESIZE.
 */
int blk_image_refresh_size(struct blk_image *img);

/*
 * A backend for one more ring of @img: the file shared, or an NBD
 * connection of its own (the open's for the first ring; for a further
 * one, made on its worker at its first request: this never blocks). The caller
 * destroys it after the ring's connection closed, and before
 * blk_image_close().
 */
int blk_image_new_backend(struct blk_image *img, struct blk_backend **out);

/*
 * An NBD image: how long its requests wait for a connection that dropped
 * to come back (0: they fail at once), and what the operator is told
 * (libblk/backend-nbd.h). Main thread, after blk_image_open() and before
 * the first backend; nothing for other images.
 */
void blk_image_set_nbd_reconnect(struct blk_image *img, unsigned int timeout_ms,
				 blk_nbd_log_fn *log, void *log_arg);

/*
 * A point-in-time copy of @img, as its blocks are now, under @dest:
 *
 *   a file     its data flushed (fdatasync()), then a new file @dest (an
 *              absolute path, created O_EXCL with the image's mode, on the
 *              image's filesystem) sharing all its blocks (FICLONE), so
 *              that the copy costs no data and no time in the image's
 *              size; -EXDEV for another filesystem, -EOPNOTSUPP for a
 *              filesystem that cannot share blocks (@why names it)
 *   RBD        its writes flushed, then its snapshot named @dest
 *   otherwise  -EOPNOTSUPP: a block device, an NBD export (the server
 *              owns the image) and the null image cannot be copied here
 *
 * 0 or -errno, with what failed and what to do about it in @why. A @dest
 * made and not finished is removed. Blocking for as long as the
 * filesystem or the cluster takes: never on a worker nor the daemon's
 * main thread. Any thread; whoever writes the image must be stopped
 * meanwhile (blkbackd/vbd-quiesce.h), or the copy is of no one instant.
 */
int blk_image_snapshot(struct blk_image *img, const char *dest, char *why,
		       size_t why_len);

/* Close @img, removing the owner it named on an image file. */
void blk_image_close(struct blk_image *img);

/*
 * fsync() the directory @path is in, so that @path, made, renamed or
 * removed there, is (or is gone) after a crash. 0 or -errno. Blocking on
 * the filesystem: never on the daemon's main thread for a store it does
 * not own. Any thread.
 */
int blk_sync_parent_dir(const char *path);

#endif /* LIBBLK_IMAGE_H */

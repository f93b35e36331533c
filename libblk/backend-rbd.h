/* SPDX-License-Identifier: MIT */
/*
 * Images in Ceph RBD, through librbd: `rbd:POOL/IMAGE[@SNAP][:conf=PATH]
 * [:id=NAME]`, as QEMU writes them.
 *
 * blk_rbd_open() connects to the cluster and opens the image, blocking:
 * on the daemon's main thread, never a worker. The image is shared by
 * every ring of the disk (librbd is thread-safe); each ring's backend
 * issues librbd's asynchronous calls from its worker, and librbd's
 * completion threads hand the results over through an eventfd that the
 * worker's io_uring watches: no thread of ours, none per request.
 *
 * A writable image with the exclusive-lock feature is locked for the whole
 * time it is open, so a second writer (another host's daemon, another
 * disk) is refused instead of taking turns with it; the holder names its
 * owner in the image's metadata (struct blk_rbd_owner) and removes the
 * name when it closes the image. A writable image without the feature
 * has no such protection: blk_rbd_single_writer() says so, for the
 * caller to refuse it. A snapshot is
 * read-only. When the cluster cannot be reached, requests wait inside
 * librbd and complete once it is back (Ceph's own behaviour).
 */
#ifndef LIBBLK_BACKEND_RBD_H
#define LIBBLK_BACKEND_RBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libblk/backend.h"

struct blk_rbd;

/* Does @target name an RBD image rather than a file? */
bool blk_rbd_is_target(const char *target);

/*
 * An RBD image (libblk/backend.h's enum blk_cap): reached over the
 * network, locked by its exclusive-lock feature (an image without it has
 * no BLK_CAP_LOCK once open), resizable; its rings share one image
 * handle, so a ring's backend is made anew anywhere.
 */
#define BLK_RBD_CAPS                                                          \
	(BLK_CAP_STORES | BLK_CAP_LOCK | BLK_CAP_REMOTE_OPEN | BLK_CAP_MOVE | \
	 BLK_CAP_RESIZE)

/*
 * Who holds a writable image's exclusive lock, as the holders name
 * themselves: @self is the opener's name (the VM whose disk it is, NULL or
 * "" for none), recorded in the image's metadata once the lock is taken;
 * @holder, after an open that found the lock taken, is the name its
 * holder recorded ("" when it recorded none). A migration between hosts
 * needs it: the receiving host's daemon, which has no device of the VM
 * that holds the lock, learns from it that the holder is the same VM's
 * disk on the sending host (docs/migration.md). A name is a claim by a
 * client of the cluster, trusted as the cluster's clients are, and only
 * advisory: it is read only when the lock is held, so a name left by a
 * client that died keeps no one out.
 */
struct blk_rbd_owner {
	const char *self;
	char *holder; /* the caller's buffer, of holder_len > 0 bytes */
	size_t holder_len;
};

/*
 * Connect and open @target. -errno on failure, with what failed in @why.
 * @size_out: the image's size in bytes; also after -EBUSY (another client
 * holds the lock), when @o->holder names that client's owner.
 */
int blk_rbd_open(const char *target, bool readonly, struct blk_rbd_owner *o,
		 struct blk_rbd **out, uint64_t *size_out, char *why,
		 size_t why_len);
/*
 * Whether @r is opened writable with its exclusive lock held, so that no
 * other client can write it: false for a writable image without the
 * exclusive-lock feature (and for a read-only one, which needs none).
 */
bool blk_rbd_single_writer(const struct blk_rbd *r);
/* The image's size now (it follows `rbd resize`). */
int blk_rbd_size(struct blk_rbd *r, uint64_t *size);
/*
 * Flush what librbd holds of @r and take the image's snapshot @name
 * (rbd_snap_create()): 0 or -errno (-EEXIST: a snapshot of that name
 * exists). Blocking: not on a worker. Any thread, while nothing is in
 * flight on @r that the snapshot must hold (blkbackd quiesces the disk).
 */
int blk_rbd_snapshot(struct blk_rbd *r, const char *name);

/*
 * Whole images, for the copy targets of live moves (libblk/image-copy.h).
 * All block until the cluster answered: any thread but a worker.
 *
 * blk_rbd_create(): a new image @target of @size bytes, with the
 * cluster's default features and exclusive-lock (added when the defaults
 * lack it); -EEXIST when one of that name exists. blk_rbd_remove(): the
 * image @target removed (-EBUSY while it is open, -ENOENT when absent).
 * Both with what failed in @why.
 */
int blk_rbd_create(const char *target, uint64_t size, char *why,
		   size_t why_len);
int blk_rbd_remove(const char *target, char *why, size_t why_len);
/*
 * Synchronous I/O on an open image, next to its rings' asynchronous I/O:
 * 0 or -errno (-EIO for a short read or write). blk_rbd_write_zeroes()
 * makes the range read as zeros, deallocating whole objects.
 */
int blk_rbd_read(struct blk_rbd *r, uint64_t off, uint64_t len, void *buf);
int blk_rbd_write(struct blk_rbd *r, uint64_t off, uint64_t len,
		  const void *buf);
int blk_rbd_write_zeroes(struct blk_rbd *r, uint64_t off, uint64_t len);
/* What librbd holds of @r written to the cluster. */
int blk_rbd_flush(struct blk_rbd *r);
/*
 * The image's metadata @key: set to @value (stored by the cluster when it
 * returns), or read into @buf of @len bytes (cut to fit, NUL-terminated;
 * -ENOENT when it has none).
 */
int blk_rbd_meta_set(struct blk_rbd *r, const char *key, const char *value);
int blk_rbd_meta_get(struct blk_rbd *r, const char *key, char *buf, size_t len);
/* After every backend on @r has been destroyed. */
void blk_rbd_close(struct blk_rbd *r);

/* A backend for one ring on @r, which it borrows. */
int blk_backend_rbd_new(struct blk_rbd *r, struct blk_backend **out);

#endif /* LIBBLK_BACKEND_RBD_H */

/* SPDX-License-Identifier: MIT */
/*
 * Copying an open image into a new one, for a live move of a guest's disk
 * (blkbackd/vbd-move.c): the target is made and opened, the source's
 * ranges are copied into it while the guest goes on writing the source
 * (libblk/dirty.h says which ranges to copy again), and once the guest
 * runs on the target, the source is marked so that it is not used again
 * by mistake (blk_image_open() refuses it, -ESTALE).
 *
 * Threads: every function here blocks for as long as the filesystem or
 * the Ceph cluster takes, so they run on a thread that may block: never
 * on a worker nor on the daemon's main thread. None keeps state between
 * calls; the images given are borrowed, and stay usable by others (the
 * workers' I/O on the source goes on meanwhile: these use pread()/
 * pwrite() or librbd's synchronous calls, never the file offset).
 */
#ifndef LIBBLK_IMAGE_COPY_H
#define LIBBLK_IMAGE_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "libblk/image.h"

/* The most blk_image_copy_range() copies in one call: 4 MiB. */
#define BLK_COPY_MAX (4u << 20)

/*
 * The extended attribute (a file's) or metadata key (an RBD image's) that
 * marks the source of a finished move; its value is the target.
 */
#define BLK_MOVED_TO_XATTR "user.blkbackd.moved-to"
#define BLK_MOVED_TO_KEY "blkbackd.moved-to"

/*
 * Make @dest as a copy target of @src's size (src->sectors * 512) and open
 * it in @out, writable and locked as blk_image_open() would (@cache,
 * @owner as there):
 *
 *   a file   when @dest is an absolute path: created O_EXCL (never
 *            through a symbolic link) with the permission bits of @src's
 *            file or device node (0600 for an RBD @src), sparse
 *            (ftruncate(): it holds no data yet), on any filesystem; it
 *            and its directory entry are synced before the open
 *   RBD      when @dest is an RBD target ("rbd:POOL/IMAGE[:conf=PATH]
 *            [:id=NAME]" as blk_image_open() takes them; no snapshot):
 *            created with the cluster's default features plus
 *            exclusive-lock, which the open then takes
 *
 * @src may be a file, a block device or an RBD image, whatever @dest is.
 * 0 or -errno, with what failed and the fix in @why: -EEXIST when @dest
 * exists (nothing is touched then); -EOPNOTSUPP for an NBD export or the
 * null image as @src; -EINVAL for a relative path or a malformed target;
 * the open's error otherwise. What was created is removed again on any
 * failure after it. The caller closes @out (blk_image_close()), and removes
 * @dest (blk_image_remove()) when it will not be used.
 */
int blk_image_create_copy(struct blk_image *src, const char *dest,
			  enum blk_cache_mode cache, const char *owner,
			  struct blk_image *out, char *why, size_t why_len);

/*
 * Copy bytes [@off, @off + @len) of @src into @dst at the same offset,
 * through @buf (@len bytes, aligned to 4096: the images may be O_DIRECT).
 * @off and @len are multiples of 512, @len <= BLK_COPY_MAX, and the range
 * ends at most at @dst's end (dst->sectors * 512).
 *
 * A range @src holds no data in (a hole of a file, by SEEK_DATA/SEEK_HOLE;
 * for a block device or RBD image, a range that reads as zeros) is not
 * written as data: it is made a hole in @dst (fallocate(PUNCH_HOLE), or
 * rbd_discard(); zeros written where @dst cannot punch), so that @dst
 * stays sparse where @src is, and reads as zeros there even when the
 * range was written before (a chunk copied again after the guest
 * discarded it).
 *
 * 0 or -errno (-EIO for a short read: @src is smaller than the range).
 */
int blk_image_copy_range(struct blk_image *src, struct blk_image *dst,
			 uint64_t off, uint64_t len, void *buf);

/*
 * Make what was written to @img durable: fdatasync() for a file or block
 * device, rbd_flush() for an RBD image. 0 or -errno; -EOPNOTSUPP for an
 * NBD export or the null image, which are never copy targets.
 */
int blk_image_flush(struct blk_image *img);

/*
 * Remove @dest, a copy target that will not be used: unlink() a file,
 * rbd_remove() an RBD image. Close it first (an RBD image open anywhere
 * cannot be removed: -EBUSY). -ENOENT when it is not there. 0 or -errno,
 * with what failed in @why.
 */
int blk_image_remove(const char *dest, char *why, size_t why_len);

/*
 * Mark @img (the source of a finished move) as moved to @dest, durably:
 * a file's extended attribute user.blkbackd.moved-to = @dest, then
 * fsync(); an RBD image's metadata key blkbackd.moved-to = @dest (stored
 * by the cluster when the call returns). From then on blk_image_open()
 * refuses the image (-ESTALE) until the mark is removed by hand.
 *
 * 0 or -errno with why in @why: -EOPNOTSUPP where no mark can be kept
 * (a block device, whose node takes no user attributes; a filesystem
 * without user attributes; an NBD export; the null image): nothing is
 * marked then, and the caller decides whether the move goes on and tells
 * the operator that the source is not protected.
 */
int blk_image_mark_moved(struct blk_image *img, const char *dest, char *why,
			 size_t why_len);

/*
 * The same for the image file at @path, which is not open here: for a
 * restarted daemon finishing a move its predecessor switched. Opened for
 * the mark alone, never locked: the predecessor's I/O still in flight may
 * hold the image's lock, which must not keep the mark off. 0 when @path
 * was marked here; -EALREADY when it carried a mark already (whatever it
 * names: nothing is changed); -ENOENT when it is gone; else as above.
 */
int blk_image_mark_moved_path(const char *path, const char *dest, char *why,
			      size_t why_len);

#endif /* LIBBLK_IMAGE_COPY_H */

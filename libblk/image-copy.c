// SPDX-License-Identifier: MIT
/*
 * Copying an open image into a new one (image-copy.h): the target made
 * and opened, ranges copied with the source's holes kept, flushes, the
 * target removed, the source marked as moved.
 */
#include "libblk/image-copy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "libblk/backend-rbd.h"
#include "libblk/image-internal.h"

#define SECTOR_SIZE 512u
/* Holes are looked for, and kept, in whole pages. */
#define HOLE_ALIGN 4096u

/* ---- making the target ---- */

/* An image of a kind that copies here: not an NBD export nor null. */
static bool stores_here(const struct blk_image *img)
{
	return !img->nbd_uri && !img->null;
}

/* @src can be the source of a copy at all. */
static int copyable(const struct blk_image *src, char *why, size_t len)
{
	if (stores_here(src))
		return 0;
	if (src->nbd_uri)
		return image_refuse(why, len, -EOPNOTSUPP,
				    "an NBD export belongs to its server: move "
				    "it there (qemu-img convert, or the "
				    "server's own tool)");
	return image_refuse(why, len, -EOPNOTSUPP,
			    "the null image holds nothing to copy");
}

/* The permission bits of @src's file, or 0600 for an RBD image. */
static mode_t source_mode(const struct blk_image *src)
{
	struct stat st;

	if (src->rbd || fstat(src->fd, &st) < 0)
		return 0600;
	return st.st_mode & 07777;
}

/* A new sparse file @dest of @bytes, durably there. */
static int make_file(const char *dest, mode_t mode, uint64_t bytes, char *why,
		     size_t len)
{
	int fd, ret = 0;

	if (dest[0] != '/')
		return image_refuse(why, len, -EINVAL,
				    "%s: give the target's absolute path",
				    dest);
	fd = image_create_excl(dest, mode, "move", why, len);
	if (fd < 0)
		return fd;
	/* The mode as the source's, whatever the umask took away. */
	if (fchmod(fd, mode) < 0 || ftruncate(fd, (off_t)bytes) < 0 ||
	    fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (ret == 0)
		ret = blk_sync_parent_dir(dest);
	if (ret < 0) {
		unlink(dest);
		return image_refuse(why, len, ret, "cannot make %s: %s", dest,
				    strerror(-ret));
	}
	return 0;
}

int blk_image_create_copy(struct blk_image *src, const char *dest,
			  enum blk_cache_mode cache, const char *owner,
			  struct blk_image *out, char *why, size_t why_len)
{
	uint64_t bytes = src->sectors * SECTOR_SIZE;
	int ret = copyable(src, why, why_len);

	if (ret < 0)
		return ret;
	if (blk_rbd_is_target(dest))
		ret = blk_rbd_create(dest, bytes, why, why_len);
	else
		ret = make_file(dest, source_mode(src), bytes, why, why_len);
	if (ret < 0)
		return ret;
	ret = blk_image_open(out, dest, false, cache, owner);
	if (ret < 0) {
		char removed[128];

		snprintf(why, why_len, "cannot open %s: %s", dest,
			 out->detail[0] ? out->detail : strerror(-ret));
		blk_image_remove(dest, removed, sizeof(removed));
	}
	return ret;
}

int blk_image_remove(const char *dest, char *why, size_t why_len)
{
	int ret;

	if (blk_rbd_is_target(dest))
		return blk_rbd_remove(dest, why, why_len);
	if (unlink(dest) < 0)
		return image_refuse(why, why_len, -errno,
				    "cannot remove %s: %s", dest,
				    strerror(errno));
	ret = blk_sync_parent_dir(dest);
	if (ret < 0)
		return image_refuse(why, why_len, ret,
				    "removed %s, but cannot sync its "
				    "directory: %s",
				    dest, strerror(-ret));
	return 0;
}

/* ---- copying ---- */

/* pread() or pwrite() the whole of [@off, +@len), however it is cut. */
static int rw_all(int fd, bool write, uint64_t off, uint64_t len, uint8_t *buf)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, buf, len, (off_t)off)
				  : pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* the image ends before the range */
		buf += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int read_range(struct blk_image *img, uint64_t off, uint64_t len,
		      uint8_t *buf)
{
	if (img->rbd)
		return blk_rbd_read(img->rbd, off, len, buf);
	return rw_all(img->fd, false, off, len, buf);
}

/*
 * Make [@off, +@len) of @dst read as zeros without data: a punched hole,
 * or librbd's zeroing; zeros written (from @buf, @len bytes of scratch)
 * where the filesystem cannot punch.
 */
static int zero_range(struct blk_image *dst, uint64_t off, uint64_t len,
		      uint8_t *buf)
{
	if (dst->rbd)
		return blk_rbd_write_zeroes(dst->rbd, off, len);
	if (fallocate(dst->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	memset(buf, 0, len);
	return rw_all(dst->fd, true, off, len, buf);
}

static bool all_zero(const uint8_t *buf, uint64_t len)
{
	/* len is a multiple of 512: compare the rest with its first byte. */
	return buf[0] == 0 && memcmp(buf, buf + 1, len - 1) == 0;
}

/* Write [@off, +@len) of @buf (read from the source) into @dst. */
static int put_range(struct blk_image *dst, uint64_t off, uint64_t len,
		     uint8_t *buf)
{
	if (dst->rbd)
		return blk_rbd_write(dst->rbd, off, len, buf);
	return rw_all(dst->fd, true, off, len, buf);
}

/* The bytes of the block at @pos (the last one may be short). */
static uint64_t block_at(uint64_t pos, uint64_t end)
{
	return end - pos < HOLE_ALIGN ? end - pos : HOLE_ALIGN;
}

/*
 * As put_range(), but the blocks of zeros (a source that cannot tell its
 * holes reads them so) go in as holes: each run of blocks alike in one
 * call.
 */
static int put_sparse(struct blk_image *dst, uint64_t off, uint64_t len,
		      uint8_t *buf)
{
	uint64_t pos = off, end = off + len;

	while (pos < end) {
		bool zero = all_zero(buf + (pos - off), block_at(pos, end));
		uint64_t run = pos + block_at(pos, end);
		int ret;

		while (run < end &&
		       all_zero(buf + (run - off), block_at(run, end)) == zero)
			run += block_at(run, end);
		ret = zero ? zero_range(dst, pos, run - pos, buf + (pos - off))
			   : put_range(dst, pos, run - pos, buf + (pos - off));
		if (ret < 0)
			return ret;
		pos = run;
	}
	return 0;
}

static uint64_t round_down(uint64_t x)
{
	return x & ~(uint64_t)(HOLE_ALIGN - 1);
}

static uint64_t round_up(uint64_t x)
{
	return round_down(x + HOLE_ALIGN - 1);
}

/*
 * Where the next data of @fd at or after @pos starts (@end: none before
 * it), in whole pages. A file that cannot tell is all data.
 */
static uint64_t next_data(int fd, uint64_t pos, uint64_t end)
{
	off_t at = lseek(fd, (off_t)pos, SEEK_DATA);

	if (at < 0)
		return errno == ENXIO ? end : pos;
	if ((uint64_t)at >= end)
		return end;
	return round_down((uint64_t)at) > pos ? round_down((uint64_t)at) : pos;
}

/* Where the data of @fd from @pos ends, in whole pages, by @end. */
static uint64_t next_hole(int fd, uint64_t pos, uint64_t end)
{
	off_t at = lseek(fd, (off_t)pos, SEEK_HOLE);

	if (at < 0 || round_up((uint64_t)at) >= end)
		return end;
	return round_up((uint64_t)at);
}

/* A file's range, its holes made holes in @dst and its data copied. */
static int copy_sparse(struct blk_image *src, struct blk_image *dst,
		       uint64_t off, uint64_t len, uint8_t *buf)
{
	uint64_t pos = off, end = off + len;

	while (pos < end) {
		uint64_t data = next_data(src->fd, pos, end), stop;
		int ret = 0;

		if (data > pos)
			ret = zero_range(dst, pos, data - pos,
					 buf + (pos - off));
		if (ret < 0)
			return ret;
		if (data == end)
			break;
		stop = next_hole(src->fd, data, end);
		ret = rw_all(src->fd, false, data, stop - data,
			     buf + (data - off));
		if (ret == 0)
			ret = put_range(dst, data, stop - data,
					buf + (data - off));
		if (ret < 0)
			return ret;
		pos = stop;
	}
	return 0;
}

int blk_image_copy_range(struct blk_image *src, struct blk_image *dst,
			 uint64_t off, uint64_t len, void *buf)
{
	int ret;

	if (!len)
		return 0;
	if (len > BLK_COPY_MAX || (off | len) % SECTOR_SIZE ||
	    off + len > dst->sectors * SECTOR_SIZE)
		return -EINVAL;
	if (!stores_here(src) || !stores_here(dst))
		return -EOPNOTSUPP;
	/* A regular file tells its holes; others read as zeros there. */
	if (!src->rbd && !src->blockdev)
		return copy_sparse(src, dst, off, len, buf);
	ret = read_range(src, off, len, buf);
	return ret < 0 ? ret : put_sparse(dst, off, len, buf);
}

/* ---- durability and the mark ---- */

int blk_image_flush(struct blk_image *img)
{
	if (!stores_here(img))
		return -EOPNOTSUPP;
	if (img->rbd)
		return blk_rbd_flush(img->rbd);
	return fdatasync(img->fd) < 0 ? -errno : 0;
}

#define NO_USER_ATTRIBUTES                                             \
	" (its filesystem keeps no user attributes: nothing keeps it " \
	"from being used again)"

static int mark_fd(int fd, bool blockdev, const char *dest, char *why,
		   size_t len)
{
	int err;

	if (blockdev)
		return image_refuse(why, len, -EOPNOTSUPP,
				    "a block device keeps no mark (its node "
				    "takes no user attribute): nothing keeps "
				    "it from being used again; take it out of "
				    "use by hand");
	if (fsetxattr(fd, BLK_MOVED_TO_XATTR, dest, strlen(dest), 0) < 0) {
		err = errno;
		return image_refuse(
			why, len, -err, "cannot set %s on the image: %s%s",
			BLK_MOVED_TO_XATTR, strerror(err),
			err == EOPNOTSUPP ? NO_USER_ATTRIBUTES : "");
	}
	if (fsync(fd) < 0) {
		err = errno;
		return image_refuse(why, len, -err,
				    "cannot make the image's mark durable: %s",
				    strerror(err));
	}
	return 0;
}

int blk_image_mark_moved_path(const char *path, const char *dest, char *why,
			      size_t why_len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int ret;

	if (fd < 0)
		return image_refuse(why, why_len, -errno, "cannot open it: %s",
				    strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = image_refuse(why, why_len, -errno, "cannot stat it: %s",
				   strerror(errno));
	} else if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		ret = image_refuse(why, why_len, -EINVAL,
				   "it is neither a file nor a block device");
	} else if (fgetxattr(fd, BLK_MOVED_TO_XATTR, NULL, 0) >= 0) {
		ret = -EALREADY;
	} else {
		ret = mark_fd(fd, S_ISBLK(st.st_mode), dest, why, why_len);
	}
	close(fd);
	return ret;
}

int blk_image_mark_moved(struct blk_image *img, const char *dest, char *why,
			 size_t why_len)
{
	int ret = copyable(img, why, why_len);

	if (ret < 0)
		return ret;
	if (!img->rbd)
		return mark_fd(img->fd, img->blockdev, dest, why, why_len);
	ret = blk_rbd_meta_set(img->rbd, BLK_MOVED_TO_KEY, dest);
	if (ret < 0)
		return image_refuse(why, why_len, ret,
				    "cannot set the image's metadata %s: %s",
				    BLK_MOVED_TO_KEY, strerror(-ret));
	return 0;
}

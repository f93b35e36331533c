// SPDX-License-Identifier: MIT
/*
 * Opening and sizing backing images.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "libblk/backend.h"
#include "libblk/backend-null.h"
#include "libblk/image.h"
#include "libblk/image-copy.h"
#include "libblk/image-internal.h"

#define SECTOR_SHIFT 9

int image_refuse(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return err;
}

int image_create_excl(const char *dest, mode_t mode, const char *what,
		      char *why, size_t len)
{
	int fd = open(dest,
		      O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		      mode);
	int err = errno;

	if (fd >= 0)
		return fd;
	if (err == EEXIST)
		return image_refuse(why, len, -err,
				    "cannot create %s: %s (a %s never replaces "
				    "a file: remove it or give another name)",
				    dest, strerror(err), what);
	return image_refuse(why, len, -err, "cannot create %s: %s", dest,
			    strerror(err));
}

int blk_sync_parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd, ret = 0;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int open_image_fd(const char *path, bool readonly,
			 enum blk_cache_mode cache, bool *direct)
{
	int flags = (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY;
	int fd;

	*direct = false;
	if (cache == BLK_CACHE_NONE) {
		fd = open(path, flags | O_DIRECT);
		if (fd >= 0) {
			*direct = true;
			return fd;
		}
		/* tmpfs and some FUSE filesystems refuse O_DIRECT. */
		if (errno != EINVAL)
			return -errno;
	}
	fd = open(path, flags);
	return fd < 0 ? -errno : fd;
}

/*
 * QEMU locks an image through single bytes (its block/file-posix.c):
 * a read lock on byte 100 + bit for each permission it uses and on byte
 * 200 + bit for each it does not let others have, and it goes ahead only
 * when no one else holds the opposite byte. Bit 0 is reading, bit 1
 * writing.
 */
#define QEMU_LOCK_USES 100
#define QEMU_LOCK_DENIES 200
#define QEMU_LOCK_END 300
#define QEMU_PERM_READ 0
#define QEMU_PERM_WRITE 1

static int ofd_lock(int fd, short type, off_t start, off_t len)
{
	struct flock fl = {
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = start,
		.l_len = len,
	};

	return fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 0 : -errno;
}

/*
 * blkbackd's own lock: the whole file but QEMU's bytes, so that QEMU's
 * locking does not see it (see blk_image_lock_like_qemu()), while every
 * other blkbackd device and every whole-file locker does. OFD locks: never
 * inherited by forks, released on the last close. One attempt, never a
 * wait (F_OFD_SETLK): -EBUSY when another holds a conflicting lock, and
 * then nothing is left taken, so that the holder is found alone.
 */
static int lock_image(int fd, bool readonly)
{
	short type = readonly ? F_RDLCK : F_WRLCK;
	int ret = ofd_lock(fd, type, 0, QEMU_LOCK_USES);

	if (!ret) {
		ret = ofd_lock(fd, type, QEMU_LOCK_END, 0);
		if (ret)
			ofd_lock(fd, F_UNLCK, 0, QEMU_LOCK_USES);
	}
	return ret == -EAGAIN || ret == -EACCES ? -EBUSY : ret;
}

/* The first lock of another that keeps @type on [@start, +@len) out. */
static bool ofd_conflict(int fd, short type, off_t start, off_t len,
			 struct flock *fl)
{
	*fl = (struct flock){
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = start,
		.l_len = len,
	};
	return fcntl(fd, F_OFD_GETLK, fl) == 0 && fl->l_type != F_UNLCK;
}

/* The end of what the operator is told about a busy image. */
static const char *lock_advice(const struct stat *st)
{
	return st->st_mode & S_IROTH ? "; the image is readable by every local "
				       "user, any of whom can lock it: chmod "
				       "o-r it (docs/security.md)"
				     : "";
}

/*
 * @img is busy: say who holds it. A POSIX lock (fcntl(F_SETLK), lockf())
 * names its process by its pid, and is never a blkbackd disk's: the owner
 * record is not read then, and the holder is named. An OFD lock names no
 * pid (another blkbackd, QEMU, or a lock held from another host on a
 * shared filesystem): the operator is told how to find its holder, and
 * holder_remote lets the owner record say whether it is a migration's
 * other end (read_holder()).
 */
static void describe_holder(struct blk_image *img)
{
	short type = img->readonly ? F_RDLCK : F_WRLCK;
	char comm[32] = "", path[64];
	const char *advice;
	struct stat st;
	struct flock fl;
	FILE *f;

	if (fstat(img->fd, &st) < 0)
		return;
	if (!ofd_conflict(img->fd, type, 0, QEMU_LOCK_USES, &fl) &&
	    !ofd_conflict(img->fd, type, QEMU_LOCK_END, 0, &fl))
		fl.l_pid = -1;
	advice = lock_advice(&st);
	if (fl.l_pid <= 0) {
		img->holder_remote = true;
		snprintf(img->detail, sizeof(img->detail),
			 "another device or program holds it %s, by a lock "
			 "that names no pid (grep -l %02x:%02x:%lu "
			 "/proc/*/fdinfo/* finds it here; else another host "
			 "holds it); detach it there, or give every user "
			 "access=ro%s",
			 fl.l_type == F_RDLCK ? "open" : "writable",
			 major(st.st_dev), minor(st.st_dev),
			 (unsigned long)st.st_ino, advice);
		return;
	}
	img->holder_pid = fl.l_pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)fl.l_pid);
	f = fopen(path, "re");
	if (f && fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
	snprintf(img->detail, sizeof(img->detail),
		 "process %d (%s) holds a %s lock on it; stop it, or give "
		 "every user access=ro%s",
		 (int)fl.l_pid, comm[0] ? comm : "gone since",
		 fl.l_type == F_WRLCK ? "write" : "read", advice);
}

/* Whether another open file holds a lock on byte @off. */
static bool qemu_byte_taken(int fd, off_t off)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = off,
		.l_len = 1,
	};

	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return true;
	return fl.l_type != F_UNLCK;
}

/* Someone else writes the image, or forbids writing it while we do. */
static bool qemu_user_conflicts(const struct blk_image *img)
{
	if (qemu_byte_taken(img->fd, QEMU_LOCK_USES + QEMU_PERM_WRITE))
		return true;
	return !img->readonly &&
	       qemu_byte_taken(img->fd, QEMU_LOCK_DENIES + QEMU_PERM_WRITE);
}

int blk_image_lock_like_qemu(struct blk_image *img)
{
	int ret;

	if (!(img->caps & BLK_CAP_LOCAL))
		return 0; /* no local file QEMU could share */
	ret = ofd_lock(img->fd, F_RDLCK, QEMU_LOCK_USES + QEMU_PERM_READ, 1);
	if (!ret && !img->readonly)
		ret = ofd_lock(img->fd, F_RDLCK,
			       QEMU_LOCK_USES + QEMU_PERM_WRITE, 1);
	if (!ret)
		ret = ofd_lock(img->fd, F_RDLCK,
			       QEMU_LOCK_DENIES + QEMU_PERM_WRITE, 1);
	if (ret == -EAGAIN || ret == -EACCES ||
	    (!ret && qemu_user_conflicts(img)))
		ret = -EBUSY;
	if (ret)
		ofd_lock(img->fd, F_UNLCK, QEMU_LOCK_USES,
			 QEMU_LOCK_END - QEMU_LOCK_USES);
	return ret;
}

/* A block device discards when its queue says it can. */
static uint32_t blockdev_discard_granularity(int fd)
{
	struct stat st;
	char path[96];
	unsigned long max = 0, gran = 0;
	FILE *f;

	if (fstat(fd, &st) < 0)
		return 0;
	snprintf(path, sizeof(path),
		 "/sys/dev/block/%u:%u/queue/discard_max_bytes",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%lu", &max) != 1)
		max = 0;
	fclose(f);
	if (!max)
		return 0;
	snprintf(path, sizeof(path),
		 "/sys/dev/block/%u:%u/queue/discard_granularity",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lu", &gran) != 1)
			gran = 0;
		fclose(f);
	}
	return gran ? (uint32_t)gran : 512;
}

static int size_blockdev(struct blk_image *img)
{
	uint64_t bytes;
	int lbs, pbs;

	if (ioctl(img->fd, BLKGETSIZE64, &bytes) < 0 ||
	    ioctl(img->fd, BLKSSZGET, &lbs) < 0)
		return -errno;
	if (ioctl(img->fd, BLKPBSZGET, &pbs) < 0)
		pbs = lbs;
	img->sectors = bytes >> SECTOR_SHIFT;
	img->logical_block = (uint32_t)lbs;
	img->physical_block = (uint32_t)pbs;
	img->discard_granularity = blockdev_discard_granularity(img->fd);
	return 0;
}

static void size_file(struct blk_image *img, const struct stat *st)
{
	img->sectors = (uint64_t)st->st_size >> SECTOR_SHIFT;
	img->tail_ignored = (st->st_size & ((1 << SECTOR_SHIFT) - 1)) != 0;
	img->logical_block = 1u << SECTOR_SHIFT;
	/*
	 * The filesystem block is the unit below which a write costs a
	 * read-modify-write; report it, bounded to one page.
	 */
	img->physical_block = st->st_blksize >= 512 && st->st_blksize <= 4096
				      ? (uint32_t)st->st_blksize
				      : 512;
	/*
	 * Holes are punched in whole filesystem blocks; a filesystem that
	 * cannot punch answers EOPNOTSUPP per request.
	 */
	img->discard_granularity = img->physical_block;
}

static int size_rbd(struct blk_image *img)
{
	uint64_t bytes;
	int ret = blk_rbd_size(img->rbd, &bytes);

	if (ret < 0)
		return ret;
	img->sectors = bytes >> SECTOR_SHIFT;
	img->tail_ignored = (bytes & ((1 << SECTOR_SHIFT) - 1)) != 0;
	return 0;
}

/*
 * A file's lock holder names itself as an RBD image's does (struct
 * blk_rbd_owner), in an extended attribute: on a filesystem shared by
 * hosts whose locks reach across them (NFSv4, a cluster filesystem), the
 * receiving host of a migration finds the name where it finds the lock.
 * Best effort: a filesystem without user attributes names no one, and
 * the other host then refuses the disk as it would without the name.
 *
 * The record is advisory: it is written under the lock, removed before
 * the lock goes (blk_image_close()), and read only when a lock that names
 * no pid keeps the image busy, as another host's would (describe_holder()),
 * to tell a migration's receiving end that it may wait. It grants nothing: a
 * record left by a daemon that died, or copied with the image, is
 * overwritten by the next writer that takes the lock, and never keeps
 * anyone out alone.
 */
#define OWNER_XATTR "user.blkbackd.owner"

static void name_owner(struct blk_image *img, const char *owner)
{
	img->owner_named =
		owner && owner[0] &&
		fsetxattr(img->fd, OWNER_XATTR, owner, strlen(owner), 0) == 0;
}

static void read_holder(struct blk_image *img)
{
	ssize_t n = fgetxattr(img->fd, OWNER_XATTR, img->holder,
			      sizeof(img->holder) - 1);

	img->holder[n > 0 ? n : 0] = '\0';
}

int blk_image_refresh_size(struct blk_image *img)
{
	struct stat st;

	if (!(img->caps & BLK_CAP_RESIZE))
		return 0; /* the size as of its connection, or its name's */
	if (img->rbd)
		return size_rbd(img);
	if (fstat(img->fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		return size_blockdev(img);
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	size_file(img, &st);
	return 0;
}

static int open_nbd(struct blk_image *img, const char *uri, bool readonly)
{
	int ret = blk_nbd_connect(uri, readonly, &img->nbd_spare, &img->nbd,
				  img->detail, sizeof(img->detail));

	if (ret < 0)
		return ret;
	img->nbd_uri = strdup(uri);
	if (!img->nbd_uri) {
		blk_image_close(img);
		return -ENOMEM;
	}
	img->nbd_link.uri = img->nbd_uri;
	img->nbd_link.readonly = readonly;
	img->nbd_link.size = img->nbd.size;
	img->nbd_link.multi_conn = img->nbd.multi_conn;
	img->sectors = img->nbd.size >> SECTOR_SHIFT;
	img->tail_ignored = (img->nbd.size & ((1 << SECTOR_SHIFT) - 1)) != 0;
	img->logical_block = 1u << SECTOR_SHIFT;
	img->physical_block = 4096;
	img->discard_granularity = img->nbd.can_trim ? 4096 : 0;
	/* Without multi-conn a flush covers only its own connection. */
	img->max_queues = img->nbd.multi_conn ? 0 : 1;
	return 0;
}

/*
 * The source of a finished move (blk_image_mark_moved()) is not opened
 * again by mistake: its guest's disk lives on in the move's target, and
 * what was written here from now on would be missing there. The mark is
 * removed by @fix followed by @name_len bytes of @name, then @tail.
 */
static int refuse_moved(struct blk_image *img, const char *path,
			const char *dest, const char *fix, const char *name,
			int name_len, const char *tail)
{
	return image_refuse(img->detail, sizeof(img->detail), -ESTALE,
			    "%s was moved to %s by blkbackd; point the disk at "
			    "%s (and the domain's configuration), or, if %s is "
			    "meant to be used again, remove the mark: %s%.*s%s",
			    path, dest, dest, path, fix, name_len, name, tail);
}

/* The longest target's name a mark is read for. */
#define MOVED_TO_MAX 256
#define TOO_LONG "another image (its name is too long to show)"

static int check_moved_file(struct blk_image *img, const char *path)
{
	char dest[MOVED_TO_MAX];
	ssize_t n =
		fgetxattr(img->fd, BLK_MOVED_TO_XATTR, dest, sizeof(dest) - 1);

	if (n < 0 && errno != ERANGE)
		return 0; /* not marked, or no attributes here */
	if (n >= 0)
		dest[n] = '\0';
	return refuse_moved(img, path, n < 0 ? TOO_LONG : dest,
			    "setfattr -x " BLK_MOVED_TO_XATTR " ", path,
			    (int)strlen(path), "");
}

static int check_moved_rbd(struct blk_image *img, const char *target)
{
	char dest[MOVED_TO_MAX];
	/* POOL/IMAGE, as the rbd tool names it. */
	const char *spec = target + strlen("rbd:");
	int ret = blk_rbd_meta_get(img->rbd, BLK_MOVED_TO_KEY, dest,
				   sizeof(dest));

	if (ret < 0 && ret != -ERANGE)
		return 0; /* not marked, or the cluster does not say */
	return refuse_moved(img, target, ret < 0 ? TOO_LONG : dest,
			    "rbd image-meta remove ", spec,
			    (int)strcspn(spec, ":"), " " BLK_MOVED_TO_KEY);
}

static int open_rbd(struct blk_image *img, const char *target, bool readonly,
		    const char *owner)
{
	struct blk_rbd_owner o = { .self = owner,
				   .holder = img->holder,
				   .holder_len = sizeof(img->holder) };
	uint64_t bytes;
	int ret = blk_rbd_open(target, readonly, &o, &img->rbd, &bytes,
			       img->detail, sizeof(img->detail));

	if (ret < 0 && ret != -EBUSY)
		return ret;
	if (ret == 0)
		ret = check_moved_rbd(img, target);
	if (ret == -ESTALE) {
		blk_rbd_close(img->rbd);
		img->rbd = NULL;
		return ret;
	}
	if (ret == 0 && !readonly && !blk_rbd_single_writer(img->rbd))
		img->caps &= ~BLK_CAP_LOCK; /* no exclusive-lock feature */
	img->sectors = bytes >> SECTOR_SHIFT;
	img->tail_ignored = (bytes & ((1 << SECTOR_SHIFT) - 1)) != 0;
	img->logical_block = 1u << SECTOR_SHIFT;
	img->physical_block = 4096;
	/* librbd zeroes what does not cover whole objects. */
	img->discard_granularity = readonly ? 0 : 4096;
	return ret;
}

static int open_null(struct blk_image *img, const char *target)
{
	uint64_t bytes;

	if (blk_null_size(target, &bytes) < 0) {
		snprintf(img->detail, sizeof(img->detail),
			 "a null image is null:SIZE, SIZE in bytes (a whole "
			 "number of 512-byte sectors) or with K, M, G or T");
		return -EINVAL;
	}
	img->null = true;
	img->sectors = bytes >> SECTOR_SHIFT;
	img->logical_block = 1u << SECTOR_SHIFT;
	img->physical_block = 4096;
	img->discard_granularity = 4096;
	return 0;
}

int blk_image_new_backend(struct blk_image *img, struct blk_backend **out)
{
	struct nbd_handle *h = img->nbd_spare;
	int ret;

	if (img->null)
		return blk_backend_null_new(out);
	if (img->rbd)
		return blk_backend_rbd_new(img->rbd, out);
	if (!img->nbd_uri)
		return blk_backend_file_new(img->fd, out);
	/*
	 * The open's connection serves the first queue; each further one (a
	 * multi-conn disk) connects on its worker at its first request.
	 */
	img->nbd_spare = NULL;
	ret = blk_backend_nbd_new(h, &img->nbd, &img->nbd_link, out);
	if (ret < 0)
		blk_nbd_close(h);
	return ret;
}

unsigned int blk_image_caps_of(const char *path)
{
	if (blk_nbd_is_uri(path))
		return BLK_NBD_CAPS;
	if (blk_rbd_is_target(path))
		return BLK_RBD_CAPS;
	if (blk_null_is_target(path))
		return BLK_NULL_CAPS;
	return BLK_FILE_CAPS;
}

/* A file or a block device, opened and locked (blk_image_open()). */
static int open_file(struct blk_image *img, const char *path, bool readonly,
		     enum blk_cache_mode cache, const char *owner)
{
	struct stat st;
	int ret;

	/* Refuse FIFOs and directories before open() can block on them. */
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EINVAL;

	ret = open_image_fd(path, readonly, cache, &img->direct);
	if (ret < 0)
		return ret;
	img->fd = ret;
	img->blockdev = S_ISBLK(st.st_mode);

	ret = check_moved_file(img, path);
	if (ret == 0)
		ret = lock_image(img->fd, readonly);
	if (ret == 0)
		ret = blk_image_refresh_size(img);
	if (ret == -EBUSY) {
		/* Described all the same, and who holds it. */
		blk_image_refresh_size(img);
		describe_holder(img);
		/* A record is believed only where a lock can be remote. */
		if (img->holder_remote && !img->blockdev)
			read_holder(img);
	}
	if (ret < 0) {
		blk_image_close(img);
		return ret;
	}
	if (!readonly && !img->blockdev)
		name_owner(img, owner);
	img->world_readable = fstat(img->fd, &st) == 0 && st.st_mode & S_IROTH;
	return 0;
}

int blk_image_open(struct blk_image *img, const char *path, bool readonly,
		   enum blk_cache_mode cache, const char *owner)
{
	int ret;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->readonly = readonly;
	img->caps = blk_image_caps_of(path);
	if (blk_nbd_is_uri(path))
		ret = open_nbd(img, path, readonly);
	else if (blk_rbd_is_target(path))
		ret = open_rbd(img, path, readonly, owner);
	else if (blk_null_is_target(path))
		ret = open_null(img, path);
	else
		ret = open_file(img, path, readonly, cache, owner);
	if (ret < 0)
		img->caps = 0; /* nothing is open */
	return ret;
}

void blk_image_set_nbd_reconnect(struct blk_image *img, unsigned int timeout_ms,
				 blk_nbd_log_fn *log, void *log_arg)
{
	img->nbd_link.timeout_ms = timeout_ms;
	img->nbd_link.log = log;
	img->nbd_link.log_arg = log_arg;
}

void blk_image_close(struct blk_image *img)
{
	/* Still under its lock: no other writer named itself meanwhile. */
	if (img->owner_named)
		fremovexattr(img->fd, OWNER_XATTR);
	img->owner_named = false;
	img->caps = 0;
	if (img->fd >= 0)
		close(img->fd);
	img->fd = -1;
	if (img->nbd_spare)
		blk_nbd_close(img->nbd_spare);
	img->nbd_spare = NULL;
	free(img->nbd_uri);
	img->nbd_uri = NULL;
	blk_rbd_close(img->rbd);
	img->rbd = NULL;
}

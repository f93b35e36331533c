// SPDX-License-Identifier: MIT
/*
 * Point-in-time copies of an image (image.h, blk_image_snapshot()): a
 * file's by sharing its blocks with a new file, an RBD image's by an RBD
 * snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "libblk/image.h"
#include "libblk/image-internal.h"

/* The filesystem's name, for the operator; "unknown (0x...)" otherwise. */
static const char *fs_name(unsigned long type, char *buf, size_t len)
{
	static const struct {
		unsigned long type;
		const char *name;
	} names[] = {
		{ XFS_SUPER_MAGIC, "xfs" },
		{ BTRFS_SUPER_MAGIC, "btrfs" },
		{ EXT4_SUPER_MAGIC, "ext4 (or ext2/3)" },
		{ TMPFS_MAGIC, "tmpfs" },
		{ NFS_SUPER_MAGIC, "nfs" },
		{ OVERLAYFS_SUPER_MAGIC, "overlayfs" },
		{ F2FS_SUPER_MAGIC, "f2fs" },
		{ SMB2_SUPER_MAGIC, "smb" },
		{ FUSE_SUPER_MAGIC, "fuse" },
		{ 0x2fc12fc1, "zfs" },
		{ 0x7461636f, "ocfs2" },
		{ 0xca451a4e, "bcachefs" },
		{ 0x00c36400, "ceph" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].type == type)
			return names[i].name;
	snprintf(buf, len, "unknown (type 0x%lx)", type);
	return buf;
}

/* The filesystem @fd is on cannot share blocks: say which, and the fix. */
static int cannot_share(int fd, int err, char *why, size_t len)
{
	struct statfs sfs;
	char buf[48];
	const char *name =
		fstatfs(fd, &sfs) == 0
			? fs_name((unsigned long)sfs.f_type, buf, sizeof(buf))
			: "unknown";

	return image_refuse(why, len, -EOPNOTSUPP,
			    "the image is on %s, which cannot share blocks "
			    "between "
			    "files (FICLONE: %s): keep images to snapshot on "
			    "XFS "
			    "made with reflink=1 (the default) or btrfs, or "
			    "copy it while the guest runs (blkbackctl "
			    "snapshot --copy)",
			    name, strerror(-err));
}

static int other_filesystem(const char *dest, char *why, size_t len)
{
	return image_refuse(why, len, -EXDEV,
			    "%s is on another filesystem than the image: a "
			    "snapshot "
			    "shares the image's blocks, so it goes on the same "
			    "filesystem (a directory beside the image)",
			    dest);
}

/*
 * @dest's directory is on @img's filesystem: a clone cannot cross one.
 * Checked before anything is made there; btrfs, whose subvolumes are
 * devices of their own that can share blocks, is left to FICLONE.
 */
static int same_filesystem(const struct blk_image *img, const char *dest,
			   char *why, size_t len)
{
	char dir[4096];
	const char *slash = strrchr(dest, '/');
	struct stat src, dst;
	struct statfs sfs;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - dest), dest);
	if (fstat(img->fd, &src) < 0)
		return image_refuse(why, len, -errno,
				    "cannot stat the image: %s",
				    strerror(errno));
	if (stat(dir[0] ? dir : "/", &dst) < 0)
		return image_refuse(why, len, -errno, "cannot use %s: %s",
				    dir[0] ? dir : "/", strerror(errno));
	if (!S_ISDIR(dst.st_mode))
		return image_refuse(why, len, -ENOTDIR, "%s is not a directory",
				    dir);
	if (fstatfs(img->fd, &sfs) == 0 &&
	    (unsigned long)sfs.f_type == BTRFS_SUPER_MAGIC)
		return 0;
	return src.st_dev == dst.st_dev ? 0 : other_filesystem(dest, why, len);
}

static int snapshot_file(struct blk_image *img, const char *dest, char *why,
			 size_t len)
{
	struct stat st;
	int fd, ret;

	if (dest[0] != '/')
		return image_refuse(why, len, -EINVAL,
				    "%s: give the snapshot's absolute path",
				    dest);
	ret = same_filesystem(img, dest, why, len);
	if (ret < 0)
		return ret;
	if (fstat(img->fd, &st) < 0)
		return image_refuse(why, len, -errno,
				    "cannot stat the image: %s",
				    strerror(errno));
	/*
	 * The writes the guest was answered for are in the file; the clone
	 * shares what the filesystem has, so it must have them all.
	 */
	if (fdatasync(img->fd) < 0)
		return image_refuse(why, len, -errno,
				    "cannot flush the image: %s",
				    strerror(errno));
	fd = image_create_excl(dest, st.st_mode & 07777, "snapshot", why, len);
	if (fd < 0)
		return fd;
	ret = ioctl(fd, FICLONE, img->fd) < 0 ? -errno : 0;
	/* Its metadata too: a snapshot that a crash takes back is none. */
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (ret == 0)
		return 0;
	unlink(dest);
	if (ret == -EXDEV)
		return other_filesystem(dest, why, len);
	if (ret == -EOPNOTSUPP || ret == -EINVAL || ret == -ENOTTY)
		return cannot_share(img->fd, ret, why, len);
	return image_refuse(why, len, ret, "cannot clone the image into %s: %s",
			    dest, strerror(-ret));
}

static int snapshot_rbd(struct blk_image *img, const char *name, char *why,
			size_t len)
{
	int ret;

	if (!name[0] || strpbrk(name, "/@:"))
		return image_refuse(why, len, -EINVAL,
				    "%s: an RBD snapshot's name has no '/', "
				    "'@' or "
				    "':'",
				    name);
	ret = blk_rbd_snapshot(img->rbd, name);
	if (ret < 0)
		return image_refuse(
			why, len, ret, "cannot create RBD snapshot %s: %s%s",
			name, strerror(-ret),
			ret == -EEXIST ? " (one of that name exists)" : "");
	return 0;
}

int blk_image_snapshot(struct blk_image *img, const char *dest, char *why,
		       size_t why_len)
{
	if (img->rbd)
		return snapshot_rbd(img, dest, why, why_len);
	if (img->nbd_uri)
		return image_refuse(why, why_len, -EOPNOTSUPP,
				    "an NBD export belongs to its server: "
				    "snapshot "
				    "it there (qemu-img snapshot, or the "
				    "server's "
				    "own tool)");
	if (img->null)
		return image_refuse(why, why_len, -EOPNOTSUPP,
				    "the null image holds nothing to copy");
	if (img->blockdev)
		return image_refuse(why, why_len, -EOPNOTSUPP,
				    "a block device: snapshot it with what "
				    "made it "
				    "(lvcreate --snapshot, zfs snapshot)");
	return snapshot_file(img, dest, why, why_len);
}

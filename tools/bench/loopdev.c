// SPDX-License-Identifier: MIT
#include "tools/bench/loopdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"

#define ATTACH_TRIES 20 /* others may grab the free device first */
#define RELEASE_WAIT_MS 10000
#define RELEASE_POLL_MS 20

static int configure(int dev_fd, int file_fd, bool direct_io)
{
	struct loop_config cfg;
	struct loop_info64 info;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned int)file_fd;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	if (direct_io)
		cfg.info.lo_flags |= LO_FLAGS_DIRECT_IO;
	if (ioctl(dev_fd, LOOP_CONFIGURE, &cfg) < 0)
		return -errno;
	/* The kernel may quietly fall back to buffered I/O: check. */
	if (ioctl(dev_fd, LOOP_GET_STATUS64, &info) < 0)
		return -errno;
	if (direct_io && !(info.lo_flags & LO_FLAGS_DIRECT_IO)) {
		ioctl(dev_fd, LOOP_CLR_FD, 0);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int try_attach(int ctl, int file_fd, bool direct_io, struct loopdev *out)
{
	int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	int fd, ret;

	if (nr < 0)
		return -errno;
	snprintf(out->path, sizeof(out->path), "/dev/loop%d", nr);
	fd = open(out->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = configure(fd, file_fd, direct_io);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	out->fd = fd;
	return 0;
}

int loopdev_attach(const char *image, bool direct_io, struct loopdev *out,
		   char *why, size_t why_len)
{
	int ctl, file_fd, ret = -EBUSY;

	out->fd = -1;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		ret = -errno;
		snprintf(why, why_len,
			 "no loop devices: /dev/loop-control: %s (load the "
			 "loop module: modprobe loop)",
			 strerror(-ret));
		return ret;
	}
	/* losetup --direct-io opens the backing file O_DIRECT too. */
	file_fd = open(image, O_RDWR | O_CLOEXEC | (direct_io ? O_DIRECT : 0));
	if (file_fd < 0) {
		ret = -errno;
		snprintf(why, why_len, "%s: %s", image, strerror(-ret));
		close(ctl);
		return ret;
	}
	for (int i = 0; i < ATTACH_TRIES && ret == -EBUSY; i++) {
		cleanup_block_signals();
		ret = try_attach(ctl, file_fd, direct_io, out);
		if (!ret)
			cleanup_add_loop(out->fd);
		cleanup_unblock_signals();
	}
	close(file_fd); /* the loop device holds its own reference */
	close(ctl);
	if (ret < 0)
		snprintf(why, why_len,
			 "cannot set up a loop device for %s%s: %s", image,
			 direct_io ? " with direct I/O" : "", strerror(-ret));
	return ret;
}

/* Append decimal @v at @p; no snprintf, which is not signal-safe. */
static char *put_uint(char *p, unsigned int v)
{
	char digits[12];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(digits));
	while (n)
		*p++ = digits[--n];
	return p;
}

/* /sys/dev/block/MAJ:MIN/loop exists while the device has a backing file. */
static void bound_marker(dev_t dev, char *buf)
{
	static const char head[] = "/sys/dev/block/";
	char *p = buf;

	memcpy(p, head, sizeof(head) - 1);
	p = put_uint(p + sizeof(head) - 1, major(dev));
	*p++ = ':';
	p = put_uint(p, minor(dev));
	memcpy(p, "/loop", sizeof("/loop"));
}

void loopdev_release_fd(int fd)
{
	struct timespec poll = { 0, RELEASE_POLL_MS * 1000000L };
	char marker[64];
	struct stat st;
	bool known = fstat(fd, &st) == 0 && S_ISBLK(st.st_mode);

	if (known)
		bound_marker(st.st_rdev, marker);
	ioctl(fd, LOOP_CLR_FD, 0);
	close(fd);
	if (!known)
		return;
	for (int waited = 0; waited < RELEASE_WAIT_MS;
	     waited += RELEASE_POLL_MS) {
		if (access(marker, F_OK) < 0)
			return;
		nanosleep(&poll, NULL);
	}
}

void loopdev_detach(struct loopdev *ld)
{
	if (ld->fd < 0)
		return;
	cleanup_forget_loop(ld->fd);
	loopdev_release_fd(ld->fd);
	ld->fd = -1;
}

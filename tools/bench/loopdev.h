/* SPDX-License-Identifier: MIT */
/*
 * Loop devices for the LOOP arms, set up as Xen's `block` hotplug script
 * does for a file: `losetup DEV FILE`, buffered (the backing file goes
 * through the host page cache), or with direct I/O like
 * `losetup --direct-io=on`. The devices are also marked autoclear, so the
 * kernel detaches them by itself if the benchmark is killed outright.
 */
#ifndef BENCH_LOOPDEV_H
#define BENCH_LOOPDEV_H

#include <stdbool.h>
#include <stddef.h>

struct loopdev {
	int fd; /* holds the device configured */
	char path[32]; /* /dev/loopN */
};

/* Attach @image; -errno with an explanation in @why on failure. */
int loopdev_attach(const char *image, bool direct_io, struct loopdev *out,
		   char *why, size_t why_len);
void loopdev_detach(struct loopdev *ld);

/*
 * Detach the device held by @fd, close @fd, and wait (at most a few
 * seconds) until the kernel has really let it go. The wait matters: a
 * killed guest's io_uring drops its reference to the device from a kernel
 * worker some time after the process is reaped, and autoclear only acts on
 * the last close. Async-signal-safe: the interrupt handler calls it.
 */
void loopdev_release_fd(int fd);

#endif /* BENCH_LOOPDEV_H */

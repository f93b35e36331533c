/* SPDX-License-Identifier: MIT */
/*
 * The block device under the images and its request counters
 * (/sys/dev/block/MAJ:MIN/stat): how long a request spent in the host's
 * block layer and below it, whoever sent it. Against a backend's latency
 * it splits the time the device took from the time the backend added.
 */
#ifndef BENCH_DISKSTAT_H
#define BENCH_DISKSTAT_H

#include <stdint.h>

struct diskstat_dev {
	char path[64]; /* its stat file; "" when the images have no device */
};

/* Read and write requests completed, and the milliseconds they took. */
struct diskstat_sample {
	uint64_t ios;
	uint64_t ms;
};

/*
 * Find the device of the filesystem holding @dir. -ENODEV when it has none
 * with counters (tmpfs, or a filesystem on an anonymous device such as
 * btrfs or overlayfs); @d then reads as no device.
 */
int diskstat_open(struct diskstat_dev *d, const char *dir);
/* -errno, and @s zeroed, when there is no device or its file is unreadable. */
int diskstat_read(const struct diskstat_dev *d, struct diskstat_sample *s);
/*
 * Mean microseconds per request from @a to @b; NaN when none completed, or
 * when all of them took under the counters' resolution (1 ms in all).
 */
double diskstat_us_per_io(const struct diskstat_sample *a,
			  const struct diskstat_sample *b);

#endif /* BENCH_DISKSTAT_H */

// SPDX-License-Identifier: MIT
#include "tools/bench/diskstat.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int diskstat_open(struct diskstat_dev *d, const char *dir)
{
	struct stat st;

	d->path[0] = 0;
	if (stat(dir, &st) < 0)
		return -errno;
	/* Anonymous devices (major 0) have no block device behind them. */
	if (!major(st.st_dev))
		return -ENODEV;
	snprintf(d->path, sizeof(d->path), "/sys/dev/block/%u:%u/stat",
		 major(st.st_dev), minor(st.st_dev));
	if (access(d->path, R_OK) < 0) {
		d->path[0] = 0;
		return -ENODEV;
	}
	return 0;
}

int diskstat_read(const struct diskstat_dev *d, struct diskstat_sample *s)
{
	unsigned long long rd, rd_ms, wr, wr_ms;
	FILE *f;
	int n;

	*s = (struct diskstat_sample){ 0 };
	if (!d->path[0])
		return -ENODEV;
	f = fopen(d->path, "re");
	if (!f)
		return -errno;
	/* Fields (Documentation/block/stat.rst): reads, merges, sectors, ms;
	 * then the same for writes. */
	n = fscanf(f, "%llu %*u %*u %llu %llu %*u %*u %llu", &rd, &rd_ms, &wr,
		   &wr_ms);
	fclose(f);
	if (n != 4)
		return -EINVAL;
	s->ios = rd + wr;
	s->ms = rd_ms + wr_ms;
	return 0;
}

double diskstat_us_per_io(const struct diskstat_sample *a,
			  const struct diskstat_sample *b)
{
	/*
	 * The ticks are whole milliseconds: a run whose few device requests
	 * took under one in all reads 0, which is no time, so NaN too.
	 */
	if (b->ios <= a->ios || b->ms <= a->ms)
		return NAN;
	return (double)(b->ms - a->ms) * 1000.0 / (double)(b->ios - a->ios);
}

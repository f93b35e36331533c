// SPDX-License-Identifier: MIT
/*
 * A disk's I/O limits: its xenstore keys, else the daemon's defaults.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "blkbackd/limits.h"
#include "libblk/xenbus.h"

/* @key of @be, or @def when it is absent. */
static int read_limit(struct xs_handle *xs, const char *be, const char *key,
		      uint64_t def, uint64_t *out, const char **bad)
{
	int ret = xenbus_read_uint(xs, be, key, UINT64_MAX, out);

	if (ret == -ENOENT) {
		*out = def;
		return 0;
	}
	if (ret < 0)
		*bad = key;
	return ret;
}

int limits_read(struct xs_handle *xs, const char *be, const struct options *o,
		struct blk_throttle_limits *out, const char **bad)
{
	struct blk_throttle_limits l;
	int ret;

	ret = read_limit(xs, be, BLK_XENBUS_LIMIT_IOPS, o->limit_iops, &l.iops,
			 bad);
	if (ret == 0)
		ret = read_limit(xs, be, BLK_XENBUS_LIMIT_BPS,
				 (uint64_t)o->limit_bandwidth_mib << 20, &l.bps,
				 bad);
	if (ret == 0)
		*out = l;
	return ret;
}

void limits_describe(const struct blk_throttle_limits *l, char *buf, size_t len)
{
	if (!l->iops && !l->bps)
		snprintf(buf, len, "none");
	else if (!l->bps)
		snprintf(buf, len, "%" PRIu64 " requests/s", l->iops);
	else if (!l->iops)
		snprintf(buf, len, "%" PRIu64 " bytes/s", l->bps);
	else
		snprintf(buf, len,
			 "%" PRIu64 " requests/s, %" PRIu64 " bytes/s", l->iops,
			 l->bps);
}

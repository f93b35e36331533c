/* SPDX-License-Identifier: MIT */
/*
 * Where a disk's I/O limits come from: the keys in its backend directory
 * (libblk/xenbus.h, written by an operator or `blkbackctl limit`), each one
 * absent taking the daemon's default (--limit-iops, --limit-bandwidth-mib,
 * or blkbackd.conf). Main thread.
 */
#ifndef BLKBACKD_LIMITS_H
#define BLKBACKD_LIMITS_H

#include <stddef.h>
#include <xenstore.h>

#include "blkbackd/options.h"
#include "libblk/throttle.h"

/*
 * The limits for the disk at @be. -EINVAL when a key is not a plain
 * number, naming it in *@bad; @out is not touched then.
 */
int limits_read(struct xs_handle *xs, const char *be, const struct options *o,
		struct blk_throttle_limits *out, const char **bad);

/* "500 requests/s, 1048576 bytes/s", or "none", for the log. */
void limits_describe(const struct blk_throttle_limits *l, char *buf,
		     size_t len);

#endif /* BLKBACKD_LIMITS_H */

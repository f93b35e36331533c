/* SPDX-License-Identifier: MIT */
/*
 * A disk's counters and stage times as log lines, for SIGUSR1 and for the
 * summary a disk leaves when it disconnects.
 */
#ifndef BLKBACKD_STATS_LOG_H
#define BLKBACKD_STATS_LOG_H

#include "libblk/stats.h"

/* Log @s for the disk called @name (at info level). */
void stats_log(const char *name, const struct blk_stats *s);

#endif /* BLKBACKD_STATS_LOG_H */

/* SPDX-License-Identifier: MIT */
/*
 * A disk's counters and stage times as log lines, for SIGUSR1 and for the
 * summary a disk leaves when it disconnects.
 */
#ifndef BLKBACKD_STATS_LOG_H
#define BLKBACKD_STATS_LOG_H

#include "blkbackd/log.h"
#include "libblk/stats.h"

/*
 * Log @s for the disk @disk called @name (at info level), with the
 * journal's fields of @disk (log_disk_msg()).
 */
void stats_log(const struct log_disk *disk, const char *name,
	       const struct blk_stats *s);

#endif /* BLKBACKD_STATS_LOG_H */

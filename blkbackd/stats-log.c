// SPDX-License-Identifier: MIT
/*
 * Formatting a disk's counters for the log.
 */
#include <inttypes.h>
#include <stdio.h>

#include "blkbackd/log.h"
#include "blkbackd/stats-log.h"

/*
 * A line about the disk @disk that every caller here names: it carries the
 * disk's journal fields (log_disk_msg()).
 */
#define disk_info(...) log_disk_msg(LOG_INFO, disk, 0, __VA_ARGS__)

static void log_counters(const struct log_disk *disk, const char *name,
			 const struct blk_stats *s)
{
	char line[512];
	int len = 0;

	for (unsigned int op = 0; op < BLK_STAT_NR_OPS; op++)
		len += snprintf(line + len, sizeof(line) - (size_t)len,
				"%s%s %" PRIu64 " (%" PRIu64 " sectors, "
				"%" PRIu64 " error"
				"s)",
				op ? ", " : "", blk_stat_op_name(op),
				s->requests[op], s->bytes[op] / 512,
				s->errors[op]);
	disk_info("%s: %s; %" PRIu64 " rejected, %" PRIu64
		  " waited for buffers, %" PRIu64 " merged",
		  name, line, s->rejected, s->parked_no_buffers, s->merged);
	disk_info("%s: %" PRIu64 " grants mapped (%" PRIu64 " registered with "
		  "io_uring), %" PRIu64 " refused by Xen",
		  name, s->mapped_grants, s->registered_grants,
		  s->grant_map_errors);
}

/* Only requests whose stages were timed (--stage-timing) have these. */
static void log_stages(const struct log_disk *disk, const char *name,
		       const struct blk_stats *s)
{
	char line[512];
	int len = 0;

	if (!s->stage[BLK_STAGE_PREPARE].n)
		return;
	for (unsigned int st = 0; st < BLK_NR_STAGES; st++)
		len += snprintf(line + len, sizeof(line) - (size_t)len,
				"%s%s %.1f/%.1f", st ? ", " : "",
				blk_stage_name(st),
				blk_stage_mean_us(&s->stage[st]),
				blk_stage_p50_us(&s->stage[st]));
	disk_info("%s: stage us mean/p50 over %" PRIu64 " requests: %s", name,
		  s->stage[BLK_STAGE_PREPARE].n, line);
}

void stats_log(const struct log_disk *disk, const char *name,
	       const struct blk_stats *s)
{
	log_counters(disk, name, s);
	log_stages(disk, name, s);
}

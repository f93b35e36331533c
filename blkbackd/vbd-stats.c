// SPDX-License-Identifier: MIT
/*
 * A device's counters: its rings' (asked of their workers, plus those of
 * rings that moved), its host I/O errors, and the whole of it as the
 * control socket and SIGUSR1 show it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "blkbackd/host-errors.h"
#include "blkbackd/stats-log.h"
#include "blkbackd/vbd-internal.h"
#include "blkbackd/worker.h"
#include "libblk/backend-nbd.h" /* blk_nbd_link_read() */
#include "libblk/poll.h" /* blk_now_ns() */

/* The counters of every queue of @v, summed. */
static void vbd_stats(struct vbd *v, struct blk_stats *sum)
{
	*sum = (struct blk_stats){ 0 };
	if (v->moved)
		blk_stats_add(sum, v->moved);
	for (unsigned int q = 0; q < v->nr_queues; q++) {
		struct blk_stats one;

		if (worker_stats(v->queue[q].w, queue_cookie(v, q), &one) == 0)
			blk_stats_add(sum, &one);
	}
}

void vbd_count_host_errors(struct vbd *v)
{
	char *dev;

	if (xenbus_read_str(v->d->xs, v->be, "dev", &dev) == 0) {
		snprintf(v->vdev, sizeof(v->vdev), "%s", dev);
		free(dev);
	}
	if (host_errors_add_disk(v->d->host_errors, v->cookie, QUEUE_MASK,
				 v->fe_domid, v->devid, v->vdev) < 0)
		vbd_log(v, LOG_WARNING, 0,
			"out of memory: its host I/O errors go uncounted");
}

void vbd_log_stats_all(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		const struct log_disk who = vbd_who(v);
		struct blk_stats sum;

		if (!v->nr_queues)
			continue;
		vbd_stats(v, &sum);
		stats_log(&who, v->name, &sum);
	}
}

void vbd_visit_all(struct daemon *d, vbd_visit_fn fn, void *arg)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		struct vbd_info info = {
			.domid = v->fe_domid,
			.devid = v->devid,
			.name = v->name,
			.vdev = v->vdev,
			.image = v->image_path,
			.connected = v->nr_queues > 0 && !v->closing,
			.failed = v->failed,
			.nr_queues = v->nr_queues,
			.link = v->link,
			/* Its sector size is known once the guest connected. */
			.sectors = vbd_image_open(v) && v->sector_size
					   ? vbd_capacity(v)
					   : 0,
			.sector_size = v->sector_size,
			.readonly = vbd_image_open(v) && v->image.readonly,
			.features = v->features,
			.moves = v->moves,
			.paused = v->quiesce != NULL,
			.snapshots = v->snapshots,
		};

		blk_throttle_read(&v->throttle, blk_now_ns(), &info.throttle);
		vbd_stats(v, &info.stats);
		info.nbd = vbd_image_open(v) &&
			   (v->image.caps & BLK_CAP_RECONNECT);
		if (info.nbd)
			blk_nbd_link_read(&v->image.nbd_link.stats,
					  &info.nbd_link);
		info.nr_host_errors = host_errors_counts(
			d->host_errors, v->cookie, info.host_errors);
		fn(&info, arg);
	}
}

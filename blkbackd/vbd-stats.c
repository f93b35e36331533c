// SPDX-License-Identifier: MIT
/*
 * A device's counters: its rings' (asked of their workers, plus those of
 * rings that moved), its host I/O errors, and the whole of it as the
 * control socket and SIGUSR1 show it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "blkbackd/host-errors.h"
#include "blkbackd/stats-log.h"
#include "blkbackd/vbd-internal.h"
#include "blkbackd/vbd-move.h"
#include "blkbackd/worker.h"
#include "libblk/backend-nbd.h" /* blk_nbd_link_read() */
#include "libblk/poll.h" /* blk_now_ns() */

void vbd_stats_sum(struct vbd *v, struct blk_stats *sum)
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

void vbd_read_domain_name(struct vbd *v)
{
	char dir[32], *name;

	snprintf(dir, sizeof(dir), "/local/domain/%" PRIu32, v->fe_domid);
	v->domain[0] = '\0';
	if (xenbus_read_str(v->d->xs, dir, "name", &name) == 0) {
		snprintf(v->domain, sizeof(v->domain), "%s", name);
		free(name);
	}
}

void vbd_log_stats_all(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		const struct log_disk who = vbd_who(v);
		struct blk_stats sum;

		if (!v->nr_queues)
			continue;
		vbd_stats_sum(v, &sum);
		stats_log(&who, v->name, &sum);
	}
}

/*
 * What a device neither connected nor failed waits for, from what the
 * main thread knows of it (no store is read for it): its store, its
 * image, its rings closing, a paced connect, else its guest.
 */
static const char *waiting_for(const struct vbd *v)
{
	if (v->failed || (v->nr_queues > 0 && !v->closing))
		return NULL;
	if (v->store_away[0])
		return v->store_away;
	if (v->closing)
		return "its rings to close";
	switch (v->image_phase) {
	case VBD_IMAGE_OPENING:
		return "its image to open";
	case VBD_IMAGE_AWAITING:
		return "its image, held by the same VM's disk on this host (a "
		       "migration)";
	case VBD_IMAGE_AWAITING_REMOTE:
		return "its image's lock, held by the same VM on another host "
		       "(a migration)";
	case VBD_IMAGE_NONE:
	case VBD_IMAGE_OPEN:
		break;
	}
	if (v->resume_ticks)
		return "its image's lock, held by another process";
	if (v->connect_waits)
		return "its turn to connect: its guest reconnects too often";
	return "its guest to connect (and its hotplug script to report)";
}

void vbd_visit_all(struct daemon *d, vbd_visit_fn fn, void *arg)
{
	for (struct vbd *v = d->vbds; v; v = v->next) {
		struct vbd_info info = {
			.domid = v->fe_domid,
			.devid = v->devid,
			.name = v->name,
			.vdev = v->vdev,
			.domain = v->domain,
			.image = v->image_path,
			.connected = v->nr_queues > 0 && !v->closing,
			.failed = v->failed,
			.waiting_for = waiting_for(v),
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

		vbd_move_info(v, &info.move);

		blk_throttle_read(&v->throttle, blk_now_ns(), &info.throttle);
		vbd_stats_sum(v, &info.stats);
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

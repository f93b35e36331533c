// SPDX-License-Identifier: MIT
/*
 * Snapshots of a running guest's disk (vbd.h, vbd_snapshot()): the image
 * copied by blk_image_snapshot() while the device is quiesced
 * (vbd-quiesce.h), counted and logged with the guest's pause.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkbackd/vbd-internal.h"
#include "blkbackd/vbd-quiesce.h"

struct snapshot_job {
	struct blk_image *img; /* the device's, open while it is quiesced */
	vbd_snapshot_fn *done;
	void *arg;
	char dest[]; /* the copy's path, or the RBD snapshot's name */
};

/* On the quiesce's thread: the image is quiet. */
static int copy_image(void *arg, char *why, size_t why_len)
{
	struct snapshot_job *job = arg;

	/* An RBD snapshot's name comes after its '@' (cannot_copy()). */
	const char *dest = job->img->rbd ? job->dest + 1 : job->dest;

	return blk_image_snapshot(job->img, dest, why, why_len);
}

static double ms_between(uint64_t from_ns, uint64_t to_ns)
{
	return (double)(to_ns - from_ns) / 1e6;
}

static void count(struct vbd *v, int ret, const struct vbd_pause *p)
{
	struct vbd_snapshots *s = &v->snapshots;
	uint64_t pause_ns;

	if (ret < 0 || !p->resumed_ns) {
		s->failed++;
		return;
	}
	pause_ns = p->resumed_ns - p->stopped_ns;
	s->taken++;
	s->paused_ns += pause_ns;
	s->last_pause_ns = pause_ns;
	if (pause_ns > s->max_pause_ns)
		s->max_pause_ns = pause_ns;
}

static void report(struct vbd *v, const struct snapshot_job *job, int ret,
		   const char *why, const struct vbd_pause *p)
{
	if (ret == 0 && p->resumed_ns) {
		vbd_log(v, LOG_NOTICE, 0,
			"snapshot %s taken: the guest paused %.2f ms (%.2f "
			"draining its I/O in flight, %.2f copying, %.2f "
			"resuming)",
			job->dest, ms_between(p->stopped_ns, p->resumed_ns),
			ms_between(p->stopped_ns, p->drained_ns),
			ms_between(p->drained_ns, p->acted_ns),
			ms_between(p->acted_ns, p->resumed_ns));
	} else if (ret == 0) {
		/* Taken, but the device closed before its guest resumed. */
		vbd_log(v, LOG_NOTICE, 0,
			"snapshot %s taken; the guest detached meanwhile",
			job->dest);
	} else {
		vbd_log(v, LOG_WARNING, -ret, "snapshot %s not taken: %s",
			job->dest, why);
	}
}

static void snapshot_done(void *arg, struct vbd *v, int ret, const char *why,
			  const struct vbd_pause *p)
{
	struct snapshot_job *job = arg;
	struct vbd_snapshot_result r = {
		.ret = ret,
		.why = ret < 0 ? why : "",
		.name = v->name,
		.dest = job->dest,
		.pause = *p,
	};

	count(v, ret, p);
	report(v, job, ret, why, p);
	job->done(job->arg, &r);
	free(job);
}

/*
 * Whether @dest fits @v's image: "@NAME" for an RBD image's snapshot, a
 * path for a file's copy; an NBD export's is its server's to take.
 */
static int cannot_copy(const struct vbd *v, const char *dest, char *why,
		       size_t why_len)
{
	bool rbd = vbd_image_open(v) && v->image.rbd;

	if (vbd_image_open(v) && v->image.nbd_uri) {
		snprintf(why, why_len,
			 "%s: an NBD export belongs to its server: snapshot "
			 "it there",
			 v->name);
		return -EOPNOTSUPP;
	}
	if (rbd != (dest[0] == '@')) {
		snprintf(why, why_len, "%s: %s: give %s", v->name, dest,
			 rbd ? "@NAME, the name of the RBD image's snapshot"
			     : "a path for the copy (@NAME is for RBD images)");
		return -EINVAL;
	}
	return 0;
}

int vbd_snapshot(struct daemon *d, uint32_t domid, uint32_t devid,
		 const char *dest, vbd_snapshot_fn *done, void *arg, char *why,
		 size_t why_len)
{
	struct vbd *v = vbd_find(d, ANY_ROOT, domid, devid);
	struct vbd_quiesce_req req = { .act = copy_image,
				       .done = snapshot_done };
	struct snapshot_job *job;
	struct vbd_why no;
	int ret;

	if (!v) {
		snprintf(why, why_len, "no such device");
		return -ENOENT;
	}
	ret = cannot_copy(v, dest, why, why_len);
	if (ret < 0)
		return ret;
	job = calloc(1, sizeof(*job) + strlen(dest) + 1);
	if (!job) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	strcpy(job->dest, dest);
	job->img = &v->image;
	job->done = done;
	job->arg = arg;
	req.arg = job;
	ret = vbd_quiesce(v, &req, &no);
	if (ret < 0) {
		snprintf(why, why_len, "%s: %s", v->name, no.msg);
		free(job);
	}
	return ret;
}

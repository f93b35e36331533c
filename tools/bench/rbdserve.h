/* SPDX-License-Identifier: MIT */
/*
 * The RBD arm's store: tools/ceph/ceph-cluster's one-node Ceph cluster (a
 * monitor and a memory-backed OSD on loopback) in the work directory, with
 * every guest image imported into it, so that blkbackd reaches the same
 * data through its RBD backend (libblk/backend-rbd.c) as the blkbackd arm
 * reaches as files. The ratio of the two is what RBD costs here; on one
 * host the OSD and the monitor share the CPUs with the guests and the
 * daemon, which a real cluster does not. Main thread only.
 */
#ifndef BENCH_RBDSERVE_H
#define BENCH_RBDSERVE_H

#include <limits.h>
#include <stddef.h>

#include "tools/bench/images.h"

struct rbd_store {
	char script[PATH_MAX];
	char dir[PATH_MAX]; /* the cluster's; empty when not started */
	char log[PATH_MAX + 32]; /* what its commands said */
	unsigned int n;
	char **targets; /* per image: rbd:rbd/bench-I:conf=... */
};

/*
 * Start the cluster with @script in @workdir, sized for @im, and import
 * every image of @im. -ENOENT when the arm cannot run here (a Ceph package
 * missing, or no @script), other -errno when it went wrong; why in @why.
 * The cluster is registered for cleanup.
 */
int rbdserve_start(struct rbd_store *st, const char *script,
		   const char *workdir, const struct bench_images *im,
		   char *why, size_t why_len);
/* Stop the cluster, and forget the images. */
void rbdserve_stop(struct rbd_store *st);

#endif /* BENCH_RBDSERVE_H */

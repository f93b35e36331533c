/* SPDX-License-Identifier: MIT */
/*
 * Virtual block devices: one per backend/vbd/<domid>/<devid> directory,
 * driven through the xenbus states by what xenstore says.
 */
#ifndef BLKBACKD_VBD_H
#define BLKBACKD_VBD_H

#include <stdint.h>

#include "blkbackd/daemon.h"

/* Watch tokens. */
#define VBD_TOKEN_BACKEND "backend"
#define VBD_TOKEN_FRONTEND "frontend"
#define VBD_TOKEN_RELEASE "release"

/* Something under backend/vbd changed at @path. */
void vbd_backend_changed(struct daemon *d, const char *path);
/* A frontend's state node at @path changed. */
void vbd_frontend_changed(struct daemon *d, const char *path);
/* A domain died: devices whose frontend is gone are torn down. */
void vbd_domains_released(struct daemon *d);
/* A worker found the ring with @cookie broken by its guest. */
void vbd_ring_broken(struct daemon *d, uint64_t cookie);
/* Re-read every image's size and publish the ones that changed. */
void vbd_resize_all(struct daemon *d);
/* Log every connected disk's counters and stage times (SIGUSR1). */
void vbd_log_stats_all(struct daemon *d);

/*
 * Daemon shutdown: answer in-flight I/O, unmap and unbind every ring and
 * close every image, leaving xenstore as it is so that a restarted daemon
 * resumes the devices.
 */
void vbd_release_all(struct daemon *d);

#endif /* BLKBACKD_VBD_H */

/* SPDX-License-Identifier: MIT */
/*
 * The control socket: a unix stream socket on which each connection sends
 * one request line and gets one JSON document back (blkbackctl(8)).
 *
 *   list                 every device: domain, vdev, image, state and what
 *                        was negotiated; its size (sectors, sector_size)
 *                        null until its guest first connected
 *   stats [DOMID/DEVID]  per-device counters and stage times
 *   log-level [LEVEL]    set the least severe priority logged; answers
 *                        the one in force
 *   resize [DOMID/DEVID] re-read image sizes and publish the changed ones;
 *                        answers each device's old_sectors and sectors
 *   reload               read blkbackd.conf again (blkbackd/reload.h);
 *                        answers the settings "applied" and those whose
 *                        change waits for a restart ("restart_needed")
 *   limit DOMID/DEVID [IOPS BPS]
 *                        set a disk's I/O limits (0: none, -: unchanged;
 *                        kept in its xenstore directory), answer them
 *
 * DOMID and DEVID are numbers: blkbackctl turns names into them. An error
 * is {"error": "..."}, with "bad_request": true when the request itself
 * is wrong (unknown, or an argument no value of which exists).
 *
 * Root-only by default: the socket is created with mode 0600. Served by
 * the main thread, one client at a time, with a short receive timeout so
 * that a stuck client cannot hold the daemon.
 */
#ifndef BLKBACKD_CONTROL_H
#define BLKBACKD_CONTROL_H

struct daemon;

/* Listen on @path (replacing a stale socket). Returns the fd or -errno. */
int control_listen(const char *path);

/* Accept one client on @listen_fd and answer its request. */
void control_serve_one(struct daemon *d, int listen_fd);

#endif /* BLKBACKD_CONTROL_H */

/* SPDX-License-Identifier: MIT */
/*
 * Virtual block devices: one per backend/vbd/<domid>/<devid> directory,
 * driven through the xenbus states by what xenstore says.
 */
#ifndef BLKBACKD_VBD_H
#define BLKBACKD_VBD_H

#include <stdbool.h>
#include <stdint.h>

#include "blkbackd/daemon.h"
#include "blkbackd/host-errors.h"
#include "libblk/stats.h"
#include "libblk/throttle.h"
#include "libblk/xenbus.h"

/* Watch tokens. */
#define VBD_TOKEN_BACKEND "backend"
#define VBD_TOKEN_FRONTEND "frontend"
#define VBD_TOKEN_RELEASE "release"

/*
 * Something under backend/vbd changed at @path; a frontend's state node at
 * @path changed. Both only note which device to look at: a toolstack or a
 * connection writes a dozen nodes at once, and one look at the device
 * after the batch of events (vbd_reconcile_stale) serves them all.
 */
void vbd_backend_changed(struct daemon *d, const char *path);
void vbd_frontend_changed(struct daemon *d, const char *path);
/*
 * A watch of the daemon's fired at @path: routed by its @token (one of
 * the above, or @releaseDomain's) to the devices it concerns. Main thread.
 */
void vbd_watch_fired(struct daemon *d, const char *path, const char *token);
/* Look at every device an event named since the last call. Main thread. */
void vbd_reconcile_stale(struct daemon *d);
/* A domain died: devices whose frontend is gone are torn down. */
void vbd_domains_released(struct daemon *d);
/*
 * Workers closed rings (d->closed_fd was read): each device whose last
 * ring closed moves on (Closed, freed, or offered again).
 */
void vbd_rings_closed(struct daemon *d);
/*
 * Opens of remote images ended (d->opener's fd was readable): each device
 * moves on with its image, or says why its store is away. Main thread.
 */
void vbd_opens_done(struct daemon *d);
/* A worker found the ring with @cookie broken by its guest. */
void vbd_ring_broken(struct daemon *d, uint64_t cookie);
/*
 * Move the ring with @cookie to worker @to (balance.c): its worker stops
 * it as for a restart, leaving what it did not start on the ring, and
 * once it closed vbd_rings_closed() connects it on @to. -EBUSY when the
 * ring cannot move now: its device connects or closes, it moves already,
 * it is on @to, or its image cannot move (no BLK_CAP_MOVE: an NBD disk's,
 * which a move would reconnect to the server). Main thread.
 */
int vbd_move_ring(struct daemon *d, uint64_t cookie, struct worker *to);
/* Whether a vbd_move_ring() has not finished yet. */
bool vbd_rings_moving(const struct daemon *d);
/*
 * Look at every open image file for what an operator did under a running
 * guest: deleted, or cut shorter than the disk the guest sees. Each is
 * logged once per device (again only after it was put right). Main thread.
 */
void vbd_check_images(struct daemon *d);
/* How often the main loop calls vbd_check_images(). */
#define VBD_IMAGE_CHECK_MS 5000
/*
 * A migration between hosts: does a device wait for an image that the
 * same VM's disk on another host holds, or a resumed device for its
 * image's lock? vbd_retry_handovers() looks at each such device again (it
 * takes the image once its holder let it go).
 * Main thread; the main loop calls it every VBD_HANDOVER_RETRY_MS while
 * vbd_awaiting_remote() says so (a device that has waited 10 s is looked
 * at less often).
 */
bool vbd_awaiting_remote(const struct daemon *d);
void vbd_retry_handovers(struct daemon *d);
#define VBD_HANDOVER_RETRY_MS 200

/*
 * A frontend that connects too often (a guest flapping its state) waits
 * for its next connect; vbd_retry_connects() looks at such devices again.
 * Main thread; the main loop calls it every VBD_CONNECT_RETRY_MS while
 * vbd_connects_waiting() says so.
 */
#define VBD_CONNECT_BURST 20u
#define VBD_CONNECT_PER_S 2u
#define VBD_CONNECT_RETRY_MS 250
bool vbd_connects_waiting(const struct daemon *d);
void vbd_retry_connects(struct daemon *d);

/*
 * Write every vbd3 disk's statistics file for xentop again (vbd-xenstat.c);
 * the main loop calls it every VBD_XENSTAT_MS while vbd_xenstat_any()
 * says there is one. Main thread.
 */
void vbd_xenstat_update_all(struct daemon *d);
bool vbd_xenstat_any(void);
#define VBD_XENSTAT_MS 1000
/*
 * Remove the statistics directories (/dev/shm/td3-PID) that daemons which
 * died without cleaning up (SIGKILL) left: those of processes that no
 * longer exist, holding only such files, of this user alone. At start-up.
 */
void vbd_xenstat_sweep(void);

/*
 * Is a device paused (blkbackd/vbd-quiesce.h)? Then the main loop calls
 * vbd_rings_closed() every VBD_QUIESCE_TICK_MS, which ends a pause whose
 * guest's I/O does not drain in time.
 */
bool vbd_quiesce_pending(const struct daemon *d);
#define VBD_QUIESCE_TICK_MS 50

/* Re-read every image's size and publish the ones that changed. */
void vbd_resize_all(struct daemon *d);
/* The same for one device; -ENOENT when there is none. */
int vbd_resize_one(struct daemon *d, uint32_t domid, uint32_t devid);
/*
 * Set the I/O limits of one device (0: none) and write them to its
 * backend directory, where they outlive this daemon; -ENOENT when there
 * is no such device, or -errno from xenstore.
 */
int vbd_set_limits(struct daemon *d, uint32_t domid, uint32_t devid,
		   const struct blk_throttle_limits *l);
/* Read every device's limits again (the defaults changed). */
void vbd_refresh_limits_all(struct daemon *d);

/* What a connected ring pair was negotiated with. */
struct blk_frontend_summary {
	const char *abi; /* NULL until connected */
	unsigned int ring_order;
	bool persistent;
};

/*
 * A device's ring moves between workers (balance.h) since it was attached:
 * how many, and the time its rings served nothing because of them (from
 * each ring's stop on its old worker to its connect on the new one), of
 * which closing (until the main thread saw it closed), and of that its
 * old worker's draining (answering its started I/O) and releasing
 * (unbinding its event channel, and unmapping its ring and grants unless
 * they were kept; struct blk_stats' close). @kept: the moves whose ring
 * and persistent grants stayed mapped (BLK_DISCONNECT_MOVE), so that the
 * new worker did not map them again.
 */
struct vbd_moves {
	uint64_t count;
	uint64_t kept;
	uint64_t paused_ns;
	uint64_t closing_ns;
	uint64_t draining_ns, releasing_ns;
};

/*
 * A pause of a device's guest (blkbackd/vbd-quiesce.h), on CLOCK_MONOTONIC
 * in ns; 0: that step did not come (yet).
 */
struct vbd_pause {
	uint64_t stopped_ns; /* before its first ring was told to stop */
	uint64_t drained_ns; /* every ring closed: nothing in flight */
	uint64_t acted_ns; /* the action (the copy) returned */
	uint64_t resumed_ns; /* its last ring was connected again */
};

/* A device's snapshots since it was attached (vbd-snapshot.c). */
struct vbd_snapshots {
	uint64_t taken, failed;
	/* The pauses of those taken (from stop to resume): all, last, most. */
	uint64_t paused_ns, last_pause_ns, max_pause_ns;
};

/* What a snapshot did, for its requester. */
struct vbd_snapshot_result {
	int ret; /* 0, or -errno */
	const char *why; /* "" on success */
	const char *name; /* "vbd 5/51712 (xvda)" */
	const char *dest;
	struct vbd_pause pause;
};

/* A snapshot ended; main thread. */
typedef void vbd_snapshot_fn(void *arg, const struct vbd_snapshot_result *r);

/*
 * A crash-consistent copy of the disk of @domid/@devid as it is now, at
 * @dest (a file's new path, an RBD snapshot's name): its guest is paused
 * (vbd-quiesce.h), the image copied (blk_image_snapshot()), the guest
 * resumed. 0: @done is called once it ended (successful or not); else
 * -errno with why in @why (no such device, not connected, paused
 * already, an NBD disk) and @done is not called. Main thread.
 */
int vbd_snapshot(struct daemon *d, uint32_t domid, uint32_t devid,
		 const char *dest, vbd_snapshot_fn *done, void *arg, char *why,
		 size_t why_len);

/*
 * A live move of a device's image (vbd-move.h): where the last one since
 * it was attached is, for the control socket.
 */
enum vbd_move_phase {
	VBD_MOVE_NONE, /* none since it was attached */
	VBD_MOVE_STARTING, /* creating DEST, then tracking the writes */
	VBD_MOVE_COPYING, /* passes over what is dirty */
	VBD_MOVE_SWITCHING, /* paused: the rest copied, the image swapped */
	VBD_MOVE_FINISHING, /* a copy paused: the rest copied, DEST flushed */
	VBD_MOVE_SWITCHED, /* ended: the guest is on DEST */
	VBD_MOVE_CANCELLING, /* DEST removed, tracking stopped */
	VBD_MOVE_CANCELLED, /* ended: the guest is on its source */
	VBD_MOVE_FAILED, /* ended: the guest is on its source; see why */
	VBD_MOVE_COPIED, /* a copy ended: DEST is the disk as of its pause */
};

/* Its name in the JSON and the journal: "copying", "switched", ... */
const char *vbd_move_phase_name(enum vbd_move_phase phase);

struct vbd_move_info {
	enum vbd_move_phase phase;
	const char *source, *dest; /* "" with VBD_MOVE_NONE */
	/* Why it failed, or that it does not converge; "" else. */
	const char *why;
	uint64_t total; /* bytes of the image */
	uint64_t copied; /* bytes copied so far, passes summed */
	uint64_t dirty; /* bytes written since they were copied */
	uint64_t bw; /* its rate limit, bytes per second */
	uint64_t rate; /* its last pass's rate, bytes per second; 0: none */
	unsigned int passes; /* ended */
	bool converging; /* false: dirty stopped shrinking */
	bool copy; /* a snapshot --copy: it never switches */
	/* The switch's pause (VBD_MOVE_SWITCHED, _COPIED; else all 0). */
	struct vbd_pause pause;
};

/* One device as the control socket shows it (blkbackctl list/stats). */
struct vbd_info {
	uint32_t domid;
	uint32_t devid;
	const char *name;
	const char *vdev; /* "xvda"; "" until first connected */
	/* Its guest's name (/local/domain/N/name); "" when not read. */
	const char *domain;
	const char *image; /* "" until opened */
	bool connected;
	bool failed;
	/* Neither connected nor failed: what it waits for, for people. */
	const char *waiting_for;
	unsigned int nr_queues;
	struct blk_frontend_summary link;
	uint64_t sectors; /* in sector_size units */
	uint32_t sector_size;
	bool readonly;
	struct blk_backend_features features; /* as offered at InitWait */
	struct blk_stats stats; /* summed over its queues */
	/* The host's I/O errors since it was attached, by op and errno. */
	struct host_error_count host_errors[HOST_ERRORS_MAX_KINDS];
	unsigned int nr_host_errors;
	struct blk_throttle_info throttle; /* its I/O limits, time held */
	struct vbd_moves moves;
	bool paused; /* quiesced now (a snapshot under way) */
	struct vbd_snapshots snapshots;
	struct vbd_move_info move; /* valid while the device is */
	/* An NBD image's connections (libblk/backend-nbd.h); 0 otherwise. */
	bool nbd;
	struct blk_nbd_link_counts nbd_link;
};

typedef void (*vbd_visit_fn)(const struct vbd_info *info, void *arg);

/* Call @fn for every device, in the main thread. */
void vbd_visit_all(struct daemon *d, vbd_visit_fn fn, void *arg);

/* Log every connected disk's counters and stage times (SIGUSR1). */
void vbd_log_stats_all(struct daemon *d);

/*
 * Daemon shutdown: answer in-flight I/O, unmap and unbind every ring and
 * close every image, leaving xenstore as it is so that a restarted daemon
 * resumes the devices.
 */
void vbd_release_all(struct daemon *d);

/*
 * Start-up, once the devices that exist were seen: the records of moves
 * (move-record.h) whose device is gone are settled (an unfinished copy
 * removed, a switched source marked) and removed.
 */
void vbd_move_settle_gone(struct daemon *d);

#endif /* BLKBACKD_VBD_H */

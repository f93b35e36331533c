/* SPDX-License-Identifier: MIT */
/*
 * A device's private structure and what the files that serve it share,
 * one job a file:
 *
 *   vbd.c           the xenbus state machine: reads what xenstore says and
 *                   moves the device; the only caller of vbd_fail() and
 *                   vbd_forget()
 *   vbd-registry.c  the list of devices, their names and their messages
 *   vbd-image.c     opening the image, its locks, a migration's hand-over,
 *                   and what an operator did to an open image
 *   vbd-rings.c     rings on workers: place, disconnect, move, close
 *   vbd-watch.c     watch events routed to devices, and rescans
 *   vbd-limits.c    I/O limits and resize
 *   vbd-stats.c     counters, host errors, what the control socket shows
 *   vbd-xenstat.c   a vbd3 disk's counters where xentop reads them
 *   vbd-move-resume.c  a live move's record, at a restart
 *
 * A leaf that cannot do its part returns -errno and says why in a struct
 * vbd_why; deciding the device's fate (fail it, forget it, wait) is the
 * state machine's. Everything here runs on the main thread unless it
 * says otherwise.
 */
#ifndef BLKBACKD_VBD_INTERNAL_H
#define BLKBACKD_VBD_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "blkbackd/daemon.h"
#include "blkbackd/log.h"
#include "blkbackd/vbd.h"
#include "libblk/engine.h"
#include "libblk/image.h"
#include "libblk/stats.h"
#include "libblk/throttle.h"
#include "libblk/xenbus.h"

/* The longest xenstore path of a device the daemon keeps. */
#define VBD_PATH_MAX 192

/* The longest reason a leaf gives (struct vbd_why). */
#define VBD_WHY_MAX 512

/* One of a device's rings, as the main thread knows it. */
struct vbd_queue {
	struct worker *w; /* serving it */
	struct blk_backend *backend; /* where its I/O goes; ours, lent to w */
	/* As it was connected, to connect it again on another worker. */
	struct blk_conn_params params;
	struct worker *moving_to; /* vbd_move_ring() under way */
	bool quiesced; /* stopped or held by vbd_quiesce() */
	uint64_t move_start_ns; /* when it began, while moving_to is set */
};

/*
 * Where a device is with its image. It changes in one place,
 * vbd_set_image_phase() (vbd-image.c), which refuses any move its table
 * does not allow:
 *
 *   NONE -> OPEN        vbd_open_image(): opened and locked
 *   NONE -> OPENING     a remote store (an NBD export, an RBD image) is
 *                       being opened on an opener thread (opener.h), or
 *                       its store is away and the open is tried again
 *                       after a backoff (vbd_open_remote())
 *   OPENING -> OPEN     the opener's attempt succeeded
 *   OPENING -> NONE     it failed for a reason no retry mends: the
 *                       device fails
 *   OPENING -> AWAITING|AWAITING_REMOTE
 *                       it found the image held by a device of the same
 *                       VM (a migration), as NONE does
 *   NONE -> AWAITING    another device of the same VM here holds it
 *                       writable (a migration's two ends in one host): the
 *                       device is offered with that one's features and
 *                       takes the image once it lets it go
 *   NONE|AWAITING -> AWAITING_REMOTE
 *                       the same VM's disk on another host holds its lock
 *                       (an RBD image's, or a shared file's: a migration
 *                       between hosts): taken once the lock is free, tried
 *                       every VBD_HANDOVER_RETRY_MS at first
 *   AWAITING|AWAITING_REMOTE -> OPEN
 *                       vbd_take_over(): its holder let it go
 *   AWAITING|AWAITING_REMOTE -> NONE
 *                       the take-over failed (someone else has it): the
 *                       device fails
 *
 * A device awaiting a remote store's image also opens it on an opener
 * thread (v->open_job), without leaving its phase.
 *
 * An open image stays open until the device is freed. Whether the device
 * failed, or is to be freed once its rings closed, is not part of this:
 * either can happen in any of these phases.
 */
enum vbd_image_phase {
	VBD_IMAGE_NONE,
	VBD_IMAGE_AWAITING,
	VBD_IMAGE_AWAITING_REMOTE,
	VBD_IMAGE_OPENING,
	VBD_IMAGE_OPEN,
};

/*
 * A device. Main thread only: the workers see its queues' backends and its
 * throttle, lent to them by vbd-rings.c, and nbd_who/nbd_who_name, which
 * vbd_name_for_nbd() sets while no backend is lent.
 */
struct vbd {
	struct vbd *next; /* d->vbds, vbd-registry.c's */
	struct daemon *d;
	uint32_t fe_domid;
	uint32_t devid;
	uint64_t cookie; /* names this device to the workers */
	char name[48]; /* "vbd 5/51712", for messages */
	char vdev[32]; /* "xvda", as xl names it; "" until connected */
	/* Its guest's name, as at its last connect; "" when unreadable. */
	char domain[128];
	/* A vbd3 disk's statistics file for xentop (vbd-xenstat.c), or -1. */
	int xenstat_fd;
	/* The disk in an NBD backend's messages; set while it has none. */
	struct log_disk nbd_who;
	char nbd_who_name[96];
	char be[VBD_PATH_MAX];
	char fe[VBD_PATH_MAX]; /* empty until read */
	char fe_state[VBD_PATH_MAX + 8];

	struct blk_image image;
	enum vbd_image_phase image_phase; /* vbd_set_image_phase() only */
	bool cdrom;
	bool removable;
	bool discard_enable; /* the toolstack's discard-enable */
	struct blk_backend_features features; /* as published at InitWait */
	uint32_t sector_size; /* as published at Connected */
	/* Its rings; nr_queues is 0 (and queue NULL) when it has none. */
	struct vbd_queue *queue;
	unsigned int nr_queues;
	/* The counters of rings that moved, up to their move; or NULL. */
	struct blk_stats *moved;
	/* Its rings' moves since it was attached, and their pauses in all. */
	struct vbd_moves moves;
	/* A vbd_quiesce() under way (vbd-quiesce.h), or NULL. */
	struct vbd_quiesce *quiesce;
	struct vbd_snapshots snapshots; /* vbd-snapshot.c's */
	/* Its last live move (vbd-move.h), under way or ended; or NULL. */
	struct vbd_move *move;
	/*
	 * Queues whose rings are still closing (vbd_disconnect_as()): the
	 * device waits for them, and their counters are summed in @final.
	 */
	unsigned int closing;
	struct blk_stats *final;
	bool forget; /* freed once its rings are closed */
	struct blk_frontend_summary link; /* as negotiated at Connected */
	char image_path[VBD_PATH_MAX];
	bool domain_gone;
	bool failed; /* a fatal error was reported */
	bool warned_deleted; /* vbd_check_images() said so already */
	bool warned_shrunk;
	bool stale; /* a watch event came: look again after this batch */
	/* The tries of an AWAITING_REMOTE image (vbd_retry_handovers()). */
	unsigned int remote_ticks;
	/*
	 * A remote store's open on an opener thread (opener.h): the job in
	 * flight, or NULL; once it ended, its result (open_ret, and the
	 * image in @image) until vbd_open_image() takes it; the attempts in
	 * a row that found the store away, which set the next one's delay;
	 * and why it is away, as BE/error says now ("" while it is not).
	 */
	struct opener_job *open_job;
	bool open_done;
	int open_ret;
	unsigned int open_tries;
	char store_away[VBD_WHY_MAX];
	/* A resumed device's tries of its busy image's lock; 0: none. */
	unsigned int resume_ticks;
	unsigned int root; /* its directory: d->be_root[root] */
	/* Its I/O limits, shared by its queues' rings; see limits.h. */
	struct blk_throttle throttle;
	struct blk_throttle_limits limits; /* in force */
	bool limits_stale; /* its backend changed: read them again */
	bool limits_bad; /* a malformed limit key was reported */
	struct log_limit log_limit; /* vbd_log()'s */
	struct rate connects; /* vbd_connect_due()'s */
	bool connect_waits; /* for vbd_retry_connects() */
};

static inline bool vbd_image_open(const struct vbd *v)
{
	return v->image_phase == VBD_IMAGE_OPEN;
}

/* Offered during a hand-over: the image is taken once its holder let go. */
static inline bool vbd_awaits_image(const struct vbd *v)
{
	return v->image_phase == VBD_IMAGE_AWAITING ||
	       v->image_phase == VBD_IMAGE_AWAITING_REMOTE;
}

/* The size the guest sees, in sectors of v->sector_size (set first). */
static inline uint64_t vbd_capacity(const struct vbd *v)
{
	return v->image.sectors * BLKIF_SECTOR_SIZE / v->sector_size;
}

/* ---- the registry (vbd-registry.c) ---- */

/* Any backend directory, for a device named by domain and number alone. */
#define ANY_ROOT UINT_MAX

/* A queue's cookie is its device's with the queue number in the low byte. */
#define QUEUE_BITS 8
#define QUEUE_MASK ((1ull << QUEUE_BITS) - 1)

static inline uint64_t queue_cookie(const struct vbd *v, unsigned int q)
{
	return v->cookie | q;
}

/* A new device under d->be_root[@root], on d->vbds; NULL without memory. */
struct vbd *vbd_new(struct daemon *d, unsigned int root, uint32_t domid,
		    uint32_t devid);
/* Off d->vbds and freed; its rings are closed and its image is released. */
void vbd_free(struct vbd *v);
/* The device under @root (or ANY_ROOT), or NULL. */
struct vbd *vbd_find(struct daemon *d, unsigned int root, uint32_t domid,
		     uint32_t devid);
/* The device a queue's @cookie names (worker.h), or NULL. */
struct vbd *vbd_by_cookie(struct daemon *d, uint64_t cookie);
/* "vbd" or "vbd3": the last component of d->be_root[@root]. */
const char *vbd_root_kind(const struct daemon *d, unsigned int root);

/* The disk @v as the journal's fields name it; valid while @v is. */
struct log_disk vbd_who(const struct vbd *v);
/*
 * A message about @v, after its name, with the journal's DOMID=, VBD= and
 * VDEV= fields (log_disk_msg()), so that `journalctl DOMID=N` finds every
 * message about a guest's disks; @err is the errno that caused it, or 0.
 * Every message about one device goes through here, and within its
 * log_limit: a guest decides how often most of them come.
 */
void vbd_log(struct vbd *v, int priority, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * May @lines messages about @v at @priority, logged other than through
 * vbd_log(), go out now? Says first how many were held back, if any.
 */
bool vbd_log_pass(struct vbd *v, int priority, unsigned int lines);

/*
 * Why a step failed, in the words vbd_fail() reports: what is wrong and
 * what to do about it (the device's name is added where it is shown).
 */
struct vbd_why {
	char msg[VBD_WHY_MAX];
};

/* Say why in @why; returns @err (a -errno), for `return vbd_why(...)`. */
int vbd_why(struct vbd_why *why, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- the state machine (vbd.c) ---- */

/* The device's backend directory is gone (a rescan saw it): forget it. */
void vbd_directory_gone(struct vbd *v);
/*
 * Queue @q's ring closed for good (@final: its counters, or NULL), as
 * vbd_rings_closed() takes it: after the last, the device moves on (and
 * may be freed). @v may be NULL (a device gone).
 */
void vbd_ring_ended(struct daemon *d, struct vbd *v, unsigned int q,
		    const struct blk_stats *final);
/* A ring of @v could not be connected again: the device fails, @why. */
void vbd_ring_lost(struct vbd *v, const char *why);

/* ---- the image (vbd-image.c) ---- */

/*
 * Open the image for InitWait, unless it is open or awaited: 0 when it is
 * open or a device of the same VM holds it (vbd_awaits_image(): offered
 * with that device's features, taken at connect); else -errno and @why.
 */
int vbd_offer_image(struct vbd *v, struct vbd_why *why);
/*
 * Have the image open to connect: 0 when it is. -EAGAIN while a hand-over
 * still waits for its holder, vbd_awaits_image() then still true (the
 * holder's release, or vbd_retry_handovers(), makes @v stale again); else
 * -errno and @why, and vbd_awaits_image() is false. A daemon resuming a
 * connected device whose image is locked gets -EAGAIN too, for up to
 * RESUME_LOCK_WAIT_MS (its predecessor's I/O in flight), v->resume_ticks
 * then set, while vbd_retry_handovers() makes it stale; then -EBUSY and
 * @why, and v->resume_ticks is 0.
 */
int vbd_reopen_image(struct vbd *v, struct vbd_why *why);
/*
 * Both of the above return -EINPROGRESS while a remote store's image is
 * opened on an opener thread: the device is made stale again when the
 * attempt ends. With @why set, the store is away (not reached, or no
 * answer in time): @why says so and when it is tried again, for the
 * device's error node.
 */
/*
 * Close the image (if open) and wake any device waiting to take it; an
 * open on an opener thread is cancelled.
 */
void vbd_close_image(struct vbd *v);
/* The same at shutdown: quietly, and no device waits for it. */
void vbd_drop_image(struct vbd *v);
/*
 * Name @v for its NBD connections' messages, which come from worker
 * threads: only while @v lends no backend.
 */
void vbd_name_for_nbd(struct vbd *v);

/* ---- a live move across a restart (vbd-move-resume.c) ---- */

/*
 * The image to open for @v, whose params node names @params: @params, or
 * the image its move's record (move-record.h) says is the guest's disk,
 * copied into @buf (VBD_PATH_MAX bytes). Before anything opens an image.
 */
const char *vbd_move_image_path(struct vbd *v, const char *params, char *buf);
/*
 * @v opened that image: a move abandoned by a restart loses its copy and
 * record; a switched one's source gets its mark if it lacks it. Logged.
 */
void vbd_move_opened(struct vbd *v, const char *params);
/*
 * A move of @v ended without a switch (cancelled, failed, or abandoned by
 * a restart): its record is left as a device at rest needs it. Removed
 * when @v serves the image its params node names; else (the disk was
 * moved before) MOVE_SWITCHED from that image to the one @v serves, so
 * that a restart still finds it. 0 or -errno (logged).
 */
int vbd_move_record_rest(struct vbd *v);

/* ---- rings on workers (vbd-rings.c) ---- */

/*
 * Lower what @v offers (v->features) until any choice within it, queues
 * times ring pages, fits --max-ring-pages-per-disk: fewer queues first,
 * a smaller ring only when one ring alone would not fit. A frontend that
 * asks for more than the offer is refused (blk_xenbus_read_frontend()).
 * Not for a device resumed connected: a restart (an upgrade, a new cap)
 * does not take rings away from a running guest; the mapping budget
 * still pays for them.
 */
void vbd_cap_rings(struct vbd *v);

/*
 * May @v connect its rings now? A frontend that connects more often than
 * VBD_CONNECT_BURST at once and VBD_CONNECT_PER_S a second after (each
 * connect maps, binds and logs on the main thread) waits: false, and
 * vbd_retry_connects() looks at it again.
 */
bool vbd_connect_due(struct vbd *v);

/*
 * Connect the frontend's rings, each on the worker with the fewest, their
 * backends lent to it. On failure -errno and @why (-EDQUOT: the grant
 * mapping budget cannot pay for a ring); the rings connected before it
 * stay (v->nr_queues), for vbd_disconnect() to close.
 */
int vbd_connect_queues(struct vbd *v, const struct blk_frontend *fe,
		       struct vbd_why *why);
/*
 * Ask every ring's worker to close it (@mode: blk_disconnect_mode) and
 * return at once; v->closing counts the rings not closed yet, which
 * vbd_queue_closed() takes one by one.
 */
void vbd_disconnect_as(struct vbd *v, enum blk_disconnect_mode mode);
/* The guest is going away: what was not started is answered as failed. */
void vbd_disconnect(struct vbd *v);
/*
 * Queue @q's ring closed (@final: its counters, or NULL): its backend goes.
 * True after the last, when the device has no ring left.
 */
bool vbd_queue_closed(struct vbd *v, unsigned int q,
		      const struct blk_stats *final);
/*
 * Queue @q's ring, moving (vbd_move_ring()), closed on its old worker:
 * connect it on the new one with the mappings it kept (@kept, taken
 * whatever happens). On failure -errno and @why: the ring is then on no
 * worker, and vbd_disconnect() finds it gone.
 */
int vbd_ring_moved(struct vbd *v, unsigned int q, const struct blk_stats *final,
		   struct blk_handover *kept, struct vbd_why *why);
/*
 * Connect queue @q's ring again on its worker (v->queue[q].w) with a new
 * backend and the mappings it kept (@kept, taken whatever happens), as
 * after a move. 0 or -errno; on failure the ring is on no worker.
 */
int vbd_ring_reconnect(struct vbd *v, unsigned int q,
		       struct blk_handover *kept);
/* The same after a pause (vbd-quiesce.h), with the reason in @why. */
int vbd_ring_resume(struct vbd *v, unsigned int q, struct blk_handover *kept,
		    struct vbd_why *why);
/* Keep a closed ring's counters: the disk's totals must not go back. */
void vbd_keep_moved_stats(struct vbd *v, const struct blk_stats *final);
/* Shutdown: close every ring and wait for the workers to have closed it. */
void vbd_close_all_rings(struct daemon *d);

/* ---- statistics (vbd-stats.c) ---- */

/*
 * Count and log the host's I/O errors on @v's rings under the name xl
 * gives it (the backend's dev node, kept in v->vdev). Before it connects.
 */
void vbd_count_host_errors(struct vbd *v);

/*
 * Read the name of @v's guest (/local/domain/N/name, as the toolstack
 * wrote it) into v->domain, for the metrics: once per connect, since a
 * guest can be renamed, and never per scrape. A driver domain that may
 * not read it leaves it "".
 */
void vbd_read_domain_name(struct vbd *v);

/* The counters of every queue of @v, summed (asks each one's worker). */
void vbd_stats_sum(struct vbd *v, struct blk_stats *sum);

/* ---- what xentop reads (vbd-xenstat.c) ---- */

/*
 * A backend/vbd3 disk that connected: write its kthread-pid node and its
 * statistics file, as tapdisk3 keeps them for libxenstat. Nothing for a
 * backend/vbd disk (libxenstat reads xen-blkback's sysfs for those).
 */
void vbd_xenstat_publish(struct vbd *v);
/* Remove @v's statistics file, if any (vbd_free()). */
void vbd_xenstat_remove(struct vbd *v);

/* ---- limits (vbd-limits.c) ---- */

/* Read @v's I/O limits again (its backend changed) and apply them. */
void vbd_refresh_limits(struct vbd *v);

/* ---- watches (vbd-watch.c) ---- */

/*
 * A device directory under @root was named by an event: known or made
 * (if its state node exists), it is looked at after this batch.
 */
void vbd_device_seen(struct daemon *d, unsigned int root, uint32_t domid,
		     uint32_t devid);

#endif /* BLKBACKD_VBD_INTERNAL_H */

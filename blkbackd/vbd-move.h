/* SPDX-License-Identifier: MIT */
/*
 * A live move of a running guest's disk to a new image (blkbackctl move):
 *
 *   start   refused unless it can work (vbd_move_start()); then, on a
 *           thread of its own, DEST is created (blk_image_create_copy())
 *           and the move recorded (move-record.h, MOVE_COPYING): in that
 *           order, so that a restart removes only a DEST a record proves
 *           a move made
 *   track   a pause (vbd-quiesce.h) with no action, whose hook gives
 *           every ring a dirty map with every chunk marked: from the
 *           resume on, every write the guest makes is tracked
 *   copy    the thread takes the dirty chunks pass after pass, copies
 *           them in runs of up to BLK_COPY_MAX at most @bw bytes a
 *           second, until what is dirty could be copied within
 *           VBD_MOVE_SWITCH_MS at the rate the last pass copied (the
 *           second pass at the earliest: the first one's long runs say
 *           nothing of how fast the guest's scattered writes copy)
 *   switch  a pause whose action copies the rest, flushes DEST, records
 *           MOVE_SWITCHED and marks the source moved; its hook swaps the
 *           device's image for DEST's and drops the map, so that the
 *           guest's next request goes to DEST; the thread closes the old
 *           image (which may block, for RBD)
 *
 * Until the switch the source is authoritative: a cancel or a failure
 * removes DEST, sets the record as the disk at rest needs it
 * (vbd_move_record_rest(): gone, or naming the image an earlier move left
 * the disk on), and a pause drops the map; a detach removes DEST and the
 * record; a daemon that stops under a live guest keeps both for the next
 * one (vbd-move-resume.c). After it DEST is, and the record says so until
 * the device is detached; the disk may move on from there.
 *
 * A copy (vbd_move_copy(), blkbackctl snapshot --copy) is a move that
 * never switches: the same start, record (MOVE_COPYING), tracking and
 * passes; its last pause's action copies the rest and flushes DEST, so
 * that DEST is the disk as of that pause (crash-consistent), and skips
 * the rest: it records nothing as switched, marks nothing, and its hook
 * only drops the map, the device staying on its image. The thread then
 * closes DEST, and the main thread sets the record as the disk at rest
 * needs it, as after a cancel (a finished copy leaves none of its own)
 * before it answers. Until then it ends as an unswitched move does: a
 * cancel, failure or detach removes DEST, a restart too (MOVE_COPYING).
 *
 * Threads: everything declared here is the main thread's. The copier
 * thread touches the device's image (its fd or RBD handle, usable from any
 * thread), DEST, the map and its own state under its lock, never the
 * daemon's; it wakes the main thread through d->closed_fd, on which
 * vbd_rings_closed() calls vbd_move_run().
 */
#ifndef BLKBACKD_VBD_MOVE_H
#define BLKBACKD_VBD_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blkbackd/vbd.h"

struct vbd;
struct blk_dirty;

/*
 * The default rate limit, bytes a second: 64 MiB/s is a small share of a
 * local SSD's bandwidth (a tenth or less) and of a 10 GbE link to a Ceph
 * cluster (a twentieth), which the guest keeps; a 100 GiB disk moves in
 * under half an hour.
 */
#define VBD_MOVE_DEFAULT_BW (64ull << 20)

/* The switch is asked for once what is dirty is copied within this. */
#define VBD_MOVE_SWITCH_MS 40

/*
 * The smallest chunk the dirty map tracks, in bytes: a page, the unit of
 * most guests' writes. A random 4 KiB write then costs the copy 4 KiB,
 * not a larger chunk: with 64 KiB chunks a guest writing 2000 random
 * pages a second over a 1 GiB disk dirtied 500 MiB a pass, which the
 * default rate never caught up with; with pages it converges in three
 * passes. The map grows its chunks so that it stays within 4 MiB: pages
 * up to 128 GiB disks.
 */
#define VBD_MOVE_MIN_CHUNK 4096u

/*
 * The move started (@ret 0: DEST exists and the guest's writes are
 * tracked) or could not (@ret -errno, @why). Main thread; once per move.
 */
typedef void vbd_move_started_fn(void *arg, int ret, const char *why);

/*
 * Move the image of @domid/@devid to @dest (a new file's absolute path,
 * or an RBD target), copying at most @bw bytes a second (0:
 * VBD_MOVE_DEFAULT_BW). 0: @started is called later; else -errno and why
 * in @why (no such device, not connected, read-only, an NBD disk, paused
 * or moving already, no state directory) and it is not.
 */
int vbd_move_start(struct daemon *d, uint32_t domid, uint32_t devid,
		   const char *dest, uint64_t bw, vbd_move_started_fn *started,
		   void *arg, char *why, size_t why_len);

/*
 * A copy ended (vbd_move_copy()): @r as a snapshot's (its pause the last
 * one), @copied the bytes its passes and that pause copied; or @r->ret
 * -errno, DEST removed. Main thread; once per copy.
 */
typedef void vbd_move_copied_fn(void *arg, const struct vbd_snapshot_result *r,
				uint64_t copied);

/*
 * Copy the image of @domid/@devid to @dest as vbd_move_start() would move
 * it, but without switching (above). 0: @done is called once it ended;
 * else -errno and why in @why, for the same refusals.
 */
int vbd_move_copy(struct daemon *d, uint32_t domid, uint32_t devid,
		  const char *dest, uint64_t bw, vbd_move_copied_fn *done,
		  void *arg, char *why, size_t why_len);

/*
 * Cancel the move of @domid/@devid: DEST goes, the guest stays on its
 * source. 0 once asked (the move ends soon after); -errno and @why when
 * there is none under way, or it is switching (it ends in a moment).
 */
int vbd_move_cancel(struct daemon *d, uint32_t domid, uint32_t devid, char *why,
		    size_t why_len);

/* Log, switch or end what the copier threads asked for. */
void vbd_move_run(struct daemon *d);

/* Whether a move waits for a tick (vbd_move_run() every tick then). */
bool vbd_move_pending(const struct daemon *d);

/* The last move of @v, for vbd_visit_all(); valid while @v is. */
void vbd_move_info(struct vbd *v, struct vbd_move_info *out);

/*
 * The map a ring of @v that connects now must mark, or NULL: the
 * connects of a guest that reconnects its rings during a move.
 */
struct blk_dirty *vbd_move_map(const struct vbd *v);

/*
 * @v closes (its rings are closed): a move under way stops (its thread is
 * joined: at most one run of copying). @detached: the guest's disk is
 * gone: DEST is removed unless it switched, and the disk's record in any
 * case, also one a restart resumed it from; else (the daemon stops) both
 * stay for the next daemon.
 */
void vbd_move_end(struct vbd *v, bool detached);

#endif /* BLKBACKD_VBD_MOVE_H */

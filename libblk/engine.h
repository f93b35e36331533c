/* SPDX-License-Identifier: MIT */
/*
 * The I/O engine: one io_uring and one event-channel handle serving any
 * number of connected rings, with a grant-table handle it may share with
 * the process's other engines.
 *
 * An engine belongs to one thread, which creates it and runs it; nothing
 * in it is locked. Every function here is called on that thread (but for
 * the shared grant handle's and blk_handover_release(), which say so), and
 * the callbacks in blk_engine_ops run on it too: from blk_engine_run(),
 * and conn_closed() also from blk_engine_disconnect().
 *
 * Each pass of blk_engine_run() consumes the requests available on the
 * notified rings, up to a budget per ring (32 requests or 1024 segments,
 * so that one deep ring cannot push the others' requests behind all of
 * its own; a ring with more is served again in the next pass, which
 * starts one ring further on), grant-copies the data of all of them in
 * one call, hands their I/O to each connection's backend
 * (libblk/backend.h; the file backend's SQEs all go in one io_uring
 * submit), and pushes each ring's responses once.
 */
#ifndef LIBBLK_ENGINE_H
#define LIBBLK_ENGINE_H

#include <stdint.h>
#include <xengnttab.h>

#include "libblk/backend.h"
#include "libblk/blkif_abi.h"
#include "libblk/budget.h"
#include "libblk/dirty.h"
#include "libblk/request.h"
#include "libblk/stats.h"
#include "libblk/throttle.h"

struct blk_engine;
struct blk_conn;
/* A ring's mappings, kept across a move: see BLK_DISCONNECT_MOVE. */
struct blk_handover;

struct blk_conn_params {
	uint32_t domid; /* the frontend's domain */
	uint32_t ring_refs[BLK_MAX_RING_PAGES]; /* the shared ring's pages */
	unsigned int ring_order;
	uint32_t remote_port; /* the frontend's event channel */
	enum blkif_abi abi;
	/* Where the I/O goes; borrowed until conn_closed(). */
	struct blk_backend *backend;
	struct blk_limits limits;
	bool persistent; /* both ends offered feature-persistent */
	/*
	 * The disk's I/O limits, shared with its other queues; NULL: none.
	 * Borrowed until conn_closed(); its limits may change meanwhile.
	 */
	struct blk_throttle *throttle;
	/*
	 * Where the bytes of every write, write-barrier and discard request
	 * are marked (libblk/dirty.h) when its I/O completed, whatever its
	 * result (a failed write may have changed part of its range), before
	 * its answer is published; NULL: none. Borrowed until conn_closed().
	 * A live move sets it by connecting the rings anew.
	 */
	struct blk_dirty *dirty;
	void *owner; /* handed back to the callbacks; never dereferenced */
	/*
	 * The same ring's mappings from another engine sharing this one's
	 * grant handle (BLK_DISCONNECT_MOVE), used instead of mapping it
	 * anew; NULL: map it. blk_engine_connect() takes it, whatever it
	 * returns.
	 */
	struct blk_handover *handover;
};

struct blk_engine_ops {
	/* A file descriptor registered with blk_engine_watch_fd() is ready. */
	void (*fd_ready)(void *arg, uint64_t tag);
	/*
	 * The guest broke the ring protocol; the connection takes no more
	 * requests. The owner should disconnect it.
	 */
	void (*conn_broken)(void *arg, void *owner, int err);
	/*
	 * A disconnect finished: in-flight I/O was answered, the ring is
	 * unmapped and the event channel unbound. The connection is gone;
	 * @final holds its counters (as blk_engine_conn_stats()) at the end.
	 * After BLK_DISCONNECT_MOVE, @kept holds the ring's mappings instead
	 * (NULL when they could not be kept: the ring was unmapped); the
	 * callee owns it (blk_engine_connect() or blk_handover_release()).
	 */
	void (*conn_closed)(void *arg, void *owner,
			    const struct blk_stats *final,
			    struct blk_handover *kept);
	/*
	 * The host failed an I/O the guest asked for (@err: -EIO, -ENOSPC, a
	 * failed sync...): the guest gets an error answer; this is for the
	 * operator's log and counters. @op is the blkif operation. Called once
	 * per host I/O (a merged I/O stands for several requests). Optional.
	 */
	void (*host_error)(void *arg, void *owner, uint8_t op, int err);
};

/*
 * The grant-table handle the engines of one process share, so that a ring
 * mapped by one engine can be served and unmapped by another
 * (BLK_DISCONNECT_MOVE). It may be used from any thread: the kernel's
 * gntdev keeps its own state under its lock, and libxengnttab keeps none.
 * Returns NULL with errno set. Close it after the last engine using it is
 * destroyed and every handover released.
 */
xengnttab_handle *blk_grants_open(void);
void blk_grants_close(xengnttab_handle *xgt);

/*
 * @xgt: the process's shared grant handle (borrowed), or NULL for one of
 * the engine's own (its rings cannot then move to another engine).
 */
int blk_engine_create(struct blk_engine **out, xengnttab_handle *xgt,
		      const struct blk_engine_ops *ops, void *arg);
/* All connections must be closed first. */
void blk_engine_destroy(struct blk_engine *e);

/* Call fd_ready(tag) once when @fd becomes readable. */
int blk_engine_watch_fd(struct blk_engine *e, int fd, uint64_t tag);

/*
 * Map the ring, bind the event channel and start serving. Returns 0 or
 * -errno (for instance -EINVAL for a ring grant the guest does not offer).
 */
int blk_engine_connect(struct blk_engine *e, const struct blk_conn_params *p,
		       struct blk_conn **out);

enum blk_disconnect_mode {
	/*
	 * The guest is going away: requests not yet started are answered
	 * with an error.
	 */
	BLK_DISCONNECT_CLOSE,
	/*
	 * The daemon stops and the guest stays: requests not yet started
	 * are left unanswered on the ring, where the next daemon finds and
	 * serves them (answers are published in ring order, so they are
	 * exactly the ones past rsp_prod). The guest sees a pause.
	 */
	BLK_DISCONNECT_STOP,
	/*
	 * The ring moves to another engine of this process: as STOP, but
	 * the ring and its persistent grants stay mapped and go to
	 * conn_closed()'s @kept, for blk_engine_connect() on the other
	 * engine. Only its event channel is bound anew there. Without a
	 * shared grant handle it is STOP.
	 */
	BLK_DISCONNECT_MOVE,
};

/*
 * Stop taking requests on @c; conn_closed() follows once the I/O it
 * started has completed and been answered (possibly from within this
 * call).
 */
void blk_engine_disconnect(struct blk_engine *e, struct blk_conn *c,
			   enum blk_disconnect_mode mode);

/*
 * Unmap a ring kept for a move that will not happen. Any thread; the
 * grant handle it was mapped with must still be open.
 */
void blk_handover_release(struct blk_handover *h);

/*
 * Change the capacity of a live connection (online resize). Requests
 * already checked against the old size complete as they were.
 */
void blk_engine_resize(struct blk_engine *e, struct blk_conn *c,
		       uint64_t sectors);

/*
 * Take per-request stage times (see libblk/stats.h) from now on, or stop.
 * Off by default; costs a few clock reads per pass when on.
 */
void blk_engine_set_timing(struct blk_engine *e, bool on);

/*
 * The clock the requests' busy time (struct blk_stats' time_ns) is read
 * from, at most three times a pass: CLOCK_MONOTONIC with @precise, or by
 * default CLOCK_MONOTONIC_COARSE, which the vDSO serves without a system call
 * on every clock source but which moves once a tick. Say precise only where
 * CLOCK_MONOTONIC is a vDSO read too. Stage timing reads it anyway.
 */
void blk_engine_set_precise_clock(struct blk_engine *e, bool precise);

/*
 * Busy-poll rings and completions for up to @max_us microseconds before
 * sleeping, adaptively (see libblk/poll.h); 0 turns polling off.
 */
void blk_engine_set_poll(struct blk_engine *e, unsigned int max_us);

/*
 * What one ring may hold, and the budget every engine of the process
 * shares (see libblk/budget.h); applied to rings connected from now on.
 */
struct blk_memory_limits {
	unsigned int max_pgrants; /* persistent grants mapped per ring */
	unsigned int max_bounce_pages; /* bounce pages per ring */
	struct blk_budget *budget; /* bounce pages; NULL: no host-wide budget */
	/*
	 * Grant mappings of all rings, their own pages (paid first) and their
	 * persistent grants; NULL: no host-wide budget.
	 */
	struct blk_budget *grant_budget;
};

/* Defaults: xen-blkback's 1056 grants per ring, 4 MiB of bounce pages. */
#define BLK_DEFAULT_MAX_PGRANTS 1056u
#define BLK_DEFAULT_MAX_BOUNCE_PAGES 1024u
/*
 * Grant mappings of all rings together, ring pages and persistent
 * grants: half of the 262,144 mappings dom0's maptrack holds by default
 * (Xen's gnttab_max_maptrack_frames, 1024 pages of 256), leaving the rest
 * to the kernel's own backends and other mappers.
 */
#define BLK_DEFAULT_MAX_MAPPED_GRANTS 131072u

void blk_engine_set_memory(struct blk_engine *e,
			   const struct blk_memory_limits *lim);

/*
 * Keep each ring's answer journal (libblk/journal.h) in @dir, which must
 * outlive this process and stay the same for its successor; NULL keeps
 * none. @dir is borrowed: it must stay valid while the engine lives.
 */
void blk_engine_set_state_dir(struct blk_engine *e, const char *dir);

/* A copy of @c's counters and stage times since it connected. */
void blk_engine_conn_stats(const struct blk_conn *c, struct blk_stats *out);

/* Number of live connections. */
unsigned int blk_engine_nr_conns(const struct blk_engine *e);

/* Wait for work and do one pass. Returns 0 or -errno. */
int blk_engine_run(struct blk_engine *e);

#endif /* LIBBLK_ENGINE_H */

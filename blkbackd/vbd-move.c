// SPDX-License-Identifier: MIT
/*
 * A live move of a running guest's disk (vbd-move.h): a copier thread,
 * its passes over the dirty map, and the pauses that start tracking the
 * guest's writes, stop it, and switch the device to the new image.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blkbackd/move-record.h"
#include "blkbackd/vbd-internal.h"
#include "blkbackd/vbd-move.h"
#include "blkbackd/vbd-quiesce.h"
#include "libblk/dirty.h"
#include "libblk/image-copy.h"
#include "libblk/poll.h" /* blk_now_ns() */

/* Passes in a row in which what is dirty did not shrink: not converging. */
#define STALLED_PASSES 5
/* Switches that could not pause the guest in time before it gives up. */
#define SWITCH_TRIES 3
/*
 * The shortest pass: a guest that writes a little all the time gets its
 * chunks copied in batches, and the journal a bounded number of passes.
 */
#define MIN_PASS_MS 200
/* The passes logged: the first ones, then every LOG_EVERY_PASSES. */
#define LOGGED_PASSES 20
#define LOG_EVERY_PASSES 50

/* What the copier thread asks of the main thread (under lock). */
enum ask {
	ASK_NONE,
	ASK_TRACK, /* DEST exists: give the rings the map */
	ASK_SWITCH, /* what is dirty is small: switch */
	ASK_END, /* the thread is done: join it, drop the map */
};

/* What the main thread answers (under lock). */
enum told {
	TOLD_NONE,
	TOLD_GO, /* the map is on the rings, or a switch did not run */
	TOLD_SWITCHED, /* the guest is on DEST: close the old image, end */
	TOLD_STOP, /* cancelled or failed: remove DEST (unless kept), end */
};

struct vbd_move {
	/* The main thread's. */
	pthread_t thread;
	bool thread_live; /* created and not joined */
	vbd_move_started_fn *started; /* NULL once called */
	vbd_move_copied_fn *copied_fn; /* a copy's; NULL once called */
	void *started_arg; /* for either */
	bool tracking; /* the rings have the map */
	bool detaching; /* a pause to drop the map is under way */
	bool ended; /* ASK_END was handled: the thread is joined */
	unsigned int switch_tries;
	unsigned int logged_passes; /* the passes the journal has */
	bool said_stalled;
	char mark_why[VBD_WHY_MAX]; /* the source could not be marked */

	/* Set before the thread starts, then read-only. */
	struct daemon *d;
	struct blk_image *src; /* &v->image: its fd stays while we run */
	uint32_t domid, devid;
	uint64_t bw;
	bool copy; /* never switches (vbd-move.h) */
	char source[VBD_PATH_MAX], dest[VBD_PATH_MAX];
	const char *state_dir;
	enum blk_cache_mode cache;

	/* The thread's, and the switch action's while it waits. */
	struct blk_image dst;
	bool created; /* by this move: it may remove it */
	bool switched; /* by the switch's hook: DEST is the device's */
	bool dst_open;
	struct blk_image old; /* the source, to close after the switch */
	void *buf; /* BLK_COPY_MAX, aligned */
	struct blk_dirty *map;
	uint64_t next_ns; /* the rate limit: no copy begins before */
	uint64_t copy_ns; /* time spent copying, not waiting */
	uint64_t best_dirty; /* the fewest dirty bytes after a pass */
	unsigned int stalled;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under lock. */
	enum ask ask;
	enum told told;
	bool stop; /* cancelled, failed or the device closes */
	bool keep; /* with stop: the daemon stops, DEST and record stay */
	enum vbd_move_phase phase;
	int ret;
	char why[VBD_WHY_MAX];
	uint64_t copied, pass_rate;
	unsigned int passes;
	bool converging;
	struct vbd_pause pause;
	uint64_t total;
};

static const char *const phase_names[] = {
	[VBD_MOVE_NONE] = "none",
	[VBD_MOVE_STARTING] = "starting",
	[VBD_MOVE_COPYING] = "copying",
	[VBD_MOVE_SWITCHING] = "switching",
	[VBD_MOVE_FINISHING] = "finishing",
	[VBD_MOVE_SWITCHED] = "switched",
	[VBD_MOVE_CANCELLING] = "cancelling",
	[VBD_MOVE_CANCELLED] = "cancelled",
	[VBD_MOVE_FAILED] = "failed",
	[VBD_MOVE_COPIED] = "copied",
};

const char *vbd_move_phase_name(enum vbd_move_phase phase)
{
	return phase_names[phase];
}

static bool phase_final(enum vbd_move_phase phase)
{
	return phase == VBD_MOVE_SWITCHED || phase == VBD_MOVE_CANCELLED ||
	       phase == VBD_MOVE_FAILED || phase == VBD_MOVE_COPIED;
}

/* "move" or "copy", for the journal. */
static const char *kind(const struct vbd_move *m)
{
	return m->copy ? "copy" : "move";
}

/* ---- the copier thread ---- */

/* Wake the main thread: vbd_rings_closed(), then vbd_move_run(). */
static void wake_main(struct vbd_move *m)
{
	const uint64_t one = 1;

	if (write(m->d->closed_fd, &one, sizeof(one)) < 0) {
		/* An eventfd's counter does not fill up with these. */
	}
}

/*
 * Ask the main thread for @ask; its answer. Once the main thread took the
 * ask it always answers (a switch's action may be using DEST meanwhile);
 * a stop before that withdraws the ask. Thread.
 */
static enum told ask_main(struct vbd_move *m, enum ask ask)
{
	enum told told;

	pthread_mutex_lock(&m->lock);
	m->ask = ask;
	m->told = TOLD_NONE;
	wake_main(m);
	while (m->told == TOLD_NONE && !(m->stop && m->ask == ask))
		pthread_cond_wait(&m->cond, &m->lock);
	told = m->told;
	if (told == TOLD_NONE) {
		m->ask = ASK_NONE;
		told = TOLD_STOP;
	}
	pthread_mutex_unlock(&m->lock);
	return told;
}

/* The move failed with @ret: say why (the first reason stays). */
static int fail(struct vbd_move *m, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct vbd_move *m, int ret, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&m->lock);
	if (!m->ret) {
		m->ret = ret;
		va_start(ap, fmt);
		vsnprintf(m->why, sizeof(m->why), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&m->lock);
	return ret;
}

/*
 * Wait until @until_ns (CLOCK_MONOTONIC); false when the move stops
 * meanwhile. Thread.
 */
static bool sleep_until(struct vbd_move *m, uint64_t until_ns)
{
	struct timespec until = { .tv_sec = (time_t)(until_ns / 1000000000),
				  .tv_nsec = (long)(until_ns % 1000000000) };
	bool stop;

	pthread_mutex_lock(&m->lock);
	/* The condition variable's clock is CLOCK_MONOTONIC. */
	while (!m->stop && blk_now_ns() < until_ns)
		pthread_cond_timedwait(&m->cond, &m->lock, &until);
	stop = m->stop;
	pthread_mutex_unlock(&m->lock);
	return !stop;
}

/*
 * Wait until the rate limit lets @len more bytes go; false when the move
 * stops meanwhile. Thread.
 */
static bool pace(struct vbd_move *m, uint64_t len)
{
	uint64_t now;

	if (!sleep_until(m, m->next_ns))
		return false;
	now = blk_now_ns();
	/* No burst after an idle time: each run waits its own share. */
	m->next_ns = (m->next_ns > now ? m->next_ns : now) +
		     len * 1000000000 / m->bw;
	return true;
}

/* Copy bytes [@off, @off + @len) of the image; 0 or -errno. */
static int copy_run(struct vbd_move *m, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;

	if (end > m->total)
		end = m->total;
	for (; off < end; off += BLK_COPY_MAX) {
		uint64_t n = end - off < BLK_COPY_MAX ? end - off
						      : BLK_COPY_MAX;
		uint64_t t0 = blk_now_ns();
		int ret = blk_image_copy_range(m->src, &m->dst, off, n, m->buf);

		if (ret < 0)
			return fail(m, ret,
				    "copying bytes %" PRIu64 "-%" PRIu64 " to "
				    "%s: "
				    "%s",
				    off, off + n, m->dest, strerror(-ret));
		m->copy_ns += blk_now_ns() - t0;
		pthread_mutex_lock(&m->lock);
		m->copied += n;
		pthread_mutex_unlock(&m->lock);
	}
	return 0;
}

/*
 * Take every dirty chunk and copy it, in runs of adjacent chunks of up to
 * BLK_COPY_MAX (or one chunk, if larger); @paced: within the rate limit,
 * and stopping when asked. 0, -ECANCELED, or -errno.
 */
static int copy_dirty(struct vbd_move *m, bool paced)
{
	uint64_t chunk = blk_dirty_chunk(m->map);
	uint64_t most = chunk > BLK_COPY_MAX ? chunk : BLK_COPY_MAX;
	uint64_t start = 0, n = 0;
	int64_t c;
	int ret;

	for (uint64_t from = 0;; from = (uint64_t)c + 1) {
		c = blk_dirty_take(m->map, from);
		/* The run goes on with @c, or is copied first. */
		if (c >= 0 && n && (uint64_t)c == start + n &&
		    (n + 1) * chunk <= most) {
			n++;
			continue;
		}
		if (n) {
			if (paced && !pace(m, n * chunk))
				return -ECANCELED;
			ret = copy_run(m, start * chunk, n * chunk);
			if (ret < 0)
				return ret;
		}
		if (c < 0)
			return 0;
		start = (uint64_t)c;
		n = 1;
	}
}

/* The bytes dirty now (the last chunk may be cut short). */
static uint64_t dirty_bytes(const struct vbd_move *m)
{
	uint64_t n = blk_dirty_count(m->map) * blk_dirty_chunk(m->map);

	return n < m->total ? n : m->total;
}

/*
 * After pass @pass (from 1) that copied @bytes in @ns of copying (not the
 * limit's waits): is the rest small enough to copy during the switch's
 * pause? Judged at the pass's own rate, not the move's: the rest is
 * scattered as what the pass copied was (the guest's writes). The first
 * pass copied the whole image in long runs, holes among them, many times
 * faster a byte, so it judges nothing but an empty rest: trusting it once
 * paused a guest 265 ms to copy 7 MiB of 4 KiB pages it had rated at
 * under 40.
 */
static bool small_enough(unsigned int pass, uint64_t dirty, uint64_t bytes,
			 uint64_t ns)
{
	if (!dirty)
		return true;
	if (pass < 2 || !bytes || !ns)
		return false;
	return (double)dirty * (double)ns / (double)bytes <=
	       VBD_MOVE_SWITCH_MS * 1e6;
}

/* Note whether what is dirty still shrinks from pass to pass. */
static void note_progress(struct vbd_move *m, uint64_t dirty)
{
	bool converging;

	if (dirty < m->best_dirty) {
		m->best_dirty = dirty;
		m->stalled = 0;
	} else {
		m->stalled++;
	}
	converging = m->stalled < STALLED_PASSES;
	pthread_mutex_lock(&m->lock);
	m->converging = converging;
	pthread_mutex_unlock(&m->lock);
}

/* One pass; then, when the rest is small, the switch. Thread. */
static enum told one_pass(struct vbd_move *m)
{
	uint64_t t0 = blk_now_ns(), c0 = m->copied, busy0 = m->copy_ns, dirty;
	int ret = copy_dirty(m, true);
	uint64_t ns = blk_now_ns() - t0;
	unsigned int pass;

	if (ret < 0)
		return TOLD_STOP;
	dirty = dirty_bytes(m);
	note_progress(m, dirty);
	pthread_mutex_lock(&m->lock);
	pass = ++m->passes;
	m->pass_rate = ns ? (uint64_t)((double)(m->copied - c0) * 1e9 / ns) : 0;
	pthread_mutex_unlock(&m->lock);
	if (!small_enough(pass, dirty, m->copied - c0, m->copy_ns - busy0)) {
		wake_main(m); /* to log the pass */
		return sleep_until(m, t0 + MIN_PASS_MS * 1000000ull)
			       ? TOLD_GO
			       : TOLD_STOP;
	}
	return ask_main(m, ASK_SWITCH);
}

/* Record the move as @phase; 0 or -errno (said). Thread. */
static int record(struct vbd_move *m, enum move_phase phase)
{
	struct move_record r = { .domid = m->domid,
				 .devid = m->devid,
				 .phase = phase };
	int ret;

	snprintf(r.source, sizeof(r.source), "%s", m->source);
	snprintf(r.dest, sizeof(r.dest), "%s", m->dest);
	ret = move_record_save(m->state_dir, &r);
	if (ret < 0)
		fail(m, ret, "cannot record the move in %s/moves: %s",
		     m->state_dir, strerror(-ret));
	return ret;
}

/*
 * Create DEST, have the writes tracked, copy until switched or stopped.
 * TOLD_SWITCHED or TOLD_STOP. Thread.
 */
static enum told copy_until_switched(struct vbd_move *m)
{
	char why[VBD_WHY_MAX];
	enum told told;
	int ret;

	ret = blk_image_create_copy(m->src, m->dest, m->cache, NULL, &m->dst,
				    why, sizeof(why));
	if (ret < 0) {
		fail(m, ret, "cannot create %s: %s", m->dest, why);
		return TOLD_STOP;
	}
	m->dst_open = m->created = true;
	/* Recorded once made: a restart removes only what a move made. */
	if (record(m, MOVE_COPYING) < 0)
		return TOLD_STOP;
	told = ask_main(m, ASK_TRACK);
	while (told == TOLD_GO)
		told = one_pass(m);
	return told;
}

/*
 * Stopped before the switch: DEST goes, unless the daemon stops; then the
 * main thread sets the record as the disk at rest needs it.
 */
static void abandon(struct vbd_move *m)
{
	char why[VBD_WHY_MAX];
	bool keep;
	int ret;

	pthread_mutex_lock(&m->lock);
	keep = m->keep;
	pthread_mutex_unlock(&m->lock);
	if (m->dst_open) {
		blk_image_close(&m->dst);
		m->dst_open = false;
	}
	/* Never DEST once the guest runs on it. */
	if (keep || !m->created || m->switched)
		return;
	ret = blk_image_remove(m->dest, why, sizeof(why));
	if (ret < 0 && ret != -ENOENT)
		fail(m, ret, "cannot remove %s: %s", m->dest, why);
}

static void *copier(void *arg)
{
	struct vbd_move *m = arg;
	enum told told = copy_until_switched(m);

	if (told == TOLD_SWITCHED && m->copy) {
		blk_image_close(&m->dst); /* finished: flushed in the pause */
		m->dst_open = false;
	} else if (told == TOLD_SWITCHED) {
		blk_image_close(&m->old); /* RBD: may block */
	} else
		abandon(m);
	pthread_mutex_lock(&m->lock);
	m->ask = ASK_END;
	wake_main(m);
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* ---- the switch: its action on the quiesce's thread ---- */

/* The guest is paused: copy the rest, flush, record, mark. */
static int switch_act(void *arg, char *why, size_t why_len)
{
	struct vbd_move *m = arg;
	int ret = copy_dirty(m, false);

	if (ret < 0) {
		pthread_mutex_lock(&m->lock);
		snprintf(why, why_len, "%s", m->why);
		pthread_mutex_unlock(&m->lock);
		return ret;
	}
	ret = blk_image_flush(&m->dst);
	if (ret < 0) {
		snprintf(why, why_len, "cannot flush %s: %s", m->dest,
			 strerror(-ret));
		return ret;
	}
	/* A copy is finished: the device stays on its image, unmarked. */
	if (m->copy)
		return 0;
	ret = record(m, MOVE_SWITCHED);
	if (ret < 0) {
		snprintf(why, why_len, "%s", m->why);
		return ret;
	}
	/* Switched: the record says so; the mark only guards the source. */
	m->mark_why[0] = '\0';
	if (blk_image_mark_moved(m->src, m->dest, m->mark_why,
				 sizeof(m->mark_why)) == 0)
		m->mark_why[0] = '\0';
	else if (!m->mark_why[0])
		snprintf(m->mark_why, sizeof(m->mark_why), "not marked");
	return 0;
}

/* ---- the main thread's side ---- */

struct blk_dirty *vbd_move_map(const struct vbd *v)
{
	return v->move && v->move->tracking ? v->move->map : NULL;
}

static void set_dirty(struct vbd *v, struct blk_dirty *map)
{
	for (unsigned int q = 0; q < v->nr_queues; q++)
		v->queue[q].params.dirty = map;
	v->move->tracking = map != NULL;
}

/* Tell the thread @told. */
static void tell_thread(struct vbd_move *m, enum told told)
{
	pthread_mutex_lock(&m->lock);
	m->told = told;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

/* Stop the thread: cancelled (@ret 0), failed, or the device closes. */
static void stop_thread(struct vbd_move *m, int ret, const char *why, bool keep)
{
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	m->keep = keep;
	if (ret && !m->ret) {
		m->ret = ret;
		snprintf(m->why, sizeof(m->why), "%s", why);
	}
	if (!phase_final(m->phase))
		m->phase = VBD_MOVE_CANCELLING;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

static void set_phase(struct vbd_move *m, enum vbd_move_phase phase)
{
	pthread_mutex_lock(&m->lock);
	m->phase = phase;
	pthread_mutex_unlock(&m->lock);
}

static void tell_started(struct vbd_move *m, int ret, const char *why)
{
	vbd_move_started_fn *fn = m->started;

	m->started = NULL;
	if (fn)
		fn(m->started_arg, ret, why);
}

static int no_action(void *arg, char *why, size_t why_len)
{
	(void)arg;
	(void)why;
	(void)why_len;
	return 0;
}

/* The first pause's hook: the rings track every write from now on. */
static void track_hook(void *arg, struct vbd *v)
{
	struct vbd_move *m = arg;

	blk_dirty_mark_all(m->map);
	set_dirty(v, m->map);
}

static void track_done(void *arg, struct vbd *v, int ret, const char *why,
		       const struct vbd_pause *p)
{
	struct vbd_move *m = arg;
	char msg[VBD_WHY_MAX + 64];

	(void)p;
	if (ret < 0) {
		snprintf(msg, sizeof(msg),
			 "cannot pause the guest to track its writes: %s", why);
		stop_thread(m, ret, msg, false);
		tell_thread(m, TOLD_STOP);
		return;
	}
	pthread_mutex_lock(&m->lock);
	if (!m->stop)
		m->phase = VBD_MOVE_COPYING;
	pthread_mutex_unlock(&m->lock);
	if (m->phase == VBD_MOVE_COPYING) {
		vbd_log(v, LOG_NOTICE, 0,
			"%s %s to %s at up to %.1f MiB/s: the guest's "
			"writes are tracked in chunks of %" PRIu32 " KiB",
			m->copy ? "copying" : "moving", m->source, m->dest,
			(double)m->bw / (1 << 20),
			blk_dirty_chunk(m->map) / 1024);
		tell_started(m, 0, "");
	}
	/* A stop meanwhile: the thread sees it. */
	tell_thread(m, TOLD_GO);
}

static double ms_between(uint64_t from_ns, uint64_t to_ns)
{
	return (double)(to_ns - from_ns) / 1e6;
}

/* The switch's hook: the guest's next request goes to DEST. */
static void switch_hook(void *arg, struct vbd *v)
{
	struct vbd_move *m = arg;

	if (m->copy) {
		set_dirty(v, NULL);
		return;
	}
	m->old = v->image;
	v->image = m->dst;
	m->dst_open = false;
	m->switched = true;
	snprintf(v->image_path, sizeof(v->image_path), "%s", m->dest);
	set_dirty(v, NULL);
	/* As at its connect: QEMU stays away from the file DEST too (no one
	 * else has a file this move just made open). */
	if (blk_image_lock_like_qemu(&v->image) < 0)
		vbd_log(v, LOG_WARNING, 0,
			"cannot keep QEMU away from %s: something opened it "
			"meanwhile",
			m->dest);
}

/*
 * The last pause ran: the guest is on DEST, or (a copy) DEST is finished
 * and the guest on its image.
 */
static void last_pause_ran(struct vbd_move *m, struct vbd *v,
			   const struct vbd_pause *p)
{
	const char *done = m->copy ? "copied" : "moved";
	char total[64] = "";

	pthread_mutex_lock(&m->lock);
	m->phase = m->copy ? VBD_MOVE_COPIED : VBD_MOVE_SWITCHED;
	m->pause = *p;
	pthread_mutex_unlock(&m->lock);
	if (m->copy)
		snprintf(total, sizeof(total), "; %.1f MiB copied in all",
			 (double)m->copied / (1 << 20));
	if (p->resumed_ns)
		vbd_log(v, LOG_NOTICE, 0,
			"%s %s to %s: the guest paused %.2f ms for the "
			"%s (%.2f draining its I/O in flight, %.2f "
			"copying the rest, %.2f resuming on %s)%s",
			done, m->source, m->dest,
			ms_between(p->stopped_ns, p->resumed_ns),
			m->copy ? "last pause" : "switch",
			ms_between(p->stopped_ns, p->drained_ns),
			ms_between(p->drained_ns, p->acted_ns),
			ms_between(p->acted_ns, p->resumed_ns),
			m->copy ? m->source : m->dest, total);
	else
		vbd_log(v, LOG_NOTICE, 0,
			"%s %s to %s; the guest detached meanwhile%s", done,
			m->source, m->dest, total);
	if (m->mark_why[0])
		vbd_log(v, LOG_WARNING, 0,
			"%s is not marked as moved (%s): nothing keeps it from "
			"being attached again by mistake; point the disk's "
			"configuration at %s",
			m->source, m->mark_why, m->dest);
	tell_thread(m, TOLD_SWITCHED);
}

static void switch_done(void *arg, struct vbd *v, int ret, const char *why,
			const struct vbd_pause *p)
{
	struct vbd_move *m = arg;
	char msg[VBD_WHY_MAX + 64];

	if (ret == 0) {
		last_pause_ran(m, v, p);
		return;
	}
	/* Not run: nothing was taken off the map; try again later. */
	if ((ret == -ETIMEDOUT || ret == -EBUSY) &&
	    ++m->switch_tries < SWITCH_TRIES) {
		vbd_log(v, LOG_WARNING, -ret,
			"%s to %s: the %s did not happen (%s); copying "
			"on, and trying again",
			kind(m), m->dest, m->copy ? "last pause" : "switch",
			why);
		set_phase(m, VBD_MOVE_COPYING);
		tell_thread(m, TOLD_GO);
		return;
	}
	snprintf(msg, sizeof(msg), "the %s failed: %s",
		 m->copy ? "last pause" : "switch", why);
	stop_thread(m, ret, msg, false);
	tell_thread(m, TOLD_STOP);
}

/* The thread asked for the switch. */
static void start_switch(struct vbd_move *m, struct vbd *v)
{
	struct vbd_quiesce_req req = { .act = switch_act,
				       .done = switch_done,
				       .hook = switch_hook,
				       .arg = m };
	struct vbd_why no;
	int ret;

	set_phase(m, m->copy ? VBD_MOVE_FINISHING : VBD_MOVE_SWITCHING);
	ret = vbd_quiesce(v, &req, &no);
	if (ret < 0)
		switch_done(m, v, ret, no.msg, &(struct vbd_pause){ 0 });
}

/* The second pause's hook: the rings stop tracking. */
static void untrack_hook(void *arg, struct vbd *v)
{
	(void)arg;
	set_dirty(v, NULL);
}

static void untrack_done(void *arg, struct vbd *v, int ret, const char *why,
			 const struct vbd_pause *p)
{
	struct vbd_move *m = arg;

	(void)p;
	m->detaching = false;
	if (ret < 0)
		vbd_log(v, LOG_DEBUG, -ret,
			"move to %s: its map stays on the rings for now: %s",
			m->dest, why);
}

/* The move ended before the switch: its map leaves the rings. */
static void untrack(struct vbd_move *m, struct vbd *v)
{
	struct vbd_quiesce_req req = { .act = no_action,
				       .done = untrack_done,
				       .hook = untrack_hook,
				       .arg = m };
	struct vbd_why no;

	if (!m->tracking || m->detaching || v->quiesce)
		return;
	/* No ring has it: none is connected, nor closing. */
	if (!v->nr_queues && !v->closing) {
		set_dirty(v, NULL);
		return;
	}
	if (vbd_quiesce(v, &req, &no) == 0)
		m->detaching = true;
}

static void report_end(struct vbd_move *m, struct vbd *v)
{
	if (m->phase == VBD_MOVE_SWITCHED || m->phase == VBD_MOVE_COPIED)
		return; /* said when it switched, or copied */
	if (m->ret) {
		m->phase = VBD_MOVE_FAILED;
		/* Not made (it existed, say): not removed either. */
		vbd_log(v, LOG_WARNING, -m->ret,
			"%s to %s failed: %s; the guest stays on %s%s%s",
			kind(m), m->dest, m->why, m->source,
			m->created ? ", removed " : "",
			m->created ? m->dest : "");
	} else {
		m->phase = VBD_MOVE_CANCELLED;
		vbd_log(v, LOG_NOTICE, 0,
			"%s to %s cancelled after %u passes; the guest stays "
			"on %s, %s removed",
			kind(m), m->dest, m->passes, m->source, m->dest);
	}
}

/* A copy's answer about @v: @ret 0 once copied, else why not. */
static void tell_copied(struct vbd_move *m, const struct vbd *v, int ret,
			const char *why)
{
	vbd_move_copied_fn *fn = m->copied_fn;
	const struct vbd_snapshot_result r = { .ret = ret,
					       .why = ret ? why : "",
					       .name = v->name,
					       .dest = m->dest,
					       .pause = m->pause };

	m->copied_fn = NULL;
	if (fn)
		fn(m->started_arg, &r, m->copied);
}

/* The thread ended: join it. */
static void thread_ended(struct vbd_move *m, struct vbd *v)
{
	int ret;

	pthread_join(m->thread, NULL);
	m->thread_live = false;
	m->ended = true;
	pthread_mutex_lock(&m->lock);
	report_end(m, v);
	pthread_mutex_unlock(&m->lock);
	/* Not switched: the record no longer names DEST (a file's I/O); a
	 * finished copy's is gone before it is answered. */
	if (m->phase != VBD_MOVE_SWITCHED)
		vbd_move_record_rest(v);
	ret = m->ret ? m->ret : -ECANCELED;
	tell_started(m, ret, m->ret ? m->why : "cancelled");
	tell_copied(m, v, m->phase == VBD_MOVE_COPIED ? 0 : ret,
		    m->ret ? m->why : "cancelled");
	free(m->buf);
	m->buf = NULL;
	/* No ring has the map any more (switched, copied): drop it now. */
	if (!m->tracking) {
		blk_dirty_free(m->map);
		m->map = NULL;
	}
}

/* Say each pass once, and once that it does not converge. */
static void log_passes(struct vbd_move *m, struct vbd *v)
{
	unsigned int passes;
	uint64_t copied, rate;
	bool converging;

	pthread_mutex_lock(&m->lock);
	passes = m->passes;
	copied = m->copied;
	rate = m->pass_rate;
	converging = m->converging;
	pthread_mutex_unlock(&m->lock);
	if (passes != m->logged_passes &&
	    (passes <= LOGGED_PASSES || passes % LOG_EVERY_PASSES == 0))
		vbd_log(v, LOG_INFO, 0,
			"move to %s: pass %u ended, %.1f MiB copied in all, "
			"%.1f MiB/s, %.1f MiB dirty",
			m->dest, passes, (double)copied / (1 << 20),
			(double)rate / (1 << 20),
			(double)dirty_bytes(m) / (1 << 20));
	m->logged_passes = passes;
	if (!converging && !m->said_stalled)
		vbd_log(v, LOG_WARNING, 0,
			"move to %s is not converging: the guest writes faster "
			"than --bw (%.1f MiB/s); it goes on until cancelled or "
			"the guest slows",
			m->dest, (double)m->bw / (1 << 20));
	m->said_stalled = !converging;
}

static void run_one(struct vbd_move *m, struct vbd *v)
{
	enum ask ask;

	pthread_mutex_lock(&m->lock);
	ask = m->ask;
	m->ask = ASK_NONE;
	pthread_mutex_unlock(&m->lock);
	if (m->thread_live)
		log_passes(m, v);
	switch (ask) {
	case ASK_TRACK: {
		struct vbd_quiesce_req req = { .act = no_action,
					       .done = track_done,
					       .hook = track_hook,
					       .arg = m };
		struct vbd_why no;

		if (vbd_quiesce(v, &req, &no) < 0)
			track_done(m, v, -EBUSY, no.msg, NULL);
		break;
	}
	case ASK_SWITCH:
		start_switch(m, v);
		break;
	case ASK_END:
		thread_ended(m, v);
		break;
	case ASK_NONE:
		break;
	}
	if (m->ended)
		untrack(m, v);
}

void vbd_move_run(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->move && !(v->move->ended && !v->move->tracking))
			run_one(v->move, v);
}

bool vbd_move_pending(const struct daemon *d)
{
	for (const struct vbd *v = d->vbds; v; v = v->next)
		if (v->move && v->move->ended && v->move->tracking)
			return true;
	return false;
}

/* ---- start, cancel, end ---- */

static int refuse(const struct vbd *v, int err, char *why, size_t why_len,
		  const char *msg)
{
	snprintf(why, why_len, "%s: %s", v->name, msg);
	return err;
}

/* Why @v cannot be moved to @dest; 0 when it can. */
static int cannot_move(struct vbd *v, const char *dest, char *why,
		       size_t why_len)
{
	/* Ended: its thread joined, its map off the rings. */
	if (v->move && (!v->move->ended || v->move->tracking))
		return refuse(v, -EBUSY, why, why_len,
			      "a move of it is under way: wait for it to end, "
			      "or cancel it (blkbackctl move --cancel)");
	if (v->quiesce)
		return refuse(v, -EBUSY, why, why_len,
			      "it is paused (a snapshot of it is under way): "
			      "try again once that one answered");
	if (!v->d->opts.state_dir)
		return refuse(v, -EOPNOTSUPP, why, why_len,
			      "the daemon has no --state-dir, where a move's "
			      "record must survive a crash");
	if (!v->nr_queues || v->closing || !vbd_image_open(v))
		return refuse(v, -ENOTCONN, why, why_len,
			      "no guest is connected to it: copy its image "
			      "while nothing uses it");
	if (v->image.readonly)
		return refuse(v, -EROFS, why, why_len,
			      "it is read-only: copy its image instead");
	if (v->image.nbd_uri || v->image.null)
		return refuse(v, -EOPNOTSUPP, why, why_len,
			      "an NBD export (or the null image) belongs to "
			      "its server: move it there");
	if (strlen(dest) >= VBD_PATH_MAX)
		return refuse(v, -ENAMETOOLONG, why, why_len,
			      "DEST is too long for its record (at most 191 "
			      "bytes)");
	if (strcmp(dest, v->image_path) == 0)
		return refuse(v, -EEXIST, why, why_len, "DEST is its image");
	return 0;
}

static void move_free(struct vbd_move *m)
{
	if (!m)
		return;
	blk_dirty_free(m->map);
	free(m->buf);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct vbd_move *move_new(struct vbd *v, const char *dest, uint64_t bw,
				 bool copy)
{
	struct vbd_move *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	m->d = v->d;
	m->src = &v->image;
	m->domid = v->fe_domid;
	m->devid = v->devid;
	m->bw = bw ? bw : VBD_MOVE_DEFAULT_BW;
	m->copy = copy;
	m->state_dir = v->d->opts.state_dir;
	m->cache = v->d->opts.cache;
	m->total = v->image.sectors * BLKIF_SECTOR_SIZE;
	m->best_dirty = UINT64_MAX;
	m->converging = true;
	m->phase = VBD_MOVE_STARTING;
	snprintf(m->source, sizeof(m->source), "%s", v->image_path);
	snprintf(m->dest, sizeof(m->dest), "%s", dest);
	if (posix_memalign(&m->buf, 4096, BLK_COPY_MAX) ||
	    blk_dirty_new(m->total, VBD_MOVE_MIN_CHUNK, &m->map) < 0) {
		move_free(m);
		return NULL;
	}
	return m;
}

static int start_thread(struct vbd_move *m)
{
	int ret = pthread_create(&m->thread, NULL, copier, m);

	if (ret)
		return -ret;
	pthread_setname_np(m->thread, "blkbackd-move");
	m->thread_live = true;
	return 0;
}

/*
 * Start a move of @domid/@devid that tells @started, or a copy (@copied
 * given) that tells @copied (vbd-move.h).
 */
static int start(struct daemon *d, uint32_t domid, uint32_t devid,
		 const char *dest, uint64_t bw, vbd_move_started_fn *started,
		 vbd_move_copied_fn *copied, void *arg, char *why,
		 size_t why_len)
{
	struct vbd *v = vbd_find(d, ANY_ROOT, domid, devid);
	struct vbd_move *m;
	int ret;

	if (!v) {
		snprintf(why, why_len, "no such device");
		return -ENOENT;
	}
	ret = cannot_move(v, dest, why, why_len);
	if (ret < 0)
		return ret;
	m = move_new(v, dest, bw, copied != NULL);
	if (!m) {
		snprintf(why, why_len, "%s: out of memory", v->name);
		return -ENOMEM;
	}
	ret = start_thread(m);
	if (ret < 0) {
		snprintf(why, why_len, "%s: cannot start a thread: %s", v->name,
			 strerror(-ret));
		move_free(m);
		return ret;
	}
	move_free(v->move); /* the last one's, ended */
	v->move = m;
	m->started = started;
	m->copied_fn = copied;
	m->started_arg = arg;
	return 0;
}

int vbd_move_start(struct daemon *d, uint32_t domid, uint32_t devid,
		   const char *dest, uint64_t bw, vbd_move_started_fn *started,
		   void *arg, char *why, size_t why_len)
{
	return start(d, domid, devid, dest, bw, started, NULL, arg, why,
		     why_len);
}

int vbd_move_copy(struct daemon *d, uint32_t domid, uint32_t devid,
		  const char *dest, uint64_t bw, vbd_move_copied_fn *done,
		  void *arg, char *why, size_t why_len)
{
	return start(d, domid, devid, dest, bw, NULL, done, arg, why, why_len);
}

int vbd_move_cancel(struct daemon *d, uint32_t domid, uint32_t devid, char *why,
		    size_t why_len)
{
	struct vbd *v = vbd_find(d, ANY_ROOT, domid, devid);
	struct vbd_move *m = v ? v->move : NULL;
	enum vbd_move_phase phase = VBD_MOVE_NONE;

	if (!v) {
		snprintf(why, why_len, "no such device");
		return -ENOENT;
	}
	if (m) {
		pthread_mutex_lock(&m->lock);
		phase = m->phase;
		pthread_mutex_unlock(&m->lock);
	}
	if (!m || phase_final(phase) || phase == VBD_MOVE_CANCELLING) {
		snprintf(why, why_len, "%s: no move of it is under way",
			 v->name);
		return -ENOENT;
	}
	if (phase == VBD_MOVE_SWITCHING || phase == VBD_MOVE_FINISHING) {
		snprintf(why, why_len,
			 "%s: its %s to %s is %s this instant: it ends in a "
			 "moment",
			 v->name, kind(m), m->dest,
			 m->copy ? "finishing" : "switching");
		return -EBUSY;
	}
	vbd_log(v, LOG_NOTICE, 0, "move to %s: cancel asked", m->dest);
	stop_thread(m, 0, "", false);
	return 0;
}

/* Stop @m's thread (it cleans up as @detached says) and free @m. */
static void move_stop(struct vbd_move *m, struct vbd *v, bool detached)
{
	if (m->thread_live) {
		stop_thread(m, 0, "", !detached);
		/* An ask taken and not answered yet (its pause ended with
		 * the rings) is answered here, so that the join ends. */
		pthread_mutex_lock(&m->lock);
		if (m->told == TOLD_NONE)
			m->told = TOLD_STOP;
		pthread_cond_signal(&m->cond);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->thread, NULL);
		m->thread_live = false;
	}
	tell_started(m, -ECANCELED, "the device closed");
	/* A copy finished, its end not run yet: its record goes now, or the
	 * next daemon would remove the finished DEST. */
	if (m->phase == VBD_MOVE_COPIED && !m->ended && !detached)
		vbd_move_record_rest(v);
	tell_copied(m, v, m->phase == VBD_MOVE_COPIED ? 0 : -ECANCELED,
		    "the device closed");
	/* Its rings are closed: no one marks the map any more. */
	move_free(m);
}

void vbd_move_end(struct vbd *v, bool detached)
{
	const char *dir = v->d->opts.state_dir;
	char path[VBD_PATH_MAX + 64];
	int ret;

	if (v->move)
		move_stop(v->move, v, detached);
	v->move = NULL;
	/*
	 * The disk is gone: so is what a restart would need to find it, this
	 * daemon's move's or the one a restart resumed it from (the next
	 * disk of this number is another). One unlink() when there is none.
	 */
	if (!detached || !dir)
		return;
	ret = move_record_remove(dir, v->fe_domid, v->devid);
	if (ret < 0) {
		move_record_path(dir, v->fe_domid, v->devid, path,
				 sizeof(path));
		vbd_log(v, LOG_WARNING, -ret,
			"cannot remove the record of its moves, %s: %s; remove "
			"it before the next disk of this domain and number "
			"attaches",
			path, strerror(-ret));
	}
}

void vbd_move_info(struct vbd *v, struct vbd_move_info *out)
{
	struct vbd_move *m = v->move;

	*out = (struct vbd_move_info){
		.phase = VBD_MOVE_NONE, .source = "", .dest = "", .why = ""
	};
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	out->phase = m->phase;
	out->copied = m->copied;
	out->rate = m->pass_rate;
	out->passes = m->passes;
	out->converging = m->converging;
	out->copy = m->copy;
	out->pause = m->pause;
	out->why = m->ret ? m->why : "";
	pthread_mutex_unlock(&m->lock);
	out->source = m->source;
	out->dest = m->dest;
	out->total = m->total;
	out->bw = m->bw;
	out->dirty = m->tracking ? dirty_bytes(m) : 0;
	if (!out->converging && !out->why[0] && !phase_final(out->phase))
		out->why = "not converging: the guest writes faster than --bw";
}

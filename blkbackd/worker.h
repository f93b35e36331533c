/* SPDX-License-Identifier: MIT */
/*
 * Worker threads, named "blkbackd-wN" (N: the index). Each runs one I/O
 * engine (one io_uring and one event-channel handle, and the grant-table
 * handle all workers share) serving many rings. The main thread hands
 * rings to a worker and takes them back through a small command queue;
 * the data path itself never takes a lock.
 */
#ifndef BLKBACKD_WORKER_H
#define BLKBACKD_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "blkbackd/host-errors.h"
#include "libblk/engine.h"

struct worker;

/* How every worker's engine runs; see blk_engine_set_poll/_timing(). */
struct worker_config {
	unsigned int poll_us;
	bool stage_timing;
	bool precise_clock; /* see blk_engine_set_precise_clock() */
	/* Worker N runs on the N-th CPU, its events' interrupts too. */
	bool pin;
	const char *state_dir; /* see blk_engine_set_state_dir() */
	struct blk_memory_limits mem; /* its budget shared by all workers */
	/* Where host I/O errors are counted and logged; shared. */
	struct host_errors *host_errors;
	/*
	 * The grant handle all workers share (blk_grants_open()), so that a
	 * ring moves between them mapped; it outlives them.
	 */
	xengnttab_handle *grants;
};

/*
 * Start worker @index. A ring the guest breaks is reported by writing its
 * 64-bit cookie (blk_conn_params.owner) to @broken_fd; a ring closed by
 * worker_disconnect() by adding one to the eventfd @closed_fd (several
 * workers may share it).
 */
int worker_start(struct worker **out, unsigned int index, int broken_fd,
		 int closed_fd, const struct worker_config *cfg);
/* Stop and join the thread; every ring must have been disconnected. */
void worker_stop(struct worker *w);

/*
 * Connect a ring on this worker; waits for the result. Takes
 * p->handover, as blk_engine_connect() does.
 */
int worker_connect(struct worker *w, const struct blk_conn_params *p);
/*
 * Start disconnecting the ring whose owner cookie is @cookie (see
 * blk_engine_disconnect() for @mode), and return at once: storage that is
 * slow to answer the ring's started I/O holds up that ring alone. Once
 * that I/O was answered, the ring unmapped and the event channel unbound,
 * the worker signals closed_fd, and worker_take_closed() hands the ring
 * over; its backend is borrowed until then. -ENOENT when this worker was
 * never given the ring or is closing it already. Main thread.
 */
int worker_disconnect(struct worker *w, uint64_t cookie,
		      enum blk_disconnect_mode mode);

/*
 * A ring closed, with its counters at the end (NULL: out of memory) and,
 * after BLK_DISCONNECT_MOVE, its mappings (NULL: unmapped), which @fn
 * owns: it connects them on another worker (blk_conn_params.handover) or
 * releases them (blk_handover_release()).
 */
typedef void (*worker_closed_fn)(void *arg, uint64_t cookie,
				 const struct blk_stats *final,
				 struct blk_handover *kept);

/*
 * Call @fn for every ring of this worker that closed since the last call.
 * Main thread, once closed_fd was read; @fn may connect and disconnect.
 */
void worker_take_closed(struct worker *w, worker_closed_fn fn, void *arg);

/* Tell the ring with @cookie its image now has @sectors sectors. */
void worker_resize(struct worker *w, uint64_t cookie, uint64_t sectors);

/*
 * Copy the counters of the ring with @cookie into @out; -ENOENT when this
 * worker does not serve it. A ring that closed but was not yet taken by
 * worker_take_closed() answers with its last counters, so that a disk's
 * totals do not dip while one of its rings moves to another worker.
 * Waits for the worker thread.
 */
int worker_stats(struct worker *w, uint64_t cookie, struct blk_stats *out);

/* How busy one ring was (worker_loads()). */
struct worker_ring_load {
	uint64_t cookie;
	uint64_t answered; /* requests answered since the last look */
};

/*
 * Fill @out (room for @max) with every ring this worker serves and is not
 * closing, and return how many, or -errno. Each call starts the next
 * interval. Main thread; waits for the worker thread, once per call.
 */
int worker_loads(struct worker *w, struct worker_ring_load *out,
		 unsigned int max);

/* Rings currently served (for choosing the least loaded worker). */
unsigned int worker_nr_rings(const struct worker *w);
unsigned int worker_index(const struct worker *w);

#endif /* BLKBACKD_WORKER_H */

/* SPDX-License-Identifier: MIT */
/*
 * Worker threads. Each runs one I/O engine (one io_uring, one grant-table
 * handle, one event-channel handle) serving many rings. The main thread
 * hands rings to a worker and takes them back through a small command
 * queue; the data path itself never takes a lock.
 */
#ifndef BLKBACKD_WORKER_H
#define BLKBACKD_WORKER_H

#include <stdint.h>

#include "libblk/engine.h"

struct worker;

/*
 * Start worker @index. A ring the guest breaks is reported by writing its
 * 64-bit cookie (blk_conn_params.owner) to @broken_fd.
 */
int worker_start(struct worker **out, unsigned int index, int broken_fd);
/* Stop and join the thread; every ring must have been disconnected. */
void worker_stop(struct worker *w);

/* Connect a ring on this worker; waits for the result. */
int worker_connect(struct worker *w, const struct blk_conn_params *p);
/*
 * Disconnect the ring whose owner cookie is @cookie; returns once its
 * in-flight requests were answered, the ring unmapped and the event
 * channel unbound.
 */
void worker_disconnect(struct worker *w, uint64_t cookie);

/* Tell the ring with @cookie its image now has @sectors sectors. */
void worker_resize(struct worker *w, uint64_t cookie, uint64_t sectors);

/* Rings currently served (for choosing the least loaded worker). */
unsigned int worker_nr_rings(const struct worker *w);
unsigned int worker_index(const struct worker *w);

#endif /* BLKBACKD_WORKER_H */

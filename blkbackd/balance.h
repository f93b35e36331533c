/* SPDX-License-Identifier: MIT */
/*
 * Sharing the workers among busy rings over time.
 *
 * A ring goes to the worker with the fewest rings when it connects, and
 * would stay there. When the busy rings do not divide evenly among the
 * workers (three busy guests on two workers), the ring alone on its
 * worker always runs fastest; xen-blkback's thread per ring lets the
 * scheduler share the CPUs instead. So every interval the main thread
 * counts each worker's busy rings, and while the most crowded worker has
 * at least two and more than the least crowded one, it moves one ring
 * from the first to the second (vbd_move_ring()): the ring that got the
 * most service lately, so that the one left with more of a worker is one
 * that got less. The crowded places then rotate among the rings.
 * docs/architecture.md, "Sharing the workers", says more.
 *
 * Main thread only.
 */
#ifndef BLKBACKD_BALANCE_H
#define BLKBACKD_BALANCE_H

#include "blkbackd/daemon.h"

/* A ring is busy in an interval when it answered this many a second. */
#define BALANCE_BUSY_PER_SECOND 16

int balance_new(struct balance **out);
void balance_free(struct balance *b);

/*
 * One interval of @interval_ms ended: look at the workers' rings, and
 * start at most one move. Nothing moves while a move is under way.
 */
void balance_run(struct balance *b, struct daemon *d, unsigned int interval_ms);

#endif /* BLKBACKD_BALANCE_H */

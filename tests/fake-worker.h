/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the daemon's worker threads (blkbackd/worker.h), for tests
 * of the device state machine (tests/test-vbd.c, tests/fuzz/vbd.c): linked
 * instead of blkbackd/worker.c, it defines the worker_*() functions that
 * blkbackd/vbd*.c call, keeps the rings they hand over without mapping
 * anything, and writes down every call, so that a test asserts what the
 * state machine asked of its workers. Everything runs on the test's one
 * thread.
 *
 * A ring disconnected is closed at once (its closing reported through
 * d->closed_fd and worker_take_closed(), as a worker would), unless the
 * test holds closings back (fake_workers_hold()), as slow storage would.
 */
#ifndef TESTS_FAKE_WORKER_H
#define TESTS_FAKE_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "blkbackd/daemon.h"
#include "libblk/engine.h"

/* What the state machine asked of a worker. */
enum fake_call {
	FAKE_CONNECT,
	FAKE_DISCONNECT,
	FAKE_RESIZE,
	FAKE_NR_CALLS,
};

/* One ring as the fake keeps it. */
struct fake_ring {
	uint64_t cookie;
	struct blk_conn_params params; /* as connected */
	uint64_t sectors; /* as connected, then resized */
	bool closing; /* disconnected, not taken back yet */
};

/*
 * @n workers for @d (d->workers, d->nr_workers), reporting closed rings
 * through @d->closed_fd, which the caller made (an eventfd).
 */
void fake_workers_start(struct daemon *d, unsigned int n);
/* Free them; every ring must have been taken back. */
void fake_workers_stop(struct daemon *d);

/* Calls of each kind since the start, over all workers. */
unsigned int fake_calls(enum fake_call call);
/* The last connect's parameters, and the last resize's sectors. */
const struct blk_conn_params *fake_last_connect(void);
uint64_t fake_last_resize(void);
/* Rings connected and not disconnected, over all workers. */
unsigned int fake_live_rings(const struct daemon *d);
/* Rings disconnected whose closing was not taken back yet. */
unsigned int fake_closing_rings(const struct daemon *d);
/* The cookie of the @i-th ring connected, in no order; 0: none. */
uint64_t fake_ring_cookie(const struct daemon *d, unsigned int i);

/*
 * While @hold, disconnected rings stay closing; once released, they close
 * on the next vbd_rings_closed().
 */
void fake_workers_hold(struct daemon *d, bool hold);
/* The next worker_connect() fails with @err (0: none does). */
void fake_workers_fail_connect(int err);

#endif /* TESTS_FAKE_WORKER_H */

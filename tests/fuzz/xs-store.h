/* SPDX-License-Identifier: MIT */
/*
 * A xenstore in the fuzzing process, for tests/fuzz/vbd.c: this file's
 * xs_*() functions take the place of libxenstore's at link time (the
 * executable's definitions come first), so that the daemon's code runs
 * unchanged against a store that answers in microseconds and delivers
 * watch events when, and in the order, the harness says.
 *
 * Why not the real xenstored, which tests/test-vbd.c uses: speed, and the
 * events' order. Measured on a 2-core machine like CI's: a round trip to
 * xenstored (a write and a read, or a write and its watch event) takes
 * about 35 us, and an input of the fuzzer's corpus makes about 200 store
 * calls (147,100 for 734 inputs), so the real store alone would hold the
 * harness under 140 inputs a second, before the round trips that learn
 * that the events have all come and the reset between inputs; in this
 * process it runs about 480 a second under libFuzzer, ASan and UBSan when
 * alone (143,441 in 300 s; 2,384 in fuzz.sh's 15 s beside the rest of a
 * `make check -j2`), 2,400 a second without them. The real xenstored also
 * fires its events when it likes, so that the harness would have to
 * round-trip to collect them before delivering them late or in another
 * order; and fuzz.sh runs where no xenstored does.
 *
 * What it keeps of xenstore: a tree of nodes whose writes create their
 * parents, a removal that takes the subtree, directory listings in
 * libxenstore's one-block form, transactions that apply at their end
 * (an abort drops them), watches that fire for the node and everything
 * under it and for a watched node removed with an ancestor, one event
 * on registration, @releaseDomain, and xs_unwatch() dropping the events
 * still queued for that watch. What it does not: permissions, quotas,
 * transaction conflicts, size limits. Single-threaded.
 */
#ifndef TESTS_FUZZ_XS_STORE_H
#define TESTS_FUZZ_XS_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

/* The two connections: the daemon's, and the toolstack's and guest's. */
#define STORE_DAEMON 0u
#define STORE_PEER 1u

/* Empty: no node, no watch, no event, no domain. */
void store_reset(void);
/* Connection @who (STORE_DAEMON or STORE_PEER), as xs_open() gives it. */
struct xs_handle *store_handle(unsigned int who);

/* Events queued for the daemon's connection. */
unsigned int store_pending(void);
/*
 * Take the @i-th of them (@i < store_pending()): its path and token,
 * valid until the next call.
 */
void store_take(unsigned int i, const char **path, const char **token);

/*
 * Domain @domid runs (xs_is_domain_introduced()), or was released, which
 * fires @releaseDomain.
 */
void store_domain(uint32_t domid, bool alive);

/* Who wrote @path last (STORE_DAEMON or STORE_PEER); -1 when absent. */
int store_writer(const char *path);

#endif /* TESTS_FUZZ_XS_STORE_H */

/* SPDX-License-Identifier: MIT */
/*
 * Persistent grants: a connection's cache of guest pages mapped once and
 * reused for I/O, as blkif.h describes for feature-persistent. Bounded:
 * when full, a new grant is not mapped (the caller copies instead), since
 * evicting and remapping on every miss costs far more than a copy (an
 * unmap is a TLB shootdown). A frontend whose working set moves is
 * followed by ageing: blk_pgrant_age() drops the least recently used idle
 * mappings. A mapping in use by an in-flight request is never dropped.
 *
 * A cache may also draw on a budget of mappings shared by every ring of
 * the process (libblk/budget.h): dom0's grant maptrack is one table for
 * the whole host, and a daemon serving hundreds of guests must not fill
 * it. A new grant the budget cannot pay for is refused like one the
 * cache has no room for; blk_pgrant_shrink() gives idle mappings back.
 *
 * Owned by the thread that serves the ring; only the budget is shared.
 */
#ifndef LIBBLK_PGRANT_H
#define LIBBLK_PGRANT_H

#include <stdbool.h>
#include <stdint.h>
#include <xengnttab.h>

#include "libblk/budget.h"
#include "libblk/fixed.h"

struct blk_pgrant_entry;

struct blk_pgrant_cache {
	struct blk_pgrant_entry *entries;
	int32_t *buckets;
	uint32_t nr_buckets; /* a power of two */
	uint32_t cap;
	uint32_t nr;
	int32_t free_head; /* unused entries */
	int32_t lru_head, lru_tail; /* idle entries, oldest first */
	uint32_t misses; /* refused for lack of room, since ageing */
	bool paused; /* a mapping failed: map nothing new until ageing */
	uint64_t map_errors; /* mappings Xen refused */
	struct blk_budget *budget; /* shared; NULL: no host-wide limit */
	xengnttab_handle *xgt;
	uint32_t domid;
	/* Where mappings are registered as buffers; NULL: nowhere. */
	struct blk_fixed *fixed;
	bool fixed_refused; /* the kernel refused one: register no more */
	uint32_t nr_registered; /* mappings registered there now */
};

/*
 * Hold at most @cap mappings, each also paid from @budget (may be NULL)
 * and registered in @fixed (may be NULL).
 */
int blk_pgrant_init(struct blk_pgrant_cache *c, uint32_t cap,
		    struct blk_budget *budget, xengnttab_handle *xgt,
		    uint32_t domid, struct blk_fixed *fixed);
/* Unmap everything, and give it back. No request may be using the cache. */
void blk_pgrant_destroy(struct blk_pgrant_cache *c);

/*
 * The address of @gref's page, mapping it on first use, and pinned until
 * blk_pgrant_put(). NULL when it cannot be mapped now, and the caller
 * copies instead: errno ENOSPC when the cache is full, the budget is
 * spent, or mapping is paused; otherwise the mapping's error. A mapping
 * fails when the guest did not grant the page writable (a copy then
 * tells whether the request's own access is granted) or when Xen's
 * maptrack is full; either way the cache pauses until the next ageing
 * rather than try again for every segment.
 */
void *blk_pgrant_get(struct blk_pgrant_cache *c, uint32_t gref);
void blk_pgrant_put(struct blk_pgrant_cache *c, uint32_t gref);

/*
 * After many refusals, unmap the oldest idle eighth of the cache so that
 * grants the frontend uses now can take their place, and end a pause.
 */
void blk_pgrant_age(struct blk_pgrant_cache *c);

/*
 * Unmap idle mappings, oldest first, until at most @keep are held (those
 * in use stay). Returns how many were unmapped.
 */
uint32_t blk_pgrant_shrink(struct blk_pgrant_cache *c, uint32_t keep);

/*
 * The registered buffer of @gref's mapping, or -1 (not mapped, or not
 * registered): a one-page request on it needs no page pinning.
 */
int blk_pgrant_fixed_buf(const struct blk_pgrant_cache *c, uint32_t gref);

/*
 * Register the mappings in @fixed instead (NULL: nowhere), when the cache
 * moves to another engine with its ring.
 */
void blk_pgrant_set_fixed(struct blk_pgrant_cache *c, struct blk_fixed *fixed);

/* Mappings currently held. */
static inline uint32_t blk_pgrant_count(const struct blk_pgrant_cache *c)
{
	return c->nr;
}

#endif /* LIBBLK_PGRANT_H */

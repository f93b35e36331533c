/* SPDX-License-Identifier: MIT */
/*
 * Persistent grants: a connection's cache of guest pages mapped once and
 * reused for I/O, as blkif.h describes for feature-persistent. Bounded:
 * when full, a new grant is not mapped (the caller copies instead), since
 * evicting and remapping on every miss costs far more than a copy (an
 * unmap is a TLB shootdown). A frontend whose working set moves is
 * followed by ageing: blk_pgrant_age() drops the least recently used idle
 * mappings. A mapping in use by an in-flight request is never dropped.
 */
#ifndef LIBBLK_PGRANT_H
#define LIBBLK_PGRANT_H

#include <stdint.h>
#include <xengnttab.h>

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
	xengnttab_handle *xgt;
	uint32_t domid;
};

int blk_pgrant_init(struct blk_pgrant_cache *c, uint32_t cap,
		    xengnttab_handle *xgt, uint32_t domid);
/* Unmap everything. No request may be using the cache. */
void blk_pgrant_destroy(struct blk_pgrant_cache *c);

/*
 * The address of @gref's page, mapping it on first use, and pinned until
 * blk_pgrant_put(). NULL with errno ENOSPC when the cache is full, or the
 * mapping's error (the guest did not grant the page).
 */
void *blk_pgrant_get(struct blk_pgrant_cache *c, uint32_t gref);
void blk_pgrant_put(struct blk_pgrant_cache *c, uint32_t gref);

/*
 * After many refusals, unmap the oldest idle eighth of the cache so that
 * grants the frontend uses now can take their place.
 */
void blk_pgrant_age(struct blk_pgrant_cache *c);

/* Mappings currently held. */
static inline uint32_t blk_pgrant_count(const struct blk_pgrant_cache *c)
{
	return c->nr;
}

#endif /* LIBBLK_PGRANT_H */

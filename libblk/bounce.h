/* SPDX-License-Identifier: MIT */
/*
 * A connection's bounce pages: where grant copies put guest data on its
 * way to and from the image. Pages are page-aligned (O_DIRECT accepts
 * them), allocated in slabs as the guest's load asks for them, and capped
 * per connection so that one guest cannot take the memory other guests
 * need.
 */
#ifndef LIBBLK_BOUNCE_H
#define LIBBLK_BOUNCE_H

#include <stdbool.h>

#include "libblk/budget.h"

struct blk_bounce {
	void **free;
	unsigned int nr_free;
	unsigned int nr_total;
	unsigned int max;
	void **slabs;
	unsigned int nr_slabs;
	struct blk_budget *budget; /* shared; NULL: no host-wide limit */
	bool over_budget; /* the last refusal was the host's, not ours */
};

/*
 * Allow up to @max_pages pages, the slabs after the first also taken from
 * @budget (may be NULL); none is allocated yet.
 */
int blk_bounce_init(struct blk_bounce *b, unsigned int max_pages,
		    struct blk_budget *budget);
void blk_bounce_destroy(struct blk_bounce *b);

/*
 * Take @n pages into @pages. -ENOBUFS when the connection's cap or the
 * host's budget does not allow it now (retry after pages come back; see
 * over_budget), -ENOMEM when memory is short.
 */
int blk_bounce_get(struct blk_bounce *b, unsigned int n, void **pages);
void blk_bounce_put(struct blk_bounce *b, unsigned int n, void *const *pages);

/* True when no page is in use (the pool may be trimmed). */
static inline bool blk_bounce_idle(const struct blk_bounce *b)
{
	return b->nr_free == b->nr_total;
}

/* Give every slab back (to the system and the budget). Only when idle. */
void blk_bounce_trim(struct blk_bounce *b);

#endif /* LIBBLK_BOUNCE_H */

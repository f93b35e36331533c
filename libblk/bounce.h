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
#include <sys/uio.h>

#include "libblk/budget.h"
#include "libblk/fixed.h"

struct blk_bounce {
	void **free;
	unsigned int nr_free;
	unsigned int nr_total;
	unsigned int max;
	void **slabs;
	int *slab_buf; /* each slab's registered buffer, or -errno */
	unsigned int nr_slabs;
	struct blk_fixed *fixed; /* where slabs are registered; NULL: not */
	struct blk_budget *budget; /* shared; NULL: no host-wide limit */
	bool over_budget; /* the last refusal was the host's, not ours */
};

/*
 * Allow up to @max_pages pages, the slabs after the first also taken from
 * @budget (may be NULL), each registered in @fixed when it has room (may
 * be NULL); none is allocated yet.
 */
int blk_bounce_init(struct blk_bounce *b, unsigned int max_pages,
		    struct blk_budget *budget, struct blk_fixed *fixed);
void blk_bounce_destroy(struct blk_bounce *b);

/*
 * Take @n pages into @pages, in ascending order when they can be: pages
 * given back together come back together, so a request's data is often
 * one range of one slab (see blk_bounce_fixed_buf()). -ENOBUFS when the
 * connection's cap or the host's budget does not allow it now (retry after
 * pages come back; see over_budget), -ENOMEM when memory is short.
 */
int blk_bounce_get(struct blk_bounce *b, unsigned int n, void **pages);
void blk_bounce_put(struct blk_bounce *b, unsigned int n, void *const *pages);

/*
 * The registered buffer holding @iov's @n ranges when they follow each
 * other within one registered slab, so that one READ_FIXED or WRITE_FIXED
 * moves them; -1 otherwise.
 */
int blk_bounce_fixed_buf(const struct blk_bounce *b, const struct iovec *iov,
			 unsigned int n);

/* True when no page is in use (the pool may be trimmed). */
static inline bool blk_bounce_idle(const struct blk_bounce *b)
{
	return b->nr_free == b->nr_total;
}

/* Give every slab back (to the system and the budget). Only when idle. */
void blk_bounce_trim(struct blk_bounce *b);

#endif /* LIBBLK_BOUNCE_H */

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

struct blk_bounce {
	void **free;
	unsigned int nr_free;
	unsigned int nr_total;
	unsigned int max;
	void **slabs;
	unsigned int nr_slabs;
};

/* Allow up to @max_pages pages; none is allocated yet. */
int blk_bounce_init(struct blk_bounce *b, unsigned int max_pages);
void blk_bounce_destroy(struct blk_bounce *b);

/*
 * Take @n pages into @pages. -ENOBUFS when the cap does not allow it now
 * (retry after pages come back), -ENOMEM when memory is short.
 */
int blk_bounce_get(struct blk_bounce *b, unsigned int n, void **pages);
void blk_bounce_put(struct blk_bounce *b, unsigned int n, void *const *pages);

#endif /* LIBBLK_BOUNCE_H */

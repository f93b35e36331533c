// SPDX-License-Identifier: MIT
/*
 * Bounce page pools.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "libblk/blkif_abi.h"
#include "libblk/bounce.h"

#define SLAB_PAGES 256u /* 1 MiB at a time */

int blk_bounce_init(struct blk_bounce *b, unsigned int max_pages,
		    struct blk_budget *budget)
{
	*b = (struct blk_bounce){ .max = max_pages, .budget = budget };
	b->free = calloc(max_pages, sizeof(*b->free));
	b->slabs = calloc((max_pages + SLAB_PAGES - 1) / SLAB_PAGES,
			  sizeof(*b->slabs));
	if (!b->free || !b->slabs) {
		blk_bounce_destroy(b);
		return -ENOMEM;
	}
	return 0;
}

/* Slabs after the first count against the host's budget. */
static bool slab_budgeted(const struct blk_bounce *b, unsigned int index)
{
	return b->budget && index > 0;
}

void blk_bounce_trim(struct blk_bounce *b)
{
	for (unsigned int i = 0; i < b->nr_slabs; i++) {
		munmap(b->slabs[i], (size_t)SLAB_PAGES * BLKIF_PAGE_SIZE);
		if (slab_budgeted(b, i))
			blk_budget_give(b->budget, SLAB_PAGES);
	}
	b->nr_slabs = 0;
	b->nr_free = 0;
	b->nr_total = 0;
}

void blk_bounce_destroy(struct blk_bounce *b)
{
	blk_bounce_trim(b);
	free(b->slabs);
	free(b->free);
	*b = (struct blk_bounce){ 0 };
}

static int grow(struct blk_bounce *b)
{
	unsigned int n = b->max - b->nr_total;
	uint8_t *slab;

	if (n > SLAB_PAGES)
		n = SLAB_PAGES;
	if (slab_budgeted(b, b->nr_slabs) &&
	    !blk_budget_take(b->budget, SLAB_PAGES)) {
		b->over_budget = true;
		return -ENOBUFS;
	}
	slab = mmap(NULL, (size_t)SLAB_PAGES * BLKIF_PAGE_SIZE,
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slab == MAP_FAILED) {
		if (slab_budgeted(b, b->nr_slabs))
			blk_budget_give(b->budget, SLAB_PAGES);
		return -ENOMEM;
	}
	b->slabs[b->nr_slabs++] = slab;
	for (unsigned int i = 0; i < n; i++)
		b->free[b->nr_free++] = slab + (size_t)i * BLKIF_PAGE_SIZE;
	b->nr_total += n;
	return 0;
}

int blk_bounce_get(struct blk_bounce *b, unsigned int n, void **pages)
{
	b->over_budget = false;
	while (b->nr_free < n) {
		int ret;

		if (b->nr_total >= b->max)
			return -ENOBUFS;
		ret = grow(b);
		if (ret < 0)
			return ret;
	}
	for (unsigned int i = 0; i < n; i++)
		pages[i] = b->free[--b->nr_free];
	return 0;
}

void blk_bounce_put(struct blk_bounce *b, unsigned int n, void *const *pages)
{
	for (unsigned int i = 0; i < n; i++)
		b->free[b->nr_free++] = pages[i];
}

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

#define SLAB_BYTES ((size_t)SLAB_PAGES * BLKIF_PAGE_SIZE)

int blk_bounce_init(struct blk_bounce *b, unsigned int max_pages,
		    struct blk_budget *budget, struct blk_fixed *fixed)
{
	unsigned int max_slabs = (max_pages + SLAB_PAGES - 1) / SLAB_PAGES;

	*b = (struct blk_bounce){ .max = max_pages,
				  .budget = budget,
				  .fixed = fixed };
	b->free = calloc(max_pages, sizeof(*b->free));
	b->slabs = calloc(max_slabs, sizeof(*b->slabs));
	b->slab_buf = calloc(max_slabs, sizeof(*b->slab_buf));
	if (!b->free || !b->slabs || !b->slab_buf) {
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
		if (b->slab_buf[i] >= 0)
			blk_fixed_buf_del(b->fixed, b->slab_buf[i]);
		munmap(b->slabs[i], SLAB_BYTES);
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
	free(b->slab_buf);
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
	slab = mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slab == MAP_FAILED) {
		if (slab_budgeted(b, b->nr_slabs))
			blk_budget_give(b->budget, SLAB_PAGES);
		return -ENOMEM;
	}
	/* Refused (RLIMIT_MEMLOCK, a full table): the slab works unpinned. */
	b->slab_buf[b->nr_slabs] =
		b->fixed ? blk_fixed_buf_add(b->fixed, slab, SLAB_BYTES)
			 : -ENOSPC;
	b->slabs[b->nr_slabs++] = slab;
	/* The free list is a stack: the lowest page on top. */
	for (unsigned int i = n; i-- > 0;)
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
	/* The first on top, so that the next taker gets them in order. */
	for (unsigned int i = n; i-- > 0;)
		b->free[b->nr_free++] = pages[i];
}

int blk_bounce_fixed_buf(const struct blk_bounce *b, const struct iovec *iov,
			 unsigned int n)
{
	const uint8_t *start = iov[0].iov_base;
	const uint8_t *end = start + iov[0].iov_len;

	for (unsigned int i = 1; i < n; i++) {
		if (iov[i].iov_base != end)
			return -1;
		end += iov[i].iov_len;
	}
	for (unsigned int i = 0; i < b->nr_slabs; i++) {
		const uint8_t *slab = b->slabs[i];

		if (start >= slab && end <= slab + SLAB_BYTES)
			return b->slab_buf[i] >= 0 ? b->slab_buf[i] : -1;
	}
	return -1;
}

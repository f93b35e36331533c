/* SPDX-License-Identifier: MIT */
/*
 * A memory budget shared by every engine of a process: how many bounce
 * pages all connections together may hold beyond the first slab each one
 * is always allowed (so every guest can make progress). A connection over
 * budget waits for pages; it is slowed, never failed, and other guests'
 * requests are not touched.
 *
 * Any thread may take and give; the count is atomic.
 */
#ifndef LIBBLK_BUDGET_H
#define LIBBLK_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>

struct blk_budget {
	atomic_long pages_left;
};

static inline void blk_budget_init(struct blk_budget *b, long pages)
{
	atomic_init(&b->pages_left, pages);
}

/* Take @n pages; false (and nothing taken) when they are not there. */
static inline bool blk_budget_take(struct blk_budget *b, long n)
{
	long left = atomic_load(&b->pages_left);

	do {
		if (left < n)
			return false;
	} while (
		!atomic_compare_exchange_weak(&b->pages_left, &left, left - n));
	return true;
}

static inline void blk_budget_give(struct blk_budget *b, long n)
{
	atomic_fetch_add(&b->pages_left, n);
}

#endif /* LIBBLK_BUDGET_H */

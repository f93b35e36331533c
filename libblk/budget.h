/* SPDX-License-Identifier: MIT */
/*
 * A count of something every engine of a process shares, and that no
 * ring may take so much of that the others cannot work:
 *
 * - bounce pages, beyond the first slab each connection is always allowed
 *   (so every guest can make progress); a connection over budget waits
 *   for pages, slowed, never failed;
 * - persistent grant mappings, which use dom0's grant maptrack (a
 *   host-wide table Xen sizes at boot) and its address space; a ring over
 *   budget copies instead of mapping, and rings holding more than their
 *   share give idle mappings back while others are refused;
 * - the pages of the rings themselves, mapped for as long as a ring is
 *   connected: paid first (blk_budget_take_ring()), since a guest cannot
 *   work without its ring and can without persistent grants. Ring pages
 *   alone never exceed the budget; a ring that would make them is refused.
 *
 * Any thread may take and give; every field is atomic or set once before
 * the engines start.
 */
#ifndef LIBBLK_BUDGET_H
#define LIBBLK_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct blk_budget {
	atomic_long left;
	long total;
	atomic_long rings; /* of it, ring pages (blk_budget_take_ring()) */
	atomic_long holders; /* rings drawing on it, for blk_budget_share() */
	atomic_ulong refusals; /* takes that failed, for blk_budget_refusals()
				*/
};

static inline void blk_budget_init(struct blk_budget *b, long total)
{
	atomic_init(&b->left, total);
	b->total = total;
	atomic_init(&b->rings, 0);
	atomic_init(&b->holders, 0);
	atomic_init(&b->refusals, 0);
}

/* Take @n; false (and nothing taken) when they are not there. */
static inline bool blk_budget_take(struct blk_budget *b, long n)
{
	long left = atomic_load(&b->left);

	do {
		if (left < n)
			return false;
	} while (!atomic_compare_exchange_weak(&b->left, &left, left - n));
	return true;
}

static inline void blk_budget_give(struct blk_budget *b, long n)
{
	atomic_fetch_add(&b->left, n);
}

/*
 * A take failed and the taker goes without. Holders compare
 * blk_budget_refusals() between their looks: when it moved, others went
 * without, and those above their share should give back what they can.
 */
static inline void blk_budget_refused(struct blk_budget *b)
{
	atomic_fetch_add_explicit(&b->refusals, 1, memory_order_relaxed);
}

static inline unsigned long blk_budget_refusals(struct blk_budget *b)
{
	return atomic_load_explicit(&b->refusals, memory_order_relaxed);
}

/*
 * Take @n pages of a ring; false (and nothing taken) when ring pages
 * would exceed the whole budget. What persistent grants hold does not
 * refuse a ring: it is taken from them (left may go below zero, and their
 * takes fail until it is back), and they are told to give back what they
 * hold beyond their share, which leaves the rings out. Until they have,
 * mappings may exceed the budget by at most the new ring's pages.
 */
static inline bool blk_budget_take_ring(struct blk_budget *b, long n)
{
	long rings = atomic_load(&b->rings);

	do {
		if (rings + n > b->total)
			return false;
	} while (!atomic_compare_exchange_weak(&b->rings, &rings, rings + n));
	if (atomic_fetch_sub(&b->left, n) < n)
		blk_budget_refused(b);
	return true;
}

static inline void blk_budget_give_ring(struct blk_budget *b, long n)
{
	atomic_fetch_sub(&b->rings, n);
	blk_budget_give(b, n);
}

/* How many of the budget's pages rings hold now. */
static inline long blk_budget_ring_pages(struct blk_budget *b)
{
	return atomic_load_explicit(&b->rings, memory_order_relaxed);
}

/* A ring starts or stops drawing on @b: the share is split among them. */
static inline void blk_budget_join(struct blk_budget *b)
{
	atomic_fetch_add_explicit(&b->holders, 1, memory_order_relaxed);
}

static inline void blk_budget_leave(struct blk_budget *b)
{
	atomic_fetch_sub_explicit(&b->holders, 1, memory_order_relaxed);
}

/* An equal part of what the rings' own pages leave, for each holder. */
static inline long blk_budget_share(struct blk_budget *b)
{
	long holders = atomic_load_explicit(&b->holders, memory_order_relaxed);
	long room = b->total - blk_budget_ring_pages(b);

	return holders > 0 ? room / holders : room;
}

#endif /* LIBBLK_BUDGET_H */

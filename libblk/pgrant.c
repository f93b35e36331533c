// SPDX-License-Identifier: MIT
/*
 * The persistent-grant cache: a chained hash on the grant reference and an
 * LRU list of idle mappings, both over one array of entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "libblk/blkif_abi.h"
#include "libblk/pgrant.h"

struct blk_pgrant_entry {
	uint32_t gref;
	uint32_t users;
	void *addr;
	int buf; /* its registered buffer, or -1 */
	int32_t hnext; /* hash chain, or free list */
	int32_t lru_prev, lru_next; /* valid while idle */
};

static uint32_t bucket_of(const struct blk_pgrant_cache *c, uint32_t gref)
{
	return (gref * 2654435761u) & (c->nr_buckets - 1);
}

int blk_pgrant_init(struct blk_pgrant_cache *c, uint32_t cap,
		    struct blk_budget *budget, xengnttab_handle *xgt,
		    uint32_t domid, struct blk_fixed *fixed)
{
	*c = (struct blk_pgrant_cache){
		.cap = cap,
		.budget = budget,
		.xgt = xgt,
		.domid = domid,
		.fixed = fixed,
		.free_head = -1,
		.lru_head = -1,
		.lru_tail = -1,
	};
	c->nr_buckets = 1;
	while (c->nr_buckets < 2 * cap)
		c->nr_buckets <<= 1;
	c->entries = calloc(cap, sizeof(*c->entries));
	c->buckets = malloc(c->nr_buckets * sizeof(*c->buckets));
	if (!c->entries || !c->buckets) {
		free(c->entries);
		free(c->buckets);
		*c = (struct blk_pgrant_cache){ .free_head = -1 };
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->nr_buckets; i++)
		c->buckets[i] = -1;
	for (uint32_t i = cap; i-- > 0;) {
		c->entries[i].hnext = c->free_head;
		c->free_head = (int32_t)i;
	}
	if (budget)
		blk_budget_join(budget);
	return 0;
}

static void lru_unlink(struct blk_pgrant_cache *c, int32_t i)
{
	struct blk_pgrant_entry *e = &c->entries[i];

	if (e->lru_prev >= 0)
		c->entries[e->lru_prev].lru_next = e->lru_next;
	else
		c->lru_head = e->lru_next;
	if (e->lru_next >= 0)
		c->entries[e->lru_next].lru_prev = e->lru_prev;
	else
		c->lru_tail = e->lru_prev;
}

static void lru_append(struct blk_pgrant_cache *c, int32_t i)
{
	struct blk_pgrant_entry *e = &c->entries[i];

	e->lru_next = -1;
	e->lru_prev = c->lru_tail;
	if (c->lru_tail >= 0)
		c->entries[c->lru_tail].lru_next = i;
	else
		c->lru_head = i;
	c->lru_tail = i;
}

static int32_t lookup(const struct blk_pgrant_cache *c, uint32_t gref)
{
	int32_t i = c->buckets[bucket_of(c, gref)];

	while (i >= 0 && c->entries[i].gref != gref)
		i = c->entries[i].hnext;
	return i;
}

/*
 * Register entry @i's page. A refusal (a kernel that cannot pin grant
 * mappings, RLIMIT_MEMLOCK, a full table) ends registering for this cache:
 * one failed system call, not one per mapping.
 */
static void register_entry(struct blk_pgrant_cache *c, int32_t i)
{
	struct blk_pgrant_entry *e = &c->entries[i];

	e->buf = -1;
	if (!c->fixed || c->fixed_refused)
		return;
	e->buf = blk_fixed_buf_add(c->fixed, e->addr, BLKIF_PAGE_SIZE);
	if (e->buf >= 0) {
		c->nr_registered++;
	} else {
		e->buf = -1;
		c->fixed_refused = true;
	}
}

/* Before the page is unmapped: the kernel's pin goes first. */
static void unregister_entry(struct blk_pgrant_cache *c, int32_t i)
{
	struct blk_pgrant_entry *e = &c->entries[i];

	if (e->buf >= 0) {
		blk_fixed_buf_del(c->fixed, e->buf);
		c->nr_registered--;
	}
	e->buf = -1;
}

/* Apply @fn to every mapped entry. */
static void for_each_mapped(struct blk_pgrant_cache *c,
			    void (*fn)(struct blk_pgrant_cache *, int32_t))
{
	for (uint32_t b = 0; c->buckets && b < c->nr_buckets; b++)
		for (int32_t i = c->buckets[b]; i >= 0; i = c->entries[i].hnext)
			fn(c, i);
}

static void unhash(struct blk_pgrant_cache *c, int32_t i)
{
	int32_t *pp = &c->buckets[bucket_of(c, c->entries[i].gref)];

	while (*pp != i)
		pp = &c->entries[*pp].hnext;
	*pp = c->entries[i].hnext;
}

/* Unmap the oldest idle mapping and return its entry, or -1. */
static int32_t evict(struct blk_pgrant_cache *c)
{
	int32_t i = c->lru_head;

	if (i < 0)
		return -1;
	lru_unlink(c, i);
	unhash(c, i);
	unregister_entry(c, i);
	xengnttab_unmap(c->xgt, c->entries[i].addr, 1);
	if (c->budget)
		blk_budget_give(c->budget, 1);
	c->nr--;
	return i;
}

static int32_t take_entry(struct blk_pgrant_cache *c)
{
	int32_t i = c->free_head;

	if (i >= 0)
		c->free_head = c->entries[i].hnext;
	return i;
}

static void free_entry(struct blk_pgrant_cache *c, int32_t i)
{
	c->entries[i].hnext = c->free_head;
	c->free_head = i;
}

/* Refusals that trigger ageing: a few ring's worth of segments. */
#define AGE_AFTER_MISSES 4096u

void blk_pgrant_age(struct blk_pgrant_cache *c)
{
	uint32_t n = c->cap / 8 ? c->cap / 8 : 1;

	if (c->misses < AGE_AFTER_MISSES)
		return;
	c->misses = 0;
	c->paused = false;
	while (n-- > 0) {
		int32_t i = evict(c);

		if (i < 0)
			break;
		free_entry(c, i);
	}
}

uint32_t blk_pgrant_shrink(struct blk_pgrant_cache *c, uint32_t keep)
{
	uint32_t n = 0;
	int32_t i;

	while (c->nr > keep && (i = evict(c)) >= 0) {
		free_entry(c, i);
		n++;
	}
	return n;
}

/* A free entry, paid for, or -1 with errno ENOSPC. */
static int32_t take_paid_entry(struct blk_pgrant_cache *c)
{
	int32_t i = c->paused ? -1 : take_entry(c);

	if (i >= 0 && c->budget && !blk_budget_take(c->budget, 1)) {
		blk_budget_refused(c->budget);
		free_entry(c, i);
		i = -1;
	}
	if (i < 0) {
		c->misses++;
		errno = ENOSPC;
	}
	return i;
}

static void free_paid_entry(struct blk_pgrant_cache *c, int32_t i)
{
	if (c->budget)
		blk_budget_give(c->budget, 1);
	free_entry(c, i);
}

void *blk_pgrant_get(struct blk_pgrant_cache *c, uint32_t gref)
{
	int32_t i = lookup(c, gref);
	struct blk_pgrant_entry *e;
	void *addr;

	if (i >= 0) {
		e = &c->entries[i];
		if (e->users++ == 0)
			lru_unlink(c, i);
		return e->addr;
	}
	i = take_paid_entry(c);
	if (i < 0)
		return NULL;
	/* blkif.h: persistent grants are always mapped writable. */
	addr = xengnttab_map_grant_ref(c->xgt, c->domid, gref,
				       PROT_READ | PROT_WRITE);
	e = &c->entries[i];
	if (!addr) {
		int err = errno ? errno : EINVAL;

		free_paid_entry(c, i);
		c->map_errors++;
		c->paused = true;
		errno = err;
		return NULL;
	}
	*e = (struct blk_pgrant_entry){ .gref = gref,
					.users = 1,
					.addr = addr };
	register_entry(c, i);
	e->hnext = c->buckets[bucket_of(c, gref)];
	c->buckets[bucket_of(c, gref)] = i;
	c->nr++;
	return addr;
}

int blk_pgrant_fixed_buf(const struct blk_pgrant_cache *c, uint32_t gref)
{
	/* No second lookup a request where none is (Debian 12, xensim). */
	int32_t i = c->nr_registered ? lookup(c, gref) : -1;

	return i >= 0 ? c->entries[i].buf : -1;
}

void blk_pgrant_set_fixed(struct blk_pgrant_cache *c, struct blk_fixed *fixed)
{
	for_each_mapped(c, unregister_entry);
	c->fixed = fixed;
	c->fixed_refused = false;
	for_each_mapped(c, register_entry);
}

static void unmap_entry(struct blk_pgrant_cache *c, int32_t i)
{
	unregister_entry(c, i);
	xengnttab_unmap(c->xgt, c->entries[i].addr, 1);
}

void blk_pgrant_put(struct blk_pgrant_cache *c, uint32_t gref)
{
	int32_t i = lookup(c, gref);

	if (i >= 0 && --c->entries[i].users == 0)
		lru_append(c, i);
}

void blk_pgrant_destroy(struct blk_pgrant_cache *c)
{
	for_each_mapped(c, unmap_entry);
	if (c->budget && c->entries) {
		blk_budget_give(c->budget, c->nr);
		blk_budget_leave(c->budget);
	}
	free(c->entries);
	free(c->buckets);
	*c = (struct blk_pgrant_cache){ .free_head = -1 };
}

// SPDX-License-Identifier: MIT
/*
 * The persistent-grant cache against xensim's grant table: hits reuse one
 * mapping, a refused mapping pauses mapping until ageing, a full cache
 * refuses instead of thrashing, ageing makes room, busy mappings are
 * never dropped, a host budget shared by two caches bounds both and is
 * paid back by shrinking and destroy, which unmaps everything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xengnttab.h>

#include "libblk/pgrant.h"
#include "tests/check.h"
#include "tools/xensim/xensim.h"

#define GUEST 9u
#define PAGES 64u
#define CAP 16u
#define BUDGET 24u

static const char *dir;

static uint32_t mapped(void)
{
	struct xensim_domain_stats st;

	REQUIRE_EQ(xensim_domain_stats(dir, GUEST, &st), 0);
	return st.mapped_grants;
}

/* Ask for @ref until the cache has refused 4096 times: ageing's cue. */
static void refuse_until_ageing(struct blk_pgrant_cache *c, uint32_t ref)
{
	for (unsigned int i = 0; i < 5000; i++)
		blk_pgrant_get(c, ref);
}

/*
 * Two caches on one budget of BUDGET mappings: the second gets what the
 * first left, no more; shrinking the first to its share pays the second.
 */
static void check_budget(xengnttab_handle *h, const int *refs)
{
	struct blk_pgrant_cache a, b;
	struct blk_budget budget;

	blk_budget_init(&budget, BUDGET);
	REQUIRE_EQ(blk_pgrant_init(&a, CAP, &budget, h, GUEST), 0);
	REQUIRE_EQ(blk_pgrant_init(&b, CAP, &budget, h, GUEST), 0);
	CHECK_EQ(blk_budget_share(&budget), BUDGET / 2);
	for (unsigned int i = 0; i < CAP; i++) {
		REQUIRE(blk_pgrant_get(&a, (uint32_t)refs[i]) != NULL);
		blk_pgrant_put(&a, (uint32_t)refs[i]);
	}
	for (unsigned int i = CAP; i < CAP + BUDGET - CAP; i++) {
		REQUIRE(blk_pgrant_get(&b, (uint32_t)refs[i]) != NULL);
		blk_pgrant_put(&b, (uint32_t)refs[i]);
	}
	CHECK_EQ(mapped(), BUDGET);
	errno = 0;
	CHECK(blk_pgrant_get(&b, (uint32_t)refs[CAP + BUDGET]) == NULL);
	CHECK_EQ(errno, ENOSPC);
	CHECK_EQ(blk_budget_refusals(&budget), 1);
	CHECK_EQ(mapped(), BUDGET);

	/* One pinned mapping of a stays; the idle ones go down to the share. */
	REQUIRE(blk_pgrant_get(&a, (uint32_t)refs[0]) != NULL);
	CHECK_EQ(blk_pgrant_shrink(&a, 0), CAP - 1);
	CHECK_EQ(blk_pgrant_count(&a), 1);
	blk_pgrant_put(&a, (uint32_t)refs[0]);
	CHECK(blk_pgrant_get(&b, (uint32_t)refs[CAP + BUDGET]) != NULL);
	blk_pgrant_put(&b, (uint32_t)refs[CAP + BUDGET]);
	CHECK_EQ(mapped(), 1 + BUDGET - CAP + 1);

	blk_pgrant_destroy(&a);
	blk_pgrant_destroy(&b);
	CHECK_EQ(mapped(), 0);
	CHECK_EQ(atomic_load(&budget.left), BUDGET);
	CHECK_EQ(atomic_load(&budget.holders), 0);
}

int main(void)
{
	struct blk_pgrant_cache c;
	struct xensim_domain *g;
	xengnttab_handle *h;
	int refs[PAGES];
	uint8_t *p, *q;

	dir = check_make_dir("test-pgrant");
	setenv("XENSIM_DIR", dir, 1);
	unsetenv("XENSIM_DOMID");
	REQUIRE_EQ(xensim_host_init(dir), 0);
	REQUIRE_EQ(xensim_domain_create(dir, GUEST, PAGES), 0);
	REQUIRE_EQ(xensim_domain_open(dir, GUEST, &g), 0);
	for (unsigned int i = 0; i < PAGES; i++) {
		memset(xensim_domain_page(g, i), (int)i, XENSIM_PAGE_SIZE);
		refs[i] = xensim_grant_access(g, 0, i, false);
		REQUIRE(refs[i] > 0);
	}
	h = xengnttab_open(NULL, 0);
	REQUIRE(h != NULL);
	REQUIRE_EQ(blk_pgrant_init(&c, CAP, NULL, h, GUEST), 0);

	/* A hit is the same mapping, and maps nothing new. */
	p = blk_pgrant_get(&c, (uint32_t)refs[5]);
	REQUIRE(p != NULL);
	CHECK_EQ(p[100], 5);
	q = blk_pgrant_get(&c, (uint32_t)refs[5]);
	CHECK(q == p);
	CHECK_EQ(mapped(), 1);
	blk_pgrant_put(&c, (uint32_t)refs[5]);
	blk_pgrant_put(&c, (uint32_t)refs[5]);

	/*
	 * An ungranted reference is refused with the mapping's error, and
	 * nothing new is mapped until ageing: a full maptrack would refuse
	 * every try.
	 */
	errno = 0;
	CHECK(blk_pgrant_get(&c, 4000) == NULL);
	CHECK(errno != 0 && errno != ENOSPC);
	CHECK_EQ(c.map_errors, 1);
	errno = 0;
	CHECK(blk_pgrant_get(&c, (uint32_t)refs[6]) == NULL);
	CHECK_EQ(errno, ENOSPC);
	CHECK(blk_pgrant_get(&c, (uint32_t)refs[5]) != NULL); /* a hit */
	blk_pgrant_put(&c, (uint32_t)refs[5]);
	refuse_until_ageing(&c, (uint32_t)refs[6]);
	blk_pgrant_age(&c);
	CHECK(blk_pgrant_get(&c, (uint32_t)refs[6]) != NULL);
	blk_pgrant_put(&c, (uint32_t)refs[6]);
	CHECK_EQ(c.map_errors, 1);

	/* Fill the cache; the next new grant is refused, not swapped in. */
	for (unsigned int i = 0; i < CAP; i++) {
		REQUIRE(blk_pgrant_get(&c, (uint32_t)refs[i]) != NULL);
		blk_pgrant_put(&c, (uint32_t)refs[i]);
	}
	CHECK_EQ(blk_pgrant_count(&c), CAP);
	CHECK_EQ(mapped(), CAP);
	errno = 0;
	CHECK(blk_pgrant_get(&c, (uint32_t)refs[CAP]) == NULL);
	CHECK_EQ(errno, ENOSPC);
	CHECK_EQ(blk_pgrant_count(&c), CAP);

	/* Pin the oldest; ageing must drop idle ones only, oldest first. */
	REQUIRE(blk_pgrant_get(&c, (uint32_t)refs[0]) != NULL);
	refuse_until_ageing(&c, (uint32_t)refs[CAP]);
	blk_pgrant_age(&c);
	CHECK_EQ(blk_pgrant_count(&c), CAP - CAP / 8);
	CHECK_EQ(mapped(), CAP - CAP / 8);
	p = blk_pgrant_get(&c, (uint32_t)refs[CAP]);
	REQUIRE(p != NULL);
	CHECK_EQ(p[7], CAP);
	/* refs[0] was pinned and is still there: getting it maps nothing. */
	REQUIRE(blk_pgrant_get(&c, (uint32_t)refs[0]) != NULL);
	CHECK_EQ(mapped(), CAP - CAP / 8 + 1);

	blk_pgrant_destroy(&c);
	CHECK_EQ(mapped(), 0);
	check_budget(h, refs);
	xengnttab_close(h);
	xensim_domain_close(g);
	return check_done("test-pgrant");
}

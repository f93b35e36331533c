// SPDX-License-Identifier: MIT
/*
 * The persistent-grant cache against xensim's grant table: hits reuse one
 * mapping, a refused mapping pauses mapping until ageing, a full cache
 * refuses instead of thrashing, ageing makes room, busy mappings are
 * never dropped, a host budget shared by two caches bounds both and is
 * paid back by shrinking and destroy, which unmaps everything; with an
 * io_uring, mappings are registered buffers that READ_FIXED fills, and
 * give their slots back when unmapped or moved to another ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
	REQUIRE_EQ(blk_pgrant_init(&a, CAP, &budget, h, GUEST, NULL), 0);
	REQUIRE_EQ(blk_pgrant_init(&b, CAP, &budget, h, GUEST, NULL), 0);
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

/* A file of one page of @byte. */
static int page_file(int byte)
{
	char path[300], page[XENSIM_PAGE_SIZE];
	int fd;

	snprintf(path, sizeof(path), "%s/page", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	memset(page, byte, sizeof(page));
	REQUIRE_EQ(pwrite(fd, page, sizeof(page), 0), (ssize_t)sizeof(page));
	return fd;
}

/* One READ_FIXED of the file's page into registered buffer @buf at @to. */
static int read_fixed(struct io_uring *ring, int fd, void *to, int buf)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	io_uring_prep_read_fixed(sqe, fd, to, XENSIM_PAGE_SIZE, 0, buf);
	REQUIRE_EQ(io_uring_submit_and_wait(ring, 1), 1);
	REQUIRE_EQ(io_uring_peek_cqe(ring, &cqe), 0);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/*
 * The guest's page, registered, is filled by READ_FIXED through its slot;
 * moving the cache to no ring and back, and unmapping it, give the slot
 * back.
 */
static void check_pinned(struct blk_pgrant_cache *c, struct io_uring *ring,
			 struct blk_fixed *fixed, struct xensim_domain *g,
			 uint8_t *p, int buf, const int *refs)
{
	unsigned int all = fixed->bufs.nr_free + 1;
	int fd = page_file(0xa5);

	CHECK_EQ(c->nr_registered, 1);
	CHECK_EQ(read_fixed(ring, fd, p, buf), XENSIM_PAGE_SIZE);
	CHECK_EQ(((uint8_t *)xensim_domain_page(g, 3))[17], 0xa5);
	close(fd);
	blk_pgrant_put(c, (uint32_t)refs[3]);
	blk_pgrant_set_fixed(c, NULL);
	CHECK_EQ(fixed->bufs.nr_free, all);
	CHECK_EQ(blk_pgrant_fixed_buf(c, (uint32_t)refs[3]), -1);
	blk_pgrant_set_fixed(c, fixed);
	CHECK(blk_pgrant_fixed_buf(c, (uint32_t)refs[3]) >= 0);
	CHECK_EQ(blk_pgrant_shrink(c, 0), 1);
	CHECK_EQ(fixed->bufs.nr_free, all);
	CHECK_EQ(c->nr_registered, 0);
}

/*
 * The kernel would not pin the page (xensim's guest memory is a file on
 * disk, and Linux refuses long-term pins of such shared pages): the cache
 * stops trying, holds no slot, and serves the mapping unregistered.
 */
static void check_refused(struct blk_pgrant_cache *c, struct blk_fixed *fixed,
			  const int *refs)
{
	unsigned int all = fixed->bufs.nr_free;

	CHECK(c->fixed_refused);
	CHECK_EQ(c->nr_registered, 0);
	REQUIRE(blk_pgrant_get(c, (uint32_t)refs[4]) != NULL);
	CHECK_EQ(blk_pgrant_fixed_buf(c, (uint32_t)refs[4]), -1);
	CHECK_EQ(fixed->bufs.nr_free, all);
	blk_pgrant_put(c, (uint32_t)refs[4]);
	blk_pgrant_put(c, (uint32_t)refs[3]);
	/* A move to another ring tries again. */
	blk_pgrant_set_fixed(c, fixed);
	CHECK(c->fixed_refused);
	CHECK_EQ(fixed->bufs.nr_free, all);
}

/*
 * Mappings in a ring's table of registered buffers: each one registered
 * (check_pinned()), or, where the kernel refuses, none (check_refused());
 * either way destroy leaves every slot free and nothing mapped.
 */
static void check_registered(xengnttab_handle *h, const int *refs,
			     struct xensim_domain *g)
{
	struct blk_pgrant_cache c;
	struct io_uring ring;
	struct blk_fixed fixed;
	unsigned int all;
	uint8_t *p;
	int buf;

	REQUIRE_EQ(io_uring_queue_init(4, &ring, 0), 0);
	blk_fixed_init(&fixed, &ring);
	all = fixed.bufs.nr_free;
	REQUIRE_EQ(blk_pgrant_init(&c, CAP, NULL, h, GUEST, &fixed), 0);
	p = blk_pgrant_get(&c, (uint32_t)refs[3]);
	REQUIRE(p != NULL);
	buf = blk_pgrant_fixed_buf(&c, (uint32_t)refs[3]);
	if (buf >= 0) {
		CHECK_EQ(fixed.bufs.nr_free, all - 1);
		check_pinned(&c, &ring, &fixed, g, p, buf, refs);
	} else {
		printf("# the kernel did not register the mapping: checking "
		       "the fall-back\n");
		check_refused(&c, &fixed, refs);
	}
	blk_pgrant_destroy(&c);
	CHECK_EQ(fixed.bufs.nr_free, all);
	CHECK_EQ(mapped(), 0);
	blk_fixed_destroy(&fixed);
	io_uring_queue_exit(&ring);
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
	REQUIRE_EQ(blk_pgrant_init(&c, CAP, NULL, h, GUEST, NULL), 0);

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
	check_registered(h, refs, g);
	xengnttab_close(h);
	xensim_domain_close(g);
	return check_done("test-pgrant");
}

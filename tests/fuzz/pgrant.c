// SPDX-License-Identifier: MIT
/*
 * Fuzz harness: the persistent-grant cache (libblk/pgrant.c) driven by
 * grant references a guest chooses, against xensim's grant table: the
 * same fake libxengnttab and shared grant state the daemon uses in the
 * integration tests. The guest's segments name any references they like
 * (granted, read-only, revoked, never granted, the same one many times);
 * the engine pins them for a request and unpins them after, and ages the
 * cache when it keeps refusing.
 *
 * Input: one byte for the cache's capacity (1 to 32), one for the host
 * budget it draws on (1 to 40 mappings), then steps of an opcode byte and
 * its operands (see enum step).
 *
 * Invariants:
 * - a reference the guest granted writable maps, unless the cache is
 *   full, the budget spent or mapping paused after an error (ENOSPC, and
 *   only then); anything else (never granted, read-only, revoked) is
 *   refused with an error, maps nothing and pauses mapping until the next
 *   ageing;
 * - the budget pays for every mapping held, and gets them all back;
 * - shrinking leaves at most what was asked for, or the pinned ones;
 * - a mapping is the guest's page: its bytes, and a write through it is
 *   seen by the guest; a reference cached twice is the same mapping;
 * - the cache holds at most its capacity, and exactly as many mappings
 *   as the simulated hypervisor counts for the guest; ageing drops only
 *   idle mappings, at most an eighth of the cache;
 * - a guest cannot revoke a grant the cache has pinned;
 * - destroying the cache leaves no mapping behind.
 */
#include <errno.h>
#include <stdbool.h>
#include <xengnttab.h>

#include "libblk/pgrant.h"
#include "tests/fuzz/fuzz.h"
#include "tools/xensim/xensim.h"

#define GUEST 9u
#define PAGES 48u
#define MAX_PINS 512u
#define MAX_STEPS 2000u

enum step {
	GET, /* u8: a page's current reference, or a raw u32 reference */
	PUT, /* u8: one of the pinned references */
	AGE, /* after enough refusals, as the engine would */
	REVOKE, /* u8: the guest revokes a page's grant and grants it again */
	TOUCH, /* u8: write through a pinned mapping */
	SHRINK, /* u8: how many mappings to keep */
	NR_STEPS
};

/* The simulated host and guest: set up once, shared by every input. */
static struct {
	char dir[256];
	struct xensim_domain *guest;
	xengnttab_handle *xgt;
	int ref[PAGES]; /* each page's current grant */
	bool readonly[PAGES];
} sim;

struct pin {
	uint32_t gref;
	uint8_t *addr;
};

struct run {
	struct blk_pgrant_cache cache;
	struct blk_budget budget;
	struct pin pins[MAX_PINS];
	unsigned int nr_pins;
};

static uint8_t pattern(unsigned int page, unsigned int byte)
{
	return (uint8_t)(page * 37u + byte);
}

static void remove_sim_dir(void)
{
	char cmd[sizeof(sim.dir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sim.dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", sim.dir);
}

static void sim_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(sim.dir, sizeof(sim.dir), "%s/fuzz-pgrant.XXXXXX",
		 tmp ? tmp : "/tmp");
	FUZZ_ASSERT(mkdtemp(sim.dir) != NULL);
	atexit(remove_sim_dir);
	setenv("XENSIM_DIR", sim.dir, 1);
	unsetenv("XENSIM_DOMID");
	FUZZ_ASSERT(xensim_host_init(sim.dir) == 0);
	FUZZ_ASSERT(xensim_domain_create(sim.dir, GUEST, PAGES) == 0);
	FUZZ_ASSERT(xensim_domain_open(sim.dir, GUEST, &sim.guest) == 0);
	for (unsigned int p = 0; p < PAGES; p++) {
		uint8_t *page = xensim_domain_page(sim.guest, p);

		for (unsigned int b = 0; b < XENSIM_PAGE_SIZE; b++)
			page[b] = pattern(p, b);
		sim.readonly[p] = p % 8 == 7;
		sim.ref[p] =
			xensim_grant_access(sim.guest, 0, p, sim.readonly[p]);
		FUZZ_ASSERT(sim.ref[p] > 0);
	}
	sim.xgt = xengnttab_open(NULL, 0);
	FUZZ_ASSERT(sim.xgt != NULL);
}

/* The page @gref grants now, or -1 when it grants nothing. */
static int page_of(uint32_t gref)
{
	for (unsigned int p = 0; p < PAGES; p++)
		if ((uint32_t)sim.ref[p] == gref)
			return (int)p;
	return -1;
}

static uint32_t mapped_by_host(void)
{
	struct xensim_domain_stats st;

	FUZZ_ASSERT(xensim_domain_stats(sim.dir, GUEST, &st) == 0);
	return st.mapped_grants;
}

static void check_is_page(const uint8_t *addr, int page)
{
	static const unsigned int probes[] = { 0, 1, 511, 2048, 4095 };

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		FUZZ_ASSERT(addr[probes[i]] ==
			    pattern((unsigned int)page, probes[i]));
}

static bool pinned(const struct run *r, uint32_t gref)
{
	for (unsigned int i = 0; i < r->nr_pins; i++)
		if (r->pins[i].gref == gref)
			return true;
	return false;
}

static void step_get(struct run *r, struct fuzz_input *in)
{
	unsigned int pick = (unsigned int)fuzz_take(in, 1);
	uint32_t gref = pick < 2 * PAGES ? (uint32_t)sim.ref[pick % PAGES]
					 : (uint32_t)fuzz_take(in, 4);
	int page = page_of(gref);
	uint32_t before = blk_pgrant_count(&r->cache);
	bool paused = r->cache.paused;
	uint8_t *addr;

	errno = 0;
	addr = blk_pgrant_get(&r->cache, gref);
	if (!addr) {
		FUZZ_ASSERT(errno != 0);
		if (errno == ENOSPC) {
			FUZZ_ASSERT(before == r->cache.cap ||
				    atomic_load(&r->budget.left) == 0 ||
				    paused);
		} else {
			FUZZ_ASSERT(page < 0 || sim.readonly[page]);
			FUZZ_ASSERT(r->cache.paused);
		}
		FUZZ_ASSERT(blk_pgrant_count(&r->cache) == before);
		return;
	}
	FUZZ_ASSERT(page >= 0 && !sim.readonly[page]);
	check_is_page(addr, page);
	for (unsigned int i = 0; i < r->nr_pins; i++)
		if (r->pins[i].gref == gref)
			FUZZ_ASSERT(r->pins[i].addr == addr);
	if (r->nr_pins == MAX_PINS) {
		blk_pgrant_put(&r->cache, gref);
		return;
	}
	r->pins[r->nr_pins++] = (struct pin){ gref, addr };
}

static void step_put(struct run *r, struct fuzz_input *in)
{
	unsigned int i;

	if (r->nr_pins == 0)
		return;
	i = (unsigned int)fuzz_take(in, 1) % r->nr_pins;
	blk_pgrant_put(&r->cache, r->pins[i].gref);
	r->pins[i] = r->pins[--r->nr_pins];
}

static void step_age(struct run *r)
{
	uint32_t before = blk_pgrant_count(&r->cache);
	uint32_t most = r->cache.cap / 8 ? r->cache.cap / 8 : 1;

	r->cache.misses = UINT32_MAX; /* "after many refusals" */
	blk_pgrant_age(&r->cache);
	FUZZ_ASSERT(!r->cache.paused);
	FUZZ_ASSERT(blk_pgrant_count(&r->cache) + most >= before);
	/* Every pinned mapping survives, still the guest's page. */
	for (unsigned int i = 0; i < r->nr_pins; i++)
		check_is_page(r->pins[i].addr, page_of(r->pins[i].gref));
}

static void step_revoke(struct run *r, struct fuzz_input *in)
{
	unsigned int p = (unsigned int)fuzz_take(in, 1) % PAGES;
	bool was_pinned = pinned(r, (uint32_t)sim.ref[p]);
	int ret = xensim_grant_end(sim.guest, (uint32_t)sim.ref[p]);

	if (ret < 0) {
		/* Only a mapping keeps a grant from being revoked. */
		FUZZ_ASSERT(ret == -EBUSY);
		return;
	}
	FUZZ_ASSERT(!was_pinned);
	sim.ref[p] = xensim_grant_access(sim.guest, 0, p, sim.readonly[p]);
	FUZZ_ASSERT(sim.ref[p] > 0);
}

/* A write through the mapping is a write to the guest's page. */
static void step_touch(struct run *r, struct fuzz_input *in)
{
	const unsigned int at = 100;
	struct pin *pin;
	uint8_t *guest_page, want;
	int page;

	if (r->nr_pins == 0)
		return;
	pin = &r->pins[fuzz_take(in, 1) % r->nr_pins];
	page = page_of(pin->gref);
	guest_page = xensim_domain_page(sim.guest, (uint32_t)page);
	want = pattern((unsigned int)page, at) ^ 0xff;
	pin->addr[at] ^= 0xff;
	FUZZ_ASSERT(guest_page[at] == want);
	pin->addr[at] ^= 0xff;
}

/* Distinct references pinned now: what shrinking must leave mapped. */
static uint32_t nr_pinned_grants(const struct run *r)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < r->nr_pins; i++) {
		unsigned int j = 0;

		while (j < i && r->pins[j].gref != r->pins[i].gref)
			j++;
		n += j == i;
	}
	return n;
}

static void step_shrink(struct run *r, struct fuzz_input *in)
{
	uint32_t keep = (uint32_t)fuzz_take(in, 1) % 40;
	uint32_t before = blk_pgrant_count(&r->cache);
	uint32_t gone = blk_pgrant_shrink(&r->cache, keep);
	uint32_t left = blk_pgrant_count(&r->cache);

	FUZZ_ASSERT(left + gone == before);
	FUZZ_ASSERT(left <= keep || left == nr_pinned_grants(r));
	for (unsigned int i = 0; i < r->nr_pins; i++)
		check_is_page(r->pins[i].addr, page_of(r->pins[i].gref));
}

static void run_step(struct run *r, struct fuzz_input *in)
{
	switch (fuzz_take(in, 1) % NR_STEPS) {
	case GET:
		step_get(r, in);
		break;
	case PUT:
		step_put(r, in);
		break;
	case AGE:
		step_age(r);
		break;
	case REVOKE:
		step_revoke(r, in);
		break;
	case TOUCH:
		step_touch(r, in);
		break;
	case SHRINK:
		step_shrink(r, in);
		break;
	}
	FUZZ_ASSERT(blk_pgrant_count(&r->cache) <= r->cache.cap);
	FUZZ_ASSERT(atomic_load(&r->budget.left) +
			    (long)blk_pgrant_count(&r->cache) ==
		    r->budget.total);
	FUZZ_ASSERT(mapped_by_host() == blk_pgrant_count(&r->cache));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;
	struct fuzz_input in = { data, size };
	uint32_t cap;

	if (!sim.guest)
		sim_setup();
	r.nr_pins = 0;
	cap = (uint32_t)(fuzz_take(&in, 1) % 32 + 1);
	blk_budget_init(&r.budget, (long)(fuzz_take(&in, 1) % 40 + 1));
	FUZZ_ASSERT(blk_pgrant_init(&r.cache, cap, &r.budget, sim.xgt, GUEST,
				    NULL) == 0);
	for (unsigned int n = 0; in.left > 0 && n < MAX_STEPS; n++)
		run_step(&r, &in);
	while (r.nr_pins > 0)
		blk_pgrant_put(&r.cache, r.pins[--r.nr_pins].gref);
	blk_pgrant_destroy(&r.cache);
	FUZZ_ASSERT(mapped_by_host() == 0);
	FUZZ_ASSERT(atomic_load(&r.budget.left) == r.budget.total);
	FUZZ_ASSERT(atomic_load(&r.budget.holders) == 0);
	return 0;
}

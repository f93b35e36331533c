// SPDX-License-Identifier: MIT
/*
 * The dirty-block map of a live move (libblk/dirty.h): chunk sizing,
 * marking, taking and clearing, counting, and markers on threads racing
 * a taker, after which every marking was taken at least once since it was
 * made and no chunk was taken that was never marked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "libblk/dirty.h"
#include "tests/check.h"

#define KIB 1024ull
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)
#define TIB (1024 * GIB)

static struct blk_dirty *make(uint64_t bytes, uint32_t min_chunk)
{
	struct blk_dirty *dm = NULL;

	REQUIRE_EQ(blk_dirty_new(bytes, min_chunk, &dm), 0);
	return dm;
}

static void sizing(void)
{
	struct blk_dirty *dm;

	/* A small image keeps the chunk asked for, rounded up to 2^n. */
	dm = make(10 * MIB, 64 * KIB);
	CHECK_EQ(blk_dirty_chunk(dm), 64 * KIB);
	CHECK_EQ(blk_dirty_chunks(dm), 160);
	blk_dirty_free(dm);
	dm = make(10 * MIB + 1, 3000);
	CHECK_EQ(blk_dirty_chunk(dm), 4096);
	CHECK_EQ(blk_dirty_chunks(dm), 10 * 256 + 1);
	blk_dirty_free(dm);

	/* 4 MiB of bits hold 2^25 chunks: 64 TiB needs 2 MiB chunks. */
	dm = make(64 * TIB, 4096);
	CHECK_EQ(blk_dirty_chunk(dm), 2 * MIB);
	CHECK_EQ(blk_dirty_chunks(dm), 1ull << 25);
	blk_dirty_free(dm);
	dm = make(64 * TIB + 1, 4096);
	CHECK_EQ(blk_dirty_chunk(dm), 4 * MIB);
	CHECK(blk_dirty_chunks(dm) <= (uint64_t)BLK_DIRTY_MAX_MAP_BYTES * 8);
	blk_dirty_free(dm);

	/* An empty image has no chunks, and nothing to take. */
	dm = make(0, 4096);
	CHECK_EQ(blk_dirty_chunks(dm), 0);
	blk_dirty_mark_all(dm);
	blk_dirty_mark(dm, 0, 4096);
	CHECK_EQ(blk_dirty_count(dm), 0);
	CHECK_EQ(blk_dirty_take(dm, 0), -ENOENT);
	blk_dirty_free(dm);

	CHECK_EQ(blk_dirty_new(MIB, 0, &dm), -EINVAL);
	CHECK_EQ(blk_dirty_new(MIB, (1u << 31) + 1, &dm), -EINVAL);
	CHECK_EQ(blk_dirty_new(UINT64_MAX, 4096, &dm), -EFBIG);
}

static void marking(void)
{
	struct blk_dirty *dm = make(1 * MIB, 4096); /* 256 chunks */

	CHECK_EQ(blk_dirty_count(dm), 0);
	/* A sector inside chunk 3, a range across 9-10, nothing for len 0. */
	blk_dirty_mark(dm, 3 * 4096 + 512, 512);
	blk_dirty_mark(dm, 9 * 4096 + 4095, 2);
	blk_dirty_mark(dm, 20 * 4096, 0);
	CHECK_EQ(blk_dirty_count(dm), 3);
	/* Across a word's end (chunks 60-70), overlapping nothing so far. */
	blk_dirty_mark(dm, 60 * 4096, 11 * 4096);
	CHECK_EQ(blk_dirty_count(dm), 3 + 11);
	/* Marking again changes nothing. */
	blk_dirty_mark(dm, 62 * 4096, 4096);
	CHECK_EQ(blk_dirty_count(dm), 3 + 11);
	/* Past the end: cut at the last chunk, or ignored. */
	blk_dirty_mark(dm, 255 * 4096, 10 * MIB);
	blk_dirty_mark(dm, 2 * MIB, 4096);
	blk_dirty_mark(dm, UINT64_MAX - 10, 100);
	CHECK_EQ(blk_dirty_count(dm), 3 + 11 + 1);
	blk_dirty_mark_all(dm);
	CHECK_EQ(blk_dirty_count(dm), 256);
	blk_dirty_free(dm);
}

static void taking(void)
{
	struct blk_dirty *dm = make(1 * MIB, 4096);
	int64_t next;

	blk_dirty_mark(dm, 3 * 4096, 1);
	blk_dirty_mark(dm, 64 * 4096, 1);
	blk_dirty_mark(dm, 200 * 4096, 2 * 4096);
	/* In order from @from, each cleared as it is taken. */
	CHECK_EQ(blk_dirty_take(dm, 0), 3);
	CHECK_EQ(blk_dirty_count(dm), 3);
	CHECK_EQ(blk_dirty_take(dm, 4), 64);
	/* From past one: it stays. */
	CHECK_EQ(blk_dirty_take(dm, 201), 201);
	CHECK_EQ(blk_dirty_take(dm, 202), -ENOENT);
	CHECK_EQ(blk_dirty_count(dm), 1);
	CHECK_EQ(blk_dirty_take(dm, 0), 200);
	CHECK_EQ(blk_dirty_take(dm, 0), -ENOENT);
	CHECK_EQ(blk_dirty_take(dm, 256), -ENOENT);
	CHECK_EQ(blk_dirty_take(dm, UINT64_MAX), -ENOENT);
	/* Marked again after it was taken: taken again. */
	blk_dirty_mark(dm, 3 * 4096, 1);
	CHECK_EQ(blk_dirty_take(dm, 0), 3);

	/* A whole pass over a fully marked map takes each chunk once. */
	blk_dirty_mark_all(dm);
	next = 0;
	for (int64_t i = 0; i < 256; i++) {
		next = blk_dirty_take(dm, (uint64_t)next);
		CHECK_EQ(next, i);
		next++;
	}
	CHECK_EQ(blk_dirty_take(dm, 0), -ENOENT);
	CHECK_EQ(blk_dirty_count(dm), 0);
	blk_dirty_free(dm);
}

/*
 * Concurrent markers and a taker. Each marker owns its own chunks and
 * numbers its markings in a per-chunk counter it bumps before marking
 * (as a write completes before the engine marks it); the taker records,
 * for each chunk it takes, the counter it reads after the take (as a
 * copier reads the chunk after taking it). In the end, after a last
 * drain, the taker must have seen each chunk's final counter: no marking
 * was lost. And it never takes a chunk no marker marked. The markers
 * go on past their ROUNDS until the taker has begun RACE_PASSES passes,
 * so that it takes while they mark however the threads are scheduled
 * (under ASan on a loaded host they once finished within its first).
 */
#define MARKERS 4
#define PER_MARKER 512 /* chunks each */
#define ROUNDS 20000
#define RACE_CHUNKS (MARKERS * PER_MARKER)
#define RACE_PASSES 3

struct race {
	struct blk_dirty *dm;
	_Atomic uint64_t written[RACE_CHUNKS]; /* markings made */
	uint64_t seen[RACE_CHUNKS]; /* the taker's: markings copied */
	_Atomic int markers_left;
	_Atomic uint64_t passes; /* the taker's, begun */
	uint64_t stray; /* chunks taken that were never marked */
	uint64_t taken;
};

struct marker {
	struct race *r;
	unsigned int id;
};

static void *marker_run(void *arg)
{
	struct marker *m = arg;
	struct race *r = m->r;
	unsigned int seed = m->id + 1;

	for (uint64_t i = 0;
	     i < ROUNDS || atomic_load(&r->passes) < RACE_PASSES; i++) {
		/* One to three neighbouring chunks of its own. */
		unsigned int first =
			(unsigned int)rand_r(&seed) % (PER_MARKER - 2);
		unsigned int n = 1 + (unsigned int)rand_r(&seed) % 3;
		uint64_t c = (uint64_t)m->id * PER_MARKER + first;

		for (unsigned int k = 0; k < n; k++)
			atomic_fetch_add(&r->written[c + k], 1);
		blk_dirty_mark(r->dm, c * 4096 + 100, n * 4096 - 200);
	}
	atomic_fetch_sub(&r->markers_left, 1);
	return NULL;
}

/* One pass of the taker; returns the chunks it took. */
static uint64_t take_pass(struct race *r)
{
	uint64_t n = 0;
	int64_t c = 0;

	while ((c = blk_dirty_take(r->dm, (uint64_t)c)) >= 0) {
		uint64_t w = atomic_load(&r->written[c]);

		if (!w)
			r->stray++;
		if (w > r->seen[c])
			r->seen[c] = w;
		n++;
		c++;
	}
	return n;
}

static void concurrent_markers(void)
{
	static struct race r;
	struct marker m[MARKERS];
	pthread_t t[MARKERS];
	uint64_t lost = 0;

	r.dm = make(RACE_CHUNKS * 4096, 4096);
	atomic_store(&r.markers_left, MARKERS);
	for (unsigned int i = 0; i < MARKERS; i++) {
		m[i] = (struct marker){ .r = &r, .id = i };
		REQUIRE_EQ(pthread_create(&t[i], NULL, marker_run, &m[i]), 0);
	}
	while (atomic_load(&r.markers_left) > 0) {
		atomic_fetch_add(&r.passes, 1);
		r.taken += take_pass(&r);
	}
	for (unsigned int i = 0; i < MARKERS; i++)
		pthread_join(t[i], NULL);
	/* The last markings, made after the last pass began. */
	r.taken += take_pass(&r);
	CHECK_EQ(blk_dirty_count(r.dm), 0);
	for (unsigned int c = 0; c < RACE_CHUNKS; c++)
		if (r.seen[c] != atomic_load(&r.written[c]))
			lost++;
	CHECK_EQ(lost, 0);
	CHECK_EQ(r.stray, 0);
	CHECK(r.taken >= RACE_CHUNKS / 2);
	printf("concurrent: %llu passes took %llu chunks\n",
	       (unsigned long long)atomic_load(&r.passes),
	       (unsigned long long)r.taken);
	blk_dirty_free(r.dm);
}

/* Two takers on one fully marked map: each chunk goes to exactly one. */
struct taker {
	struct blk_dirty *dm;
	uint8_t *got; /* per chunk, how many times taken (all takers) */
	uint64_t n;
};

static void *taker_run(void *arg)
{
	struct taker *tk = arg;
	int64_t c = 0;

	while ((c = blk_dirty_take(tk->dm, 0)) >= 0) {
		__atomic_fetch_add(&tk->got[c], 1, __ATOMIC_RELAXED);
		tk->n++;
	}
	return NULL;
}

static void concurrent_takers(void)
{
	const uint64_t chunks = 1 << 16;
	struct blk_dirty *dm = make(chunks * 4096, 4096);
	uint8_t *got = calloc(chunks, 1);
	struct taker tk[2] = { { dm, got, 0 }, { dm, got, 0 } };
	pthread_t t[2];
	uint64_t twice = 0;

	REQUIRE(got != NULL);
	blk_dirty_mark_all(dm);
	for (int i = 0; i < 2; i++)
		REQUIRE_EQ(pthread_create(&t[i], NULL, taker_run, &tk[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(tk[0].n + tk[1].n, chunks);
	for (uint64_t c = 0; c < chunks; c++)
		if (got[c] != 1)
			twice++;
	CHECK_EQ(twice, 0);
	free(got);
	blk_dirty_free(dm);
}

int main(void)
{
	sizing();
	marking();
	taking();
	concurrent_markers();
	concurrent_takers();
	return check_done("test-dirty");
}

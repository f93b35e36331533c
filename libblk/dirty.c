// SPDX-License-Identifier: MIT
/*
 * The dirty-block map (dirty.h): a bitmap of 64-bit atomic words. Marking
 * ORs whole words at a time (one atomic operation for the chunks of a
 * request that fall in one word); taking clears one bit with an atomic
 * AND and keeps it only if it was set, so that a bit marked once is taken
 * once however many takers race.
 */
#include "libblk/dirty.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#define WORD_BITS 64u
/* The largest chunk (its size is a uint32_t power of two). */
#define MAX_CHUNK_SHIFT 31u

struct blk_dirty {
	uint64_t chunks;
	uint64_t nr_words;
	uint32_t chunk_shift;
	_Atomic uint64_t words[];
};

/* Chunks of 2^@shift bytes in @bytes (without overflowing near 2^64). */
static uint64_t chunks_of(uint64_t bytes, uint32_t shift)
{
	return (bytes >> shift) + ((bytes & ((1ull << shift) - 1)) != 0);
}

/* The smallest shift whose chunks of @bytes fit in the map's bits. */
static int chunk_shift_for(uint64_t bytes, uint32_t min_chunk, uint32_t *shift)
{
	const uint64_t max_chunks = (uint64_t)BLK_DIRTY_MAX_MAP_BYTES * 8;
	uint32_t s = 0;

	if (!min_chunk || min_chunk > (1u << MAX_CHUNK_SHIFT))
		return -EINVAL;
	while ((1ull << s) < min_chunk)
		s++;
	while (chunks_of(bytes, s) > max_chunks) {
		if (++s > MAX_CHUNK_SHIFT)
			return -EFBIG;
	}
	*shift = s;
	return 0;
}

int blk_dirty_new(uint64_t bytes, uint32_t min_chunk, struct blk_dirty **out)
{
	struct blk_dirty *dm;
	uint32_t shift;
	uint64_t chunks, words;
	int ret = chunk_shift_for(bytes, min_chunk, &shift);

	if (ret < 0)
		return ret;
	chunks = chunks_of(bytes, shift);
	words = (chunks + WORD_BITS - 1) / WORD_BITS;
	dm = calloc(1, sizeof(*dm) + words * sizeof(dm->words[0]));
	if (!dm)
		return -ENOMEM;
	dm->chunks = chunks;
	dm->nr_words = words;
	dm->chunk_shift = shift;
	*out = dm;
	return 0;
}

void blk_dirty_free(struct blk_dirty *dm)
{
	free(dm);
}

uint32_t blk_dirty_chunk(const struct blk_dirty *dm)
{
	return 1u << dm->chunk_shift;
}

uint64_t blk_dirty_chunks(const struct blk_dirty *dm)
{
	return dm->chunks;
}

/* Bits [@from, @to] of one word (0 <= from <= to < 64). */
static uint64_t bit_range(unsigned int from, unsigned int to)
{
	uint64_t upto = to == WORD_BITS - 1 ? ~0ull : (2ull << to) - 1;

	return upto & ~((1ull << from) - 1);
}

/* Set chunks [@first, @last] (within the map). */
static void set_chunks(struct blk_dirty *dm, uint64_t first, uint64_t last)
{
	uint64_t w = first / WORD_BITS, last_w = last / WORD_BITS;

	for (; w <= last_w; w++) {
		unsigned int lo = w == first / WORD_BITS ? first % WORD_BITS
							 : 0;
		unsigned int hi = w == last_w ? last % WORD_BITS
					      : WORD_BITS - 1;

		/* Released: the write it stands for completed before. */
		atomic_fetch_or_explicit(&dm->words[w], bit_range(lo, hi),
					 memory_order_release);
	}
}

void blk_dirty_mark(struct blk_dirty *dm, uint64_t offset, uint64_t len)
{
	uint64_t first = offset >> dm->chunk_shift, last;

	if (!len || first >= dm->chunks)
		return;
	/* offset + len may wrap for a range near 2^64: cut it at the end. */
	last = (offset + len - 1 < offset ? UINT64_MAX : offset + len - 1) >>
	       dm->chunk_shift;
	if (last >= dm->chunks)
		last = dm->chunks - 1;
	set_chunks(dm, first, last);
}

void blk_dirty_mark_all(struct blk_dirty *dm)
{
	if (dm->chunks)
		set_chunks(dm, 0, dm->chunks - 1);
}

int64_t blk_dirty_take(struct blk_dirty *dm, uint64_t from)
{
	uint64_t w = from / WORD_BITS;
	/* Bits below @from in its word are not looked at. */
	uint64_t skip = from < dm->chunks ? ~0ull << (from % WORD_BITS) : 0;

	for (; w < dm->nr_words; w++, skip = ~0ull) {
		uint64_t bits = atomic_load_explicit(&dm->words[w],
						     memory_order_relaxed) &
				skip;

		while (bits) {
			uint64_t bit = bits & -bits;
			/* Acquired: the caller reads the chunk after this. */
			uint64_t was = atomic_fetch_and_explicit(
				&dm->words[w], ~bit, memory_order_acq_rel);

			if (was & bit)
				return (int64_t)(w * WORD_BITS +
						 (uint64_t)__builtin_ctzll(
							 bit));
			/* Another taker had it: look again past it. */
			bits = was & skip & ~bit & ~(bit - 1);
		}
	}
	return -ENOENT;
}

uint64_t blk_dirty_count(const struct blk_dirty *dm)
{
	uint64_t n = 0;

	for (uint64_t w = 0; w < dm->nr_words; w++)
		n += (uint64_t)__builtin_popcountll(atomic_load_explicit(
			&dm->words[w], memory_order_relaxed));
	return n;
}

// SPDX-License-Identifier: MIT
/*
 * A hostile frontend writing random bytes: random ring pages and random
 * producer indexes, in both ABIs and several ring sizes. Whatever the guest
 * writes, the backend must never take more than a ring's worth of requests
 * ahead of its responses, and every request that passes both checks must
 * lie inside the image and inside its pages. Run under ASan in CI, this is
 * also a memory-safety test of the ring and request code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/ring.h"
#include "tests/check.h"

#define ROUNDS 8000

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible, no libc state. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rnd();
}

/* Bias some fields towards values that pass the first checks. */
static void make_plausible(uint8_t *page, size_t len)
{
	for (size_t off = 64; off + 112 <= len; off += 112) {
		if (rnd() % 2)
			page[off] = (uint8_t)(rnd() % 7); /* operation */
		if (rnd() % 2)
			page[off + 1] = (uint8_t)(rnd() % 13);
	}
}

static void check_accepted(const struct blk_request *req,
			   const struct blk_limits *lim)
{
	uint64_t sectors = 0;

	if (req->operation == BLKIF_OP_DISCARD) {
		CHECK(req->sector + req->nr_sectors <= lim->sectors);
		CHECK(req->sector + req->nr_sectors >= req->sector);
		return;
	}
	CHECK(req->nr_segments <= BLKIF_MAX_SEGMENTS_PER_REQUEST);
	for (unsigned int i = 0; i < req->nr_segments; i++) {
		CHECK(req->seg[i].first_sect <= req->seg[i].last_sect);
		CHECK(req->seg[i].last_sect < 8);
		sectors += req->seg[i].last_sect - req->seg[i].first_sect + 1u;
	}
	CHECK(req->sector <= lim->sectors);
	CHECK(sectors <= lim->sectors - req->sector);
}

static void one_round(enum blkif_abi abi, unsigned int order,
		      const struct blk_limits *lim)
{
	size_t len = (size_t)BLKIF_PAGE_SIZE << order;
	uint8_t *page = aligned_alloc(BLKIF_PAGE_SIZE, len);
	struct blk_ring ring;
	struct blk_request req;
	unsigned int taken = 0, size;
	int ret;

	fill_random(page, len);
	make_plausible(page, len);
	blk_ring_attach(&ring, page, abi, len);
	size = blk_ring_size(&ring);
	for (unsigned int step = 0; step < 4 * size; step++) {
		ret = blk_ring_next_request(&ring, &req);
		if (ret < 0) {
			CHECK_EQ(ret, -EPROTO);
			break;
		}
		if (ret == 0) {
			/* The guest moves its index again, anywhere. */
			*(uint32_t *)page = (uint32_t)rnd();
			continue;
		}
		taken++;
		CHECK(taken <= size);
		if (blk_request_check(&req, lim) == BLKIF_RSP_OKAY &&
		    (req.operation == BLKIF_OP_DISCARD ||
		     req.operation == BLKIF_OP_INDIRECT ||
		     blk_request_check_segments(&req, req.seg, lim) ==
			     BLKIF_RSP_OKAY))
			if (req.operation != BLKIF_OP_INDIRECT)
				check_accepted(&req, lim);
		/* Answer some, as the engine would as I/O completes. */
		if (rnd() % 3 == 0) {
			blk_ring_put_response(&ring, req.id, req.operation, 0);
			blk_ring_push_responses(&ring);
			taken--;
		}
	}
	free(page);
}

int main(void)
{
	const struct blk_limits lim = {
		.sectors = 1u << 20,
		.sector_size = 512,
		.max_indirect_segments = 256,
		.discard = true,
		.barrier = true,
	};

	for (unsigned int i = 0; i < ROUNDS; i++)
		one_round(i % 2 ? BLKIF_ABI_X86_64 : BLKIF_ABI_X86_32,
			  (unsigned int)(rnd() % 5), &lim);
	return check_done("test-ring-random");
}

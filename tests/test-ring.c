// SPDX-License-Identifier: MIT
/*
 * The backend ring against a hand-driven frontend, in both ABIs, with
 * honest and dishonest indexes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/ring.h"
#include "tests/check.h"

static void *new_page(void)
{
	void *p = aligned_alloc(BLKIF_PAGE_SIZE, BLKIF_PAGE_SIZE);

	memset(p, 0, BLKIF_PAGE_SIZE);
	return p;
}

/* The frontend's request producer for either ABI. */
static void put_request(void *page, enum blkif_abi abi, RING_IDX idx,
			uint64_t id, uint64_t sector, uint8_t nseg)
{
	if (abi == BLKIF_ABI_X86_64) {
		blkif_x86_64_sring_t *s = page;
		struct blkif_x86_64_request *r =
			&s->ring[idx & (32 - 1)].req.rw;

		memset(r, 0, sizeof(*r));
		r->operation = BLKIF_OP_WRITE;
		r->nr_segments = nseg;
		r->id = id;
		r->sector_number = sector;
		r->seg[0].gref = 77;
		r->seg[0].first_sect = 1;
		r->seg[0].last_sect = 6;
	} else {
		blkif_x86_32_sring_t *s = page;
		struct blkif_x86_32_request *r =
			&s->ring[idx & (32 - 1)].req.rw;

		memset(r, 0, sizeof(*r));
		r->operation = BLKIF_OP_WRITE;
		r->nr_segments = nseg;
		r->id = id;
		r->sector_number = sector;
		r->seg[0].gref = 77;
		r->seg[0].first_sect = 1;
		r->seg[0].last_sect = 6;
	}
}

static void set_req_prod(void *page, enum blkif_abi abi, RING_IDX prod)
{
	if (abi == BLKIF_ABI_X86_64)
		((blkif_x86_64_sring_t *)page)->req_prod = prod;
	else
		((blkif_x86_32_sring_t *)page)->req_prod = prod;
}

static void get_response(void *page, enum blkif_abi abi, RING_IDX idx,
			 uint64_t *id, int16_t *status, RING_IDX *rsp_prod)
{
	if (abi == BLKIF_ABI_X86_64) {
		blkif_x86_64_sring_t *s = page;

		*id = s->ring[idx & 31].rsp.id;
		*status = s->ring[idx & 31].rsp.status;
		*rsp_prod = s->rsp_prod;
	} else {
		blkif_x86_32_sring_t *s = page;

		*id = s->ring[idx & 31].rsp.id;
		*status = s->ring[idx & 31].rsp.status;
		*rsp_prod = s->rsp_prod;
	}
}

static void init_shared(void *page, enum blkif_abi abi)
{
	if (abi == BLKIF_ABI_X86_64)
		SHARED_RING_INIT((blkif_x86_64_sring_t *)page);
	else
		SHARED_RING_INIT((blkif_x86_32_sring_t *)page);
}

static void test_round_trip(enum blkif_abi abi)
{
	void *page = new_page();
	struct blk_ring ring;
	struct blk_request req;
	RING_IDX rsp_prod;
	uint64_t id;
	int16_t status;

	init_shared(page, abi);
	blk_ring_attach(&ring, page, abi, BLKIF_PAGE_SIZE);
	CHECK_EQ(blk_ring_size(&ring), 32);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 0);

	put_request(page, abi, 0, 0x1122334455667788ull, 4096, 1);
	put_request(page, abi, 1, 42, 8, 1);
	set_req_prod(page, abi, 2);

	CHECK_EQ(blk_ring_next_request(&ring, &req), 1);
	CHECK_EQ(req.id, 0x1122334455667788ull);
	CHECK_EQ(req.sector, 4096);
	CHECK_EQ(req.operation, BLKIF_OP_WRITE);
	CHECK_EQ(req.nr_segments, 1);
	CHECK_EQ(req.seg[0].gref, 77);
	CHECK_EQ(req.seg[0].first_sect, 1);
	CHECK_EQ(req.seg[0].last_sect, 6);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 1);
	CHECK_EQ(req.id, 42);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 0);

	blk_ring_put_response(&ring, 42, BLKIF_OP_WRITE, BLKIF_RSP_ERROR);
	/* The frontend asked to be notified of the first response. */
	CHECK(blk_ring_push_responses(&ring));
	get_response(page, abi, 0, &id, &status, &rsp_prod);
	CHECK_EQ(id, 42);
	CHECK_EQ(status, BLKIF_RSP_ERROR);
	CHECK_EQ(rsp_prod, 1);
	CHECK(!blk_ring_final_check(&ring));
	free(page);
}

static void test_impossible_producer(enum blkif_abi abi)
{
	void *page = new_page();
	struct blk_ring ring;
	struct blk_request req;

	init_shared(page, abi);
	blk_ring_attach(&ring, page, abi, BLKIF_PAGE_SIZE);
	set_req_prod(page, abi, 33);
	CHECK_EQ(blk_ring_next_request(&ring, &req), -EPROTO);
	/* Going backwards is just as impossible. */
	set_req_prod(page, abi, (RING_IDX)-1);
	CHECK_EQ(blk_ring_next_request(&ring, &req), -EPROTO);
	free(page);
}

/* With a ring's worth in flight, nothing more is taken. */
static void test_in_flight_bound(enum blkif_abi abi)
{
	void *page = new_page();
	struct blk_ring ring;
	struct blk_request req;
	int taken = 0;

	init_shared(page, abi);
	blk_ring_attach(&ring, page, abi, BLKIF_PAGE_SIZE);
	for (RING_IDX i = 0; i < 32; i++)
		put_request(page, abi, i, i, 0, 1);
	set_req_prod(page, abi, 32);
	while (blk_ring_next_request(&ring, &req) == 1)
		taken++;
	CHECK_EQ(taken, 32);
	/* A guest reusing slots it has no response for yet. */
	set_req_prod(page, abi, 40);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 0);
	blk_ring_put_response(&ring, 0, BLKIF_OP_WRITE, 0);
	blk_ring_push_responses(&ring);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 1);
	free(page);
}

/* A restarted backend resumes after the last response the guest saw. */
static void test_resume(enum blkif_abi abi)
{
	void *page = new_page();
	struct blk_ring ring;
	struct blk_request req;

	init_shared(page, abi);
	for (RING_IDX i = 0; i < 5; i++)
		put_request(page, abi, i, 100 + i, 0, 1);
	set_req_prod(page, abi, 5);
	if (abi == BLKIF_ABI_X86_64)
		((blkif_x86_64_sring_t *)page)->rsp_prod = 3;
	else
		((blkif_x86_32_sring_t *)page)->rsp_prod = 3;
	blk_ring_attach(&ring, page, abi, BLKIF_PAGE_SIZE);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 1);
	CHECK_EQ(req.id, 103);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 1);
	CHECK_EQ(req.id, 104);
	CHECK_EQ(blk_ring_next_request(&ring, &req), 0);
	free(page);
}

int main(void)
{
	static const enum blkif_abi abis[] = { BLKIF_ABI_X86_32,
					       BLKIF_ABI_X86_64 };

	for (int i = 0; i < 2; i++) {
		test_round_trip(abis[i]);
		test_impossible_producer(abis[i]);
		test_in_flight_bound(abis[i]);
		test_resume(abis[i]);
	}
	return check_done("test-ring");
}

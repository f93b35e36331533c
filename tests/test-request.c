// SPDX-License-Identifier: MIT
/*
 * blk_request_check() and blk_request_check_segments(): what a guest may
 * and may not ask for.
 */
#include <string.h>

#include "libblk/request.h"
#include "tests/check.h"

static const struct blk_limits disk = {
	.sectors = 1000,
	.sector_size = 512,
	.max_indirect_segments = 256,
	.discard = true,
	.barrier = true,
};
static const struct blk_limits plain = { .sectors = 1000, .sector_size = 512 };
static const struct blk_limits ro_disk = {
	.sectors = 1000,
	.sector_size = 512,
	.readonly = true,
	.discard = true,
};
static const struct blk_limits big_sectors = { .sectors = 125,
					       .sector_size = 4096 };

static struct blk_request rw(uint8_t op, uint64_t sector, unsigned int nseg)
{
	struct blk_request r = { .operation = op,
				 .sector = sector,
				 .nr_segments = (uint16_t)nseg };

	for (unsigned int i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++)
		r.seg[i] =
			(struct blk_segment){ .gref = i + 1, .last_sect = 7 };
	return r;
}

/* Both checks, as the engine applies them. */
static int check(const struct blk_request *r, const struct blk_limits *lim)
{
	int status = blk_request_check(r, lim);

	if (status != BLKIF_RSP_OKAY || r->operation == BLKIF_OP_DISCARD)
		return status;
	return blk_request_check_segments(r, r->seg, lim);
}

static void test_accepts_valid(void)
{
	struct blk_request r = rw(BLKIF_OP_READ, 0, 11);

	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
	r = rw(BLKIF_OP_WRITE, 1000 - 8, 1);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
	/* A partial segment: sectors 2..5 of the page. */
	r.seg[0].first_sect = 2;
	r.seg[0].last_sect = 5;
	CHECK_EQ(blk_segment_bytes(&r.seg[0], 512), 4 * 512);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
}

static void test_refuses_outside_image(void)
{
	struct blk_request r = rw(BLKIF_OP_READ, 1000 - 7, 1);

	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 1000, 1);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	/* sector + length must not wrap around 2^64. */
	r = rw(BLKIF_OP_WRITE, UINT64_MAX - 3, 1);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
}

static void test_refuses_bad_segments(void)
{
	struct blk_request r = rw(BLKIF_OP_READ, 0, 1);

	r.seg[0].first_sect = 5;
	r.seg[0].last_sect = 4;
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r.seg[0].first_sect = 0;
	r.seg[0].last_sect = 8; /* past the 4K page */
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 0, 0);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_WRITE, 0, 12);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 0, 255);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
}

static void test_flush_and_barrier(void)
{
	struct blk_request r = rw(BLKIF_OP_FLUSH_DISKCACHE, 0, 0);

	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
	CHECK(!blk_request_writes(&r));
	CHECK(blk_request_syncs(&r));
	/*
	 * Linux blkfront's empty flush carries the position of the block
	 * layer's flush request, which is (sector_t)-1: it names no range.
	 */
	r = rw(BLKIF_OP_FLUSH_DISKCACHE, UINT64_MAX, 0);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
	/* A flush with data is a write followed by a flush. */
	r = rw(BLKIF_OP_FLUSH_DISKCACHE, 8, 2);
	CHECK(blk_request_writes(&r));
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
	r = rw(BLKIF_OP_FLUSH_DISKCACHE, 999, 2);
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_WRITE_BARRIER, 0, 3);
	CHECK(blk_request_writes(&r));
	CHECK(blk_request_syncs(&r));
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
	CHECK_EQ(check(&r, &plain), BLKIF_RSP_EOPNOTSUPP);
}

static void test_readonly(void)
{
	struct blk_request r = rw(BLKIF_OP_WRITE, 0, 1);

	CHECK_EQ(check(&r, &ro_disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 0, 1);
	CHECK_EQ(check(&r, &ro_disk), BLKIF_RSP_OKAY);
	r = rw(BLKIF_OP_FLUSH_DISKCACHE, 0, 1);
	CHECK_EQ(check(&r, &ro_disk), BLKIF_RSP_ERROR);
	r = (struct blk_request){ .operation = BLKIF_OP_DISCARD,
				  .nr_sectors = 8 };
	CHECK_EQ(check(&r, &ro_disk), BLKIF_RSP_ERROR);
}

static void test_discard(void)
{
	struct blk_request r = { .operation = BLKIF_OP_DISCARD,
				 .sector = 992,
				 .nr_sectors = 8 };

	CHECK_EQ(check(&r, &disk), BLKIF_RSP_OKAY);
	CHECK_EQ(check(&r, &plain), BLKIF_RSP_EOPNOTSUPP);
	r.nr_sectors = 9;
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r.nr_sectors = 0;
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
	r = (struct blk_request){ .operation = BLKIF_OP_DISCARD,
				  .sector = 8,
				  .nr_sectors = UINT64_MAX };
	CHECK_EQ(check(&r, &disk), BLKIF_RSP_ERROR);
}

static void test_indirect(void)
{
	struct blk_request r = { .operation = BLKIF_OP_INDIRECT,
				 .indirect_op = BLKIF_OP_WRITE,
				 .nr_segments = 256 };

	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_OKAY);
	CHECK_EQ(blk_request_op(&r), BLKIF_OP_WRITE);
	CHECK(blk_request_writes(&r));
	CHECK_EQ(blk_indirect_pages(256), 1);
	CHECK_EQ(blk_indirect_pages(513), 2);
	CHECK_EQ(blk_indirect_pages(4096), 8);
	CHECK_EQ(blk_request_check(&r, &plain), BLKIF_RSP_EOPNOTSUPP);
	r.nr_segments = 257;
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	r.nr_segments = 0;
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	r.nr_segments = 4;
	r.indirect_op = BLKIF_OP_FLUSH_DISKCACHE;
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
}

/* With 4K sectors a page holds one sector and sector numbers are 4K. */
static void test_large_sectors(void)
{
	struct blk_request r = rw(BLKIF_OP_READ, 124, 1);

	r.seg[0].last_sect = 0;
	CHECK_EQ(check(&r, &big_sectors), BLKIF_RSP_OKAY);
	CHECK_EQ(blk_segment_bytes(&r.seg[0], 4096), 4096);
	r.seg[0].last_sect = 1;
	CHECK_EQ(check(&r, &big_sectors), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 124, 2);
	r.seg[0].last_sect = r.seg[1].last_sect = 0;
	CHECK_EQ(check(&r, &big_sectors), BLKIF_RSP_ERROR);
}

static void test_unsupported_ops(void)
{
	static const uint8_t ops[] = { BLKIF_OP_RESERVED_1, 7, 200, 255 };

	for (size_t i = 0; i < sizeof(ops); i++) {
		struct blk_request r = rw(ops[i], 0, 1);

		CHECK_EQ(check(&r, &disk), BLKIF_RSP_EOPNOTSUPP);
	}
}

int main(void)
{
	test_accepts_valid();
	test_refuses_outside_image();
	test_refuses_bad_segments();
	test_flush_and_barrier();
	test_readonly();
	test_discard();
	test_indirect();
	test_large_sectors();
	test_unsupported_ops();
	return check_done("test-request");
}

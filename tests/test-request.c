// SPDX-License-Identifier: MIT
/*
 * blk_request_check(): what a guest may and may not ask for.
 */
#include <string.h>

#include "libblk/request.h"
#include "tests/check.h"

static const struct blk_limits disk = { .sectors = 1000 };
static const struct blk_limits ro_disk = { .sectors = 1000, .readonly = true };

static struct blk_request rw(uint8_t op, uint64_t sector, unsigned int nseg)
{
	struct blk_request r = {
		.operation = op, .sector = sector, .nr_segments = (uint8_t)nseg
	};

	for (unsigned int i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++)
		r.seg[i] = (struct blk_segment){ .gref = i + 1, .last_sect = 7 };
	return r;
}

static void test_accepts_valid(void)
{
	struct blk_request r = rw(BLKIF_OP_READ, 0, 11);

	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_OKAY);
	CHECK_EQ(blk_request_bytes(&r), 11 * 4096);
	r = rw(BLKIF_OP_WRITE, 1000 - 8, 1);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_OKAY);
	/* A partial segment: sectors 2..5 of the page. */
	r.seg[0].first_sect = 2;
	r.seg[0].last_sect = 5;
	CHECK_EQ(blk_request_bytes(&r), 4 * 512);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_OKAY);
}

static void test_refuses_outside_image(void)
{
	struct blk_request r = rw(BLKIF_OP_READ, 1000 - 7, 1);

	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 1000, 1);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	/* sector + length must not wrap around 2^64. */
	r = rw(BLKIF_OP_WRITE, UINT64_MAX - 3, 1);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
}

static void test_refuses_bad_segments(void)
{
	struct blk_request r = rw(BLKIF_OP_READ, 0, 1);

	r.seg[0].first_sect = 5;
	r.seg[0].last_sect = 4;
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	r.seg[0].first_sect = 0;
	r.seg[0].last_sect = 8; /* past the 4K page */
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 0, 0);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_WRITE, 0, 12);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 0, 255);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
}

static void test_flush(void)
{
	struct blk_request r = rw(BLKIF_OP_FLUSH_DISKCACHE, 0, 0);

	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_OKAY);
	CHECK(!blk_request_writes(&r));
	/* A flush with data is a write followed by a flush. */
	r = rw(BLKIF_OP_FLUSH_DISKCACHE, 8, 2);
	CHECK(blk_request_writes(&r));
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_OKAY);
	r = rw(BLKIF_OP_FLUSH_DISKCACHE, 999, 2);
	CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_ERROR);
}

static void test_readonly(void)
{
	struct blk_request r = rw(BLKIF_OP_WRITE, 0, 1);

	CHECK_EQ(blk_request_check(&r, &ro_disk), BLKIF_RSP_ERROR);
	r = rw(BLKIF_OP_READ, 0, 1);
	CHECK_EQ(blk_request_check(&r, &ro_disk), BLKIF_RSP_OKAY);
	r = rw(BLKIF_OP_FLUSH_DISKCACHE, 0, 1);
	CHECK_EQ(blk_request_check(&r, &ro_disk), BLKIF_RSP_ERROR);
}

static void test_unsupported_ops(void)
{
	static const uint8_t ops[] = { BLKIF_OP_WRITE_BARRIER,
				       BLKIF_OP_RESERVED_1, BLKIF_OP_DISCARD,
				       BLKIF_OP_INDIRECT, 7, 200, 255 };

	for (size_t i = 0; i < sizeof(ops); i++) {
		struct blk_request r = rw(ops[i], 0, 1);

		CHECK_EQ(blk_request_check(&r, &disk), BLKIF_RSP_EOPNOTSUPP);
	}
}

int main(void)
{
	test_accepts_valid();
	test_refuses_outside_image();
	test_refuses_bad_segments();
	test_flush();
	test_readonly();
	test_unsupported_ops();
	return check_done("test-request");
}

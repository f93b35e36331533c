// SPDX-License-Identifier: MIT
/*
 * The one number parser (libblk/parse.h): what it must refuse matters as
 * much as what it reads, since guest-written xenstore values go through it.
 */
#include <errno.h>
#include <stdint.h>

#include "libblk/backend-null.h"
#include "libblk/parse.h"
#include "tests/check.h"

static void accepts(const char *s, uint64_t max, uint64_t want)
{
	uint64_t v = 12345;

	CHECK_EQ(blk_parse_u64(s, max, &v), 0);
	CHECK(v == want);
}

static void refuses(const char *s, uint64_t max)
{
	uint64_t v = 12345;

	CHECK_EQ(blk_parse_u64(s, max, &v), -EINVAL);
	CHECK(v == 12345); /* untouched */
}

int main(void)
{
	const char *end;
	uint64_t v;

	accepts("0", 0, 0);
	accepts("7", 7, 7);
	accepts("007", 10, 7);
	accepts("4294967295", UINT32_MAX, UINT32_MAX);
	accepts("18446744073709551615", UINT64_MAX, UINT64_MAX);

	refuses("", UINT64_MAX);
	refuses("8", 7); /* a digit above a small @max */
	refuses("4294967296", UINT32_MAX);
	refuses("18446744073709551616", UINT64_MAX); /* 2^64 */
	refuses("99999999999999999999999", UINT64_MAX);
	refuses("-1", UINT64_MAX);
	refuses("+1", UINT64_MAX);
	refuses(" 1", UINT64_MAX);
	refuses("1 ", UINT64_MAX);
	refuses("0x10", UINT64_MAX);
	refuses("1/2", UINT64_MAX);

	/* The prefix form stops at the first non-digit and says where. */
	CHECK_EQ(blk_parse_u64_prefix("51712/state", UINT32_MAX, &v, &end), 0);
	CHECK(v == 51712 && *end == '/');
	CHECK_EQ(blk_parse_u64_prefix("1.2", 9, &v, &end), 0);
	CHECK(v == 1 && *end == '.');
	CHECK_EQ(blk_parse_u64_prefix("x1", 9, &v, &end), -EINVAL);
	CHECK_EQ(blk_parse_u64_prefix("10/", 9, &v, &end), -EINVAL);

	/* The null image's size: bytes, whole sectors, with a suffix. */
	CHECK_EQ(blk_null_size("null:1M", &v), 0);
	CHECK(v == 1u << 20);
	CHECK_EQ(blk_null_size("null:512", &v), 0);
	CHECK(v == 512);
	CHECK_EQ(blk_null_size("null:2T", &v), 0);
	CHECK(v == 2ull << 40);
	CHECK_EQ(blk_null_size("null:513", &v), -EINVAL);
	CHECK_EQ(blk_null_size("null:0", &v), -EINVAL);
	CHECK_EQ(blk_null_size("null:", &v), -EINVAL);
	CHECK_EQ(blk_null_size("null:1X", &v), -EINVAL);
	CHECK_EQ(blk_null_size("null:1MB", &v), -EINVAL);
	CHECK_EQ(blk_null_size("null:99999999999T", &v), -EINVAL);
	CHECK_EQ(blk_null_size("/srv/null:1M", &v), -EINVAL);
	CHECK(blk_null_is_target("null:1M") && !blk_null_is_target("nul:1M"));
	return check_done("test-parse");
}

// SPDX-License-Identifier: MIT
#include "libblk/parse.h"

#include <errno.h>

int blk_parse_u64_prefix(const char *s, uint64_t max, uint64_t *out,
			 const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (d > max || v > (max - d) / 10)
			return -EINVAL; /* past @max, or past 2^64 - 1 */
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

int blk_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;

	if (blk_parse_u64_prefix(s, max, &v, &end) < 0 || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

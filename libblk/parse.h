/* SPDX-License-Identifier: MIT */
/*
 * The one strict number parser: what the daemon reads from xenstore (some
 * of it guest-written), its configuration and the simulator's own files
 * all go through it. Decimal digits only: no sign, no blanks, no base
 * prefix, no overflow, nothing after the digits unless the caller asks
 * where they ended.
 */
#ifndef LIBBLK_PARSE_H
#define LIBBLK_PARSE_H

#include <stdint.h>

/*
 * Parse @s, which must be digits and nothing else, as a number no larger
 * than @max. 0, or -EINVAL (empty, junk, out of range) with *@out untouched.
 */
int blk_parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * The same for digits at the start of @s; *@end then points past them
 * (at whatever follows, which the caller checks).
 */
int blk_parse_u64_prefix(const char *s, uint64_t max, uint64_t *out,
			 const char **end);

#endif /* LIBBLK_PARSE_H */

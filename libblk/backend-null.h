/* SPDX-License-Identifier: MIT */
/*
 * The null image, `null:SIZE`: a disk of SIZE bytes (a K, M, G or T suffix
 * multiplies by powers of 1024) that stores nothing. Reads return zeroes,
 * writes and discards are dropped, flushes succeed, all without I/O, as
 * nbdkit's null plugin and Linux's null_blk do.
 *
 * It is for measuring: served by blkbackd, it costs a request what the
 * transport and the daemon cost and nothing else, the floor under every
 * real image (blkback-bench's floor arm), and for testing a guest's
 * driver without a disk.
 *
 * Completions go back through one engine watch per batch, with no fd
 * (blk_backend_watch() with fd -1): the I/O of a pass completes in the
 * next one, as a real image's earliest could.
 */
#ifndef LIBBLK_BACKEND_NULL_H
#define LIBBLK_BACKEND_NULL_H

#include <stdbool.h>
#include <stdint.h>

#include "libblk/backend.h"

/* Does @target name a null image? */
bool blk_null_is_target(const char *target);

/*
 * Keeping nothing, it needs no lock and has nothing two writers could
 * disagree on; its size is its name's; its backend is made anywhere
 * (libblk/backend.h's enum blk_cap).
 */
#define BLK_NULL_CAPS BLK_CAP_MOVE

/*
 * The size a null target names, in bytes: 0, or -EINVAL when it is not
 * `null:` and a whole number of 512-byte sectors, 1 or more.
 */
int blk_null_size(const char *target, uint64_t *bytes);

int blk_backend_null_new(struct blk_backend **out);

#endif /* LIBBLK_BACKEND_NULL_H */

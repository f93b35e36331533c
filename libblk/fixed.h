/* SPDX-License-Identifier: MIT */
/*
 * An engine's registered buffers: a table in its io_uring of memory
 * pinned once at registration, which READ_FIXED and WRITE_FIXED read into
 * or write from, sparing the page pinning of every O_DIRECT request.
 *
 * An optimisation only: a table the kernel refuses (an old kernel,
 * RLIMIT_MEMLOCK) stays empty, a full one refuses more, and the caller
 * then uses the plain address. Nothing here fails an I/O. (Images are not
 * registered files: see libblk/backend-file.c.)
 *
 * Owned by the engine's thread, like its ring.
 */
#ifndef LIBBLK_FIXED_H
#define LIBBLK_FIXED_H

#include <liburing.h>
#include <stddef.h>

/* The free slots of one table; size 0: the kernel has no table for us. */
struct blk_fixed_table {
	unsigned int size;
	unsigned int *free;
	unsigned int nr_free;
};

struct blk_fixed {
	struct io_uring *ring;
	struct blk_fixed_table bufs;
};

/* Ask @ring for the table; never fails (a refused table stays empty). */
void blk_fixed_init(struct blk_fixed *f, struct io_uring *ring);
/* Before the ring goes: the table goes with it. */
void blk_fixed_destroy(struct blk_fixed *f);

/*
 * A slot holding the buffer @base, @len bytes (pinned until deleted), or
 * -errno. Delete it before unmapping the memory.
 */
int blk_fixed_buf_add(struct blk_fixed *f, void *base, size_t len);
void blk_fixed_buf_del(struct blk_fixed *f, int slot);

#endif /* LIBBLK_FIXED_H */

/* SPDX-License-Identifier: MIT */
/*
 * An engine's registered files and buffers: tables in its io_uring that
 * let an I/O name the image by slot (IOSQE_FIXED_FILE), sparing the file
 * lookup, and read into or write from memory pinned once at registration
 * (READ_FIXED, WRITE_FIXED), sparing the page pinning of every O_DIRECT
 * request.
 *
 * Both are an optimisation only: a table the kernel refuses (an old
 * kernel, RLIMIT_NOFILE, RLIMIT_MEMLOCK for buffers) leaves it empty, a
 * full one refuses more, and the caller then uses the plain fd or
 * address. Nothing here fails an I/O.
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
	struct blk_fixed_table files, bufs;
};

/* Ask @ring for both tables; never fails (a refused table stays empty). */
void blk_fixed_init(struct blk_fixed *f, struct io_uring *ring);
/* Before the ring goes: the tables go with it. */
void blk_fixed_destroy(struct blk_fixed *f);

/* A slot holding @fd, or -errno (-ENOSPC: full or none). */
int blk_fixed_file_add(struct blk_fixed *f, int fd);
void blk_fixed_file_del(struct blk_fixed *f, int slot);

/*
 * A slot holding the buffer @base, @len bytes (pinned until deleted), or
 * -errno. Delete it before unmapping the memory.
 */
int blk_fixed_buf_add(struct blk_fixed *f, void *base, size_t len);
void blk_fixed_buf_del(struct blk_fixed *f, int slot);

#endif /* LIBBLK_FIXED_H */

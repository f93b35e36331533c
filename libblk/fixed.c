// SPDX-License-Identifier: MIT
/*
 * Registered files and buffers (see fixed.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "libblk/fixed.h"

/*
 * Images a worker serves at once, and bounce slabs (1 MiB each) it keeps
 * registered: beyond these, I/O goes unregistered, as before.
 */
#define FIXED_FILES 1024u
#define FIXED_BUFS 1024u

static int table_init(struct blk_fixed_table *t, unsigned int size)
{
	t->free = malloc(size * sizeof(*t->free));
	if (!t->free)
		return -ENOMEM;
	/* Lowest slots first. */
	for (unsigned int i = 0; i < size; i++)
		t->free[i] = size - 1 - i;
	t->size = t->nr_free = size;
	return 0;
}

static void table_free(struct blk_fixed_table *t)
{
	free(t->free);
	*t = (struct blk_fixed_table){ 0 };
}

static int table_take(struct blk_fixed_table *t)
{
	return t->nr_free ? (int)t->free[--t->nr_free] : -ENOSPC;
}

static void table_give(struct blk_fixed_table *t, int slot)
{
	t->free[t->nr_free++] = (unsigned int)slot;
}

/* A sparse file table counts against the open-file limit. */
static unsigned int files_allowed(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < FIXED_FILES)
		return (unsigned int)rl.rlim_cur / 2;
	return FIXED_FILES;
}

void blk_fixed_init(struct blk_fixed *f, struct io_uring *ring)
{
	unsigned int files = files_allowed();

	*f = (struct blk_fixed){ .ring = ring };
	if (files && io_uring_register_files_sparse(ring, files) == 0 &&
	    table_init(&f->files, files) < 0)
		io_uring_unregister_files(ring);
	if (io_uring_register_buffers_sparse(ring, FIXED_BUFS) == 0 &&
	    table_init(&f->bufs, FIXED_BUFS) < 0)
		io_uring_unregister_buffers(ring);
}

void blk_fixed_destroy(struct blk_fixed *f)
{
	table_free(&f->files);
	table_free(&f->bufs);
}

int blk_fixed_file_add(struct blk_fixed *f, int fd)
{
	int slot = table_take(&f->files);
	int ret;

	if (slot < 0)
		return slot;
	ret = io_uring_register_files_update(f->ring, (unsigned int)slot, &fd,
					     1);
	if (ret == 1)
		return slot;
	table_give(&f->files, slot);
	return ret < 0 ? ret : -EIO;
}

void blk_fixed_file_del(struct blk_fixed *f, int slot)
{
	int none = -1;

	io_uring_register_files_update(f->ring, (unsigned int)slot, &none, 1);
	table_give(&f->files, slot);
}

/* Put @iov in @slot ({NULL, 0}: empty it). 1 on success. */
static int buf_update(struct blk_fixed *f, int slot, struct iovec *iov)
{
	__u64 tag = 0;

	return io_uring_register_buffers_update_tag(f->ring, (unsigned int)slot,
						    iov, &tag, 1);
}

int blk_fixed_buf_add(struct blk_fixed *f, void *base, size_t len)
{
	struct iovec iov = { base, len };
	int slot = table_take(&f->bufs);
	int ret;

	if (slot < 0)
		return slot;
	ret = buf_update(f, slot, &iov);
	if (ret == 1)
		return slot;
	table_give(&f->bufs, slot);
	return ret < 0 ? ret : -EIO;
}

void blk_fixed_buf_del(struct blk_fixed *f, int slot)
{
	struct iovec none = { 0 };

	buf_update(f, slot, &none);
	table_give(&f->bufs, slot);
}

// SPDX-License-Identifier: MIT
/*
 * Registered buffers (see fixed.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "libblk/fixed.h"

/*
 * Buffers a worker keeps registered (bounce slabs of 1 MiB, grant mappings
 * of a page): beyond these, I/O goes unregistered.
 */
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

void blk_fixed_init(struct blk_fixed *f, struct io_uring *ring)
{
	*f = (struct blk_fixed){ .ring = ring };
	if (io_uring_register_buffers_sparse(ring, FIXED_BUFS) == 0 &&
	    table_init(&f->bufs, FIXED_BUFS) < 0)
		io_uring_unregister_buffers(ring);
}

void blk_fixed_destroy(struct blk_fixed *f)
{
	table_free(&f->bufs);
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

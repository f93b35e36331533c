// SPDX-License-Identifier: MIT
/*
 * Grant-copy batches.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <xen/grant_table.h>

#include "libblk/grant_copy.h"

static int reserve(struct blk_copy_batch *b, unsigned int cap)
{
	xengnttab_grant_copy_segment_t *segs;

	if (cap <= b->cap)
		return 0;
	cap = cap < 2 * b->cap ? 2 * b->cap : cap;
	segs = reallocarray(b->segs, cap, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	b->segs = segs;
	b->cap = cap;
	return 0;
}

void blk_copy_batch_free(struct blk_copy_batch *b)
{
	free(b->segs);
	b->segs = NULL;
	b->nr = b->cap = 0;
}

int blk_copy_batch_add(struct blk_copy_batch *b, uint16_t domid, uint32_t gref,
		       uint16_t offset, void *local, uint16_t len,
		       bool to_guest)
{
	xengnttab_grant_copy_segment_t *s;
	union xengnttab_copy_ptr guest = {
		.foreign = { .ref = gref, .offset = offset, .domid = domid },
	};

	if (reserve(b, b->nr + 1) < 0)
		return -ENOMEM;
	s = &b->segs[b->nr++];
	if (to_guest) {
		s->source.virt = local;
		s->dest = guest;
		s->flags = GNTCOPY_dest_gref;
	} else {
		s->source = guest;
		s->dest.virt = local;
		s->flags = GNTCOPY_source_gref;
	}
	s->len = len;
	s->status = GNTST_general_error;
	return 0;
}

int blk_copy_batch_run(struct blk_copy_batch *b, xengnttab_handle *xgt)
{
	if (b->nr == 0)
		return 0;
	if (xengnttab_grant_copy(xgt, b->nr, b->segs) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

bool blk_copy_batch_ok(const struct blk_copy_batch *b, unsigned int first,
		       unsigned int count)
{
	for (unsigned int i = first; i < first + count; i++)
		if (b->segs[i].status != GNTST_okay)
			return false;
	return true;
}

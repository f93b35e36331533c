/* SPDX-License-Identifier: MIT */
/*
 * Batching grant copies: every segment copied in one pass of a worker goes
 * to the hypervisor in one xengnttab_grant_copy() call.
 */
#ifndef LIBBLK_GRANT_COPY_H
#define LIBBLK_GRANT_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include <xengnttab.h>

struct blk_copy_batch {
	xengnttab_grant_copy_segment_t *segs;
	unsigned int nr;
	unsigned int cap;
};

void blk_copy_batch_free(struct blk_copy_batch *b);

/*
 * Queue one copy of @len bytes between the guest's page @gref at @offset
 * and local memory: guest to @local when @to_guest is false, @local to the
 * guest otherwise. Returns 0 or -ENOMEM.
 */
int blk_copy_batch_add(struct blk_copy_batch *b, uint16_t domid, uint32_t gref,
		       uint16_t offset, void *local, uint16_t len,
		       bool to_guest);

/*
 * Issue every queued copy at once. Returns 0 when the call was made (check
 * each request with blk_copy_batch_ok()), or -errno when it failed as a
 * whole, in which case no segment may be trusted.
 */
int blk_copy_batch_run(struct blk_copy_batch *b, xengnttab_handle *xgt);

/* True when all @count segments from @first were copied. */
bool blk_copy_batch_ok(const struct blk_copy_batch *b, unsigned int first,
		       unsigned int count);

static inline void blk_copy_batch_reset(struct blk_copy_batch *b)
{
	b->nr = 0;
}

#endif /* LIBBLK_GRANT_COPY_H */

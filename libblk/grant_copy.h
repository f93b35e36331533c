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

#include "libblk/request.h"

struct blk_copy_batch {
	xengnttab_grant_copy_segment_t *segs;
	unsigned int nr;
	unsigned int cap;
};

/* Make room for @cap segments in total. Returns 0 or -ENOMEM. */
int blk_copy_batch_reserve(struct blk_copy_batch *b, unsigned int cap);
void blk_copy_batch_free(struct blk_copy_batch *b);

/*
 * Queue the copies for all segments of a checked request between the
 * guest's pages and the contiguous bounce buffer @buf: guest to @buf when
 * @to_guest is false (a write), @buf to guest otherwise (a read). Returns
 * the index of the first queued segment.
 */
unsigned int blk_copy_batch_add(struct blk_copy_batch *b, uint16_t domid,
				const struct blk_request *req, void *buf,
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

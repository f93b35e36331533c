/* SPDX-License-Identifier: MIT */
/*
 * The answer journal: what makes a crash between writing answers into the
 * shared ring and publishing them harmless.
 *
 * Request i and its answer share ring slot i. An answer written into its
 * slot overwrites the request; until rsp_prod is published past it, a
 * daemon that resumes the ring after a crash would take that slot for an
 * unanswered request and read answer bytes as one. So before the answers
 * of a push are written into the ring, they are recorded here, in a small
 * file that outlives the process (on tmpfs: a host crash takes the guests
 * with it). A daemon that finds a record whose first slot is the guest's
 * rsp_prod completes that push (writes the answers again and publishes
 * them) before it resumes the ring.
 *
 * One journal per ring, named by the frontend's domain, ring grant and
 * event channel; removed when the ring is closed cleanly. Owned by the
 * engine thread that serves the ring.
 */
#ifndef LIBBLK_JOURNAL_H
#define LIBBLK_JOURNAL_H

#include <stdint.h>

#include "libblk/blkif_abi.h"

/* One answer: also what the engine keeps while it waits to publish. */
struct blk_journal_rec {
	uint64_t id;
	int16_t status;
	uint8_t operation;
};

struct blk_journal_page;

struct blk_journal {
	struct blk_journal_page *page; /* NULL: no journal kept */
	size_t len;
	unsigned int cap; /* records it holds: the ring's size */
	char path[256];
};

/*
 * Open (creating if needed) the journal in @dir of the ring identified by
 * @domid, @ring_ref and @port, with room for @nr_slots answers. A NULL
 * @dir keeps no journal (every call below is then a no-op).
 */
int blk_journal_open(struct blk_journal *j, const char *dir, uint32_t domid,
		     uint32_t ring_ref, uint32_t port, unsigned int nr_slots);
/* Close it; @remove deletes the file (the ring was closed cleanly). */
void blk_journal_close(struct blk_journal *j, int remove);

/*
 * A push an earlier daemon did not finish: its records and the ring
 * index of the first. Returns the number of records (0: none).
 */
unsigned int blk_journal_unfinished(const struct blk_journal *j,
				    RING_IDX *first,
				    const struct blk_journal_rec **recs);

/* Fill record @i of the next push (up to the ring's size). */
void blk_journal_set(struct blk_journal *j, unsigned int i,
		     const struct blk_journal_rec *rec);
/* Records 0 .. @n-1 are about to be written from ring index @first. */
void blk_journal_commit(struct blk_journal *j, RING_IDX first, unsigned int n);
/* They are published: the record is void. */
void blk_journal_done(struct blk_journal *j);

#endif /* LIBBLK_JOURNAL_H */

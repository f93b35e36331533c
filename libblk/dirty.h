/* SPDX-License-Identifier: MIT */
/*
 * The dirty-block map of a live move: which chunks of an image were
 * written since they were last taken.
 *
 * One bit a chunk, in 64-bit words changed only by atomic operations, so
 * that the workers mark it on their I/O path (the engine does, through
 * struct blk_conn_params' dirty) while a copier takes chunks off it on a
 * thread of its own, with no lock between them. The order that makes a
 * move lose no write: a worker marks a request's bytes after its I/O
 * completed, and a copier clears a chunk's bit before it reads the chunk;
 * so a write either landed before that read (the copy has it) or marks
 * the chunk again (the next pass copies it again).
 *
 * Chunks and @from / the result of blk_dirty_take() are chunk indexes:
 * chunk i covers bytes [i * blk_dirty_chunk(), (i + 1) * blk_dirty_chunk())
 * of the image, the last one cut short at the map's size.
 *
 * Who owns what: the creator frees the map, after every marker stopped
 * (for the engine: after conn_closed() of each connection it was given
 * to). Everything else may be called from any thread at any time.
 */
#ifndef LIBBLK_DIRTY_H
#define LIBBLK_DIRTY_H

#include <stdint.h>

/* The largest map, in bytes of bits: what sets the smallest chunk. */
#define BLK_DIRTY_MAX_MAP_BYTES (4u << 20)

struct blk_dirty;

/*
 * A map of @bytes in chunks of a power of two >= @min_chunk, grown so the
 * map stays <= 4 MiB (BLK_DIRTY_MAX_MAP_BYTES); all clean. 0 or -errno:
 * -EINVAL for a @min_chunk of 0 or above 2^31, -EFBIG when @bytes would
 * need chunks above 2^31 (an image of more than 64 PiB), -ENOMEM. A map
 * of 0 bytes has no chunks.
 */
int blk_dirty_new(uint64_t bytes, uint32_t min_chunk, struct blk_dirty **out);
/* After every marker and taker stopped; NULL is nothing. */
void blk_dirty_free(struct blk_dirty *dm);
/* Bytes per chunk. */
uint32_t blk_dirty_chunk(const struct blk_dirty *dm);
/* Chunks in the map. */
uint64_t blk_dirty_chunks(const struct blk_dirty *dm);

/*
 * Mark every chunk [@offset, @offset + @len) touches (what lies past the
 * map's end is ignored; @len 0 marks nothing). Any thread, lock-free (an
 * atomic OR a word): workers call it on their I/O path.
 */
void blk_dirty_mark(struct blk_dirty *dm, uint64_t offset, uint64_t len);
/* Mark every chunk (a first pass copies the whole image). Any thread. */
void blk_dirty_mark_all(struct blk_dirty *dm);

/*
 * The first dirty chunk at or after chunk @from, its bit cleared
 * (atomically) before it is returned, so that a write that lands after
 * the caller read the chunk marks it again; -ENOENT when none (also for
 * @from past the last chunk). Two takers never get the same marking of a
 * chunk. Any thread.
 */
int64_t blk_dirty_take(struct blk_dirty *dm, uint64_t from);

/* Chunks dirty now (exact when no one marks or takes meanwhile). Any
 * thread. */
uint64_t blk_dirty_count(const struct blk_dirty *dm);

#endif /* LIBBLK_DIRTY_H */

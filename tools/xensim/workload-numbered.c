// SPDX-License-Identifier: MIT
/*
 * Numbered writes, for the snapshot tests: a guest that keeps
 * NUMBERED_DEPTH page writes in flight, each carrying its sequence number,
 * and says when it sent each one, when it saw it answered and how, so
 * that a test can tell which writes a copy of the disk must hold and
 * which it must not (tests/snapshot-check.py); and a reader that says
 * which write each block holds, to read such a copy back through another
 * guest. Like every check they judge nothing (workload-check.h): they say
 * what they saw, and fail only when they cannot go on.
 *
 * Each write is one page at block (seq % nblocks); every sector of it
 * holds NUMBERED_MAGIC, the sequence number, the block and the sector's
 * place in it, then words derived from all three, so that a torn or
 * misplaced write shows. Times are CLOCK_MONOTONIC, as the daemon reports
 * a snapshot's pause: both run on the same host.
 */
#include "tools/xensim/workload-check.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#define SECT WORKLOAD_SECTOR
#define SECTS_PER_PAGE BLKIF_SECTORS_PER_PAGE
#define NUMBERED_DEPTH 8
/* At most 16 MiB of blocks: overwritten often enough to matter. */
#define NUMBERED_MAX_BLOCKS 4096u
#define NUMBERED_MAGIC 0x626b736e61707721ull /* "bksnapw!" */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t nr_blocks(struct check *c)
{
	uint64_t n = frontend_disk_info(c->fe)->sectors / SECTS_PER_PAGE;

	return n < NUMBERED_MAX_BLOCKS ? n : NUMBERED_MAX_BLOCKS;
}

static uint64_t word(uint64_t seq, uint64_t block, unsigned int i)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull ^ block ^ ((uint64_t)i << 40);

	x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static void fill(void *page, uint64_t seq, uint64_t block)
{
	uint64_t *w = page;

	for (unsigned int s = 0; s < SECTS_PER_PAGE; s++) {
		uint64_t *sw = w + s * (SECT / 8);

		sw[0] = NUMBERED_MAGIC;
		sw[1] = seq;
		sw[2] = block;
		sw[3] = s;
		for (unsigned int i = 4; i < SECT / 8; i++)
			sw[i] = word(seq, block, s * 64 + i);
	}
}

/*
 * The write @page holds: its sequence number, -1 for a block never
 * written (all zeros), -2 for anything else (torn, misplaced, garbage).
 */
static int64_t holds(const void *page, uint64_t block)
{
	static const unsigned char zero[BLKIF_PAGE_SIZE];
	const uint64_t *w = page;
	unsigned char want[BLKIF_PAGE_SIZE];

	if (!memcmp(page, zero, sizeof(zero)))
		return -1;
	if (w[0] != NUMBERED_MAGIC || w[2] != block || w[1] > INT64_MAX)
		return -2;
	fill(want, w[1], block);
	return memcmp(page, want, sizeof(want)) ? -2 : (int64_t)w[1];
}

/* A line on stdin (or its end) asks the writer to stop. */
static bool asked_to_stop(struct check *c)
{
	struct pollfd p = { .fd = fileno(c->in), .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

struct slot {
	uint64_t id, seq, block, sent_ns;
	bool busy;
};

/* Fill the free slots with the next writes and send them at once. */
static int send_more(struct check *c, struct slot *slots, uint64_t *next,
		     uint64_t blocks)
{
	bool queued = false;
	uint64_t sent;
	int ret;

	for (unsigned int i = 0; i < NUMBERED_DEPTH; i++) {
		struct slot *s = &slots[i];
		const struct frontend_segment seg = { i, 0,
						      SECTS_PER_PAGE - 1 };

		if (s->busy)
			continue;
		s->seq = (*next)++;
		s->block = s->seq % blocks;
		fill(frontend_data_page(c->fe, i), s->seq, s->block);
		ret = frontend_queue_rw(c->fe, BLKIF_OP_WRITE,
					s->block * SECTS_PER_PAGE, &seg, 1,
					&s->id);
		if (ret < 0)
			return check_fail(c, ret, "cannot queue write %" PRIu64,
					  s->seq);
		s->busy = true;
		s->sent_ns = 0;
		queued = true;
	}
	if (!queued)
		return 0;
	/* Before the push: the backend cannot see them any earlier. */
	sent = now_ns();
	for (unsigned int i = 0; i < NUMBERED_DEPTH; i++)
		if (slots[i].busy && !slots[i].sent_ns)
			slots[i].sent_ns = sent;
	ret = frontend_push(c->fe);
	return ret < 0 ? check_fail(c, ret, "notify failed") : 0;
}

/* One answer: "A SEQ BLOCK SENT_NS ACKED_NS STATUS". */
static int take_answer(struct check *c, struct slot *slots)
{
	struct frontend_response rsp;
	uint64_t acked;
	char status[8];
	int ret = frontend_wait(c->fe, &rsp, CHECK_TIMEOUT_MS);

	if (ret < 0)
		return check_fail(c, ret, "no answer within %d ms: %s",
				  CHECK_TIMEOUT_MS, strerror(-ret));
	acked = now_ns();
	for (unsigned int i = 0; i < NUMBERED_DEPTH; i++) {
		struct slot *s = &slots[i];

		if (!s->busy || s->id != rsp.id)
			continue;
		fprintf(c->out,
			"A %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %"
			"s\n",
			s->seq, s->block, s->sent_ns, acked,
			check_status_name(rsp.status, status));
		s->busy = false;
		return 0;
	}
	return check_fail(c, -EPROTO, "an answer to unknown id %" PRIu64,
			  rsp.id);
}

static unsigned int busy_slots(const struct slot *slots)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NUMBERED_DEPTH; i++)
		n += slots[i].busy;
	return n;
}

/*
 * Write until a line comes on stdin, then wait for the writes in flight
 * and print "WRITES N". "WRITING" once the first write was answered.
 */
static int check_numbered_writes(struct check *c)
{
	struct slot slots[NUMBERED_DEPTH] = { { 0 } };
	uint64_t blocks = nr_blocks(c), next = 1;
	bool stopping = false, said = false;
	int ret = 0;

	if (!blocks)
		return check_fail(c, -EINVAL,
				  "the disk is smaller than a page");
	while (!ret && (!stopping || busy_slots(slots))) {
		if (!stopping)
			ret = send_more(c, slots, &next, blocks);
		if (!ret)
			ret = take_answer(c, slots);
		/* The rest is read at the end: no flush per write. */
		if (!said && !ret) {
			fprintf(c->out, "WRITING\n");
			fflush(c->out);
			said = true;
		}
		stopping = stopping || asked_to_stop(c);
	}
	if (!ret)
		fprintf(c->out, "WRITES %" PRIu64 "\n", next - 1);
	return ret;
}

/*
 * Each block's write: "B BLOCK SEQ" (-1: never written, -2: broken), or
 * "B BLOCK STATUS" for a read not answered OKAY.
 */
static int check_numbered_read(struct check *c)
{
	const struct frontend_segment seg = { 0, 0, SECTS_PER_PAGE - 1 };
	uint64_t blocks = nr_blocks(c);
	char status[8];

	for (uint64_t b = 0; b < blocks; b++) {
		int16_t st;
		int ret = check_rw(c, BLKIF_OP_READ, b * SECTS_PER_PAGE, &seg,
				   1, &st);

		if (ret < 0)
			return ret;
		if (st != BLKIF_RSP_OKAY)
			fprintf(c->out, "B %" PRIu64 " %s\n", b,
				check_status_name(st, status));
		else
			fprintf(c->out, "B %" PRIu64 " %" PRId64 "\n", b,
				holds(frontend_data_page(c->fe, 0), b));
	}
	return 0;
}

check_fn check_numbered_find(const char *name)
{
	if (!strcmp(name, "numbered-writes"))
		return check_numbered_writes;
	if (!strcmp(name, "numbered-read"))
		return check_numbered_read;
	return NULL;
}

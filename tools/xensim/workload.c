// SPDX-License-Identifier: MIT
/* Verified workloads and targeted checks for the simulated blkfront. */
#include "tools/xensim/workload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/xensim/xenbus.h"

#define SECT WORKLOAD_SECTOR
#define SECTS_PER_PAGE BLKIF_SECTORS_PER_PAGE
#define MAX_SEGS BLKIF_MAX_SEGMENTS_PER_REQUEST
#define POISON 0xa5

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * One sector: its number and the seed in clear (so a dump of a bad image
 * says which sector landed where), then hashes of (seed, sector, word).
 */
static void fill_sector(uint64_t seed, uint64_t sector, uint64_t *w)
{
	uint64_t base = splitmix64(seed ^ (sector * 0xd1342543de82ef95ull));

	w[0] = sector;
	w[1] = seed;
	for (unsigned int i = 2; i < SECT / 8; i++)
		w[i] = splitmix64(base + i);
}

void workload_fill_pattern(uint64_t seed, uint64_t sector, void *buf,
			   uint32_t count)
{
	uint64_t w[SECT / 8];

	for (uint32_t i = 0; i < count; i++) {
		fill_sector(seed, sector + i, w);
		memcpy((char *)buf + (size_t)i * SECT, w, SECT);
	}
}

long workload_check_pattern(uint64_t seed, uint64_t sector, const void *buf,
			    uint32_t count)
{
	uint64_t w[SECT / 8];

	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *got =
			(const unsigned char *)buf + (size_t)i * SECT;

		fill_sector(seed, sector + i, w);
		if (memcmp(got, w, SECT) == 0)
			continue;
		for (unsigned int b = 0; b < SECT; b++) {
			if (got[b] != ((const unsigned char *)w)[b])
				return (long)i * SECT + b;
		}
	}
	return -1;
}

static void say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* ---- requests over data pages ---- */

struct io {
	uint8_t op;
	uint64_t sector;
	uint32_t nsect;
	unsigned int nseg;
	struct frontend_segment seg[MAX_SEGS];
	uint64_t id;
	int64_t issued_ms;
	bool busy;
};

/* A cheap per-run PRNG; never shared between threads. */
static uint64_t rng_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return splitmix64(*state);
}

/*
 * Lay @nsect sectors over the 11 pages starting at @first_page: whole pages
 * from sector 0, or (partial) segments that start and end at random
 * sectors inside their pages. Returns the segment count.
 */
static unsigned int layout_segments(struct io *io, uint32_t first_page,
				    bool partial, uint64_t *rng)
{
	uint32_t left = io->nsect;
	unsigned int n = 0;

	while (left) {
		uint32_t room_after = (MAX_SEGS - n - 1) * SECTS_PER_PAGE;
		uint32_t min_len = left > room_after ? left - room_after : 1;
		uint32_t max_len = left < SECTS_PER_PAGE ? left
							 : SECTS_PER_PAGE;
		uint32_t len = max_len, first = 0;

		if (partial && min_len < max_len)
			len = min_len + (uint32_t)(rng_next(rng) %
						   (max_len - min_len + 1));
		if (partial && len < SECTS_PER_PAGE)
			first = (uint32_t)(rng_next(rng) %
					   (SECTS_PER_PAGE - len + 1));
		io->seg[n] = (struct frontend_segment){
			.page = first_page + n,
			.first_sect = (uint8_t)first,
			.last_sect = (uint8_t)(first + len - 1),
		};
		left -= len;
		n++;
	}
	io->nseg = n;
	return n;
}

static void *segment_data(struct frontend *fe, const struct frontend_segment *s)
{
	return (char *)frontend_data_page(fe, s->page) +
	       (size_t)s->first_sect * SECT;
}

static uint32_t segment_sectors(const struct frontend_segment *s)
{
	return (uint32_t)s->last_sect - s->first_sect + 1;
}

static void fill_io_pages(struct frontend *fe, const struct io *io,
			  uint64_t seed)
{
	uint64_t sector = io->sector;

	for (unsigned int i = 0; i < io->nseg; i++) {
		uint32_t n = segment_sectors(&io->seg[i]);

		workload_fill_pattern(seed, sector,
				      segment_data(fe, &io->seg[i]), n);
		sector += n;
	}
}

static void poison_io_pages(struct frontend *fe, const struct io *io)
{
	for (unsigned int i = 0; i < io->nseg; i++)
		memset(frontend_data_page(fe, io->seg[i].page), POISON,
		       BLKIF_PAGE_SIZE);
}

/* Verify what a READ brought in; -1 if all good, else the bad sector. */
static int64_t check_io_pages(struct frontend *fe, const struct io *io,
			      uint64_t seed, long *byte)
{
	uint64_t sector = io->sector;

	for (unsigned int i = 0; i < io->nseg; i++) {
		uint32_t n = segment_sectors(&io->seg[i]);
		long bad = workload_check_pattern(
			seed, sector, segment_data(fe, &io->seg[i]), n);

		if (bad >= 0) {
			*byte = bad % SECT;
			return (int64_t)(sector + (uint64_t)bad / SECT);
		}
		sector += n;
	}
	return -1;
}

static const char *op_name(uint8_t op)
{
	switch (op) {
	case BLKIF_OP_READ:
		return "READ";
	case BLKIF_OP_WRITE:
		return "WRITE";
	case BLKIF_OP_FLUSH_DISKCACHE:
		return "FLUSH";
	default:
		return "op";
	}
}

static void describe_io(const struct io *io, char *buf, size_t len)
{
	snprintf(buf, len,
		 "%s id %" PRIu64 " sector %" PRIu64 " (%u sectors, %u "
		 "segments)",
		 op_name(io->op), io->id, io->sector, io->nsect, io->nseg);
}

static int submit_io(struct frontend *fe, struct io *io)
{
	int ret;

	if (io->op == BLKIF_OP_FLUSH_DISKCACHE)
		ret = frontend_queue_flush(fe, &io->id);
	else
		ret = frontend_queue_rw(fe, io->op, io->sector, io->seg,
					io->nseg, &io->id);
	if (ret < 0)
		return ret;
	io->busy = true;
	io->issued_ms = xenbus_now_ms();
	return 0;
}

/* ---- the main workload ---- */

struct run {
	struct frontend *fe;
	const struct workload_params *p;
	struct workload_stats *st;
	struct io *ios; /* one per depth slot; slot i owns pages i*11.. */
	uint8_t *written; /* per block */
	uint64_t nblocks;
	uint64_t sectors;
	uint32_t nsect;
	uint64_t rng;
	uint64_t seq;
	uint64_t writes_since_flush;
	char *why;
	size_t why_len;
};

static struct io *find_io(struct run *r, uint64_t id)
{
	for (uint32_t i = 0; i < r->p->depth; i++) {
		if (r->ios[i].busy && r->ios[i].id == id)
			return &r->ios[i];
	}
	return NULL;
}

static struct io *free_slot(struct run *r, uint32_t *index)
{
	for (uint32_t i = 0; i < r->p->depth; i++) {
		if (!r->ios[i].busy) {
			*index = i;
			return &r->ios[i];
		}
	}
	return NULL;
}

/* Blocks are bs long, except a shorter last one at the end of the disk. */
static uint32_t block_sectors(const struct run *r, uint64_t block)
{
	uint64_t left = r->sectors - block * r->nsect;

	return left < r->nsect ? (uint32_t)left : r->nsect;
}

/* Complete one response: account, verify, mark written. */
static int complete_one(struct run *r, int timeout_ms)
{
	struct frontend_response rsp;
	char desc[160];
	struct io *io;
	int ret;

	ret = frontend_wait(r->fe, &rsp, timeout_ms);
	if (ret == -ETIMEDOUT) {
		struct io *oldest = NULL;

		for (uint32_t i = 0; i < r->p->depth; i++) {
			if (r->ios[i].busy &&
			    (!oldest ||
			     r->ios[i].issued_ms < oldest->issued_ms))
				oldest = &r->ios[i];
		}
		if (oldest)
			describe_io(oldest, desc, sizeof(desc));
		say(r->why, r->why_len, "no response in %d ms to %s",
		    timeout_ms, oldest ? desc : "(none)");
		return ret;
	}
	if (ret < 0) {
		say(r->why, r->why_len,
		    "bad response from backend: id %" PRIu64 " op %u: %s",
		    rsp.id, rsp.operation, strerror(-ret));
		return ret;
	}
	io = find_io(r, rsp.id);
	if (!io) {
		say(r->why, r->why_len, "response for unknown id %" PRIu64,
		    rsp.id);
		return -EPROTO;
	}
	io->busy = false;
	describe_io(io, desc, sizeof(desc));
	if (rsp.status != BLKIF_RSP_OKAY) {
		say(r->why, r->why_len, "%s: status %d", desc, rsp.status);
		return -EIO;
	}
	r->st->ops++;
	switch (io->op) {
	case BLKIF_OP_WRITE:
		r->st->bytes_written += (uint64_t)io->nsect * SECT;
		r->written[io->sector / r->nsect] = 1;
		break;
	case BLKIF_OP_READ: {
		long byte = 0;
		int64_t bad;

		r->st->bytes_read += (uint64_t)io->nsect * SECT;
		if (!r->p->verify)
			break;
		bad = check_io_pages(r->fe, io, r->p->seed, &byte);
		if (bad >= 0) {
			say(r->why, r->why_len,
			    "%s: data mismatch at sector %" PRId64 " byte %ld",
			    desc, bad, byte);
			return -EIO;
		}
		r->st->verified_bytes += (uint64_t)io->nsect * SECT;
		break;
	}
	default:
		r->st->flushes++;
		break;
	}
	return 0;
}

static int drain(struct run *r)
{
	while (frontend_in_flight(r->fe)) {
		int ret = complete_one(r, r->p->timeout_ms);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Issue one I/O into a free slot (completing one first if none is). */
static int issue(struct run *r, uint8_t op, uint64_t block)
{
	uint32_t slot;
	struct io *io;
	int ret;

	while (!(io = free_slot(r, &slot))) {
		ret = complete_one(r, r->p->timeout_ms);
		if (ret < 0)
			return ret;
	}
	*io = (struct io){ .op = op,
			   .sector = block * r->nsect,
			   .nsect = block_sectors(r, block) };
	if (op != BLKIF_OP_FLUSH_DISKCACHE) {
		layout_segments(io, slot * MAX_SEGS, r->p->partial, &r->rng);
		if (op == BLKIF_OP_WRITE)
			fill_io_pages(r->fe, io, r->p->seed);
		else
			poison_io_pages(r->fe, io);
	} else {
		io->sector = 0;
		io->nsect = 0;
	}
	ret = submit_io(r->fe, io);
	if (ret < 0) {
		say(r->why, r->why_len, "cannot queue request: %s",
		    strerror(-ret));
		return ret;
	}
	return frontend_push(r->fe);
}

static int flush_now(struct run *r)
{
	int ret = drain(r);

	if (ret < 0)
		return ret;
	ret = issue(r, BLKIF_OP_FLUSH_DISKCACHE, 0);
	if (ret < 0)
		return ret;
	r->writes_since_flush = 0;
	return drain(r);
}

static int sequential_pass(struct run *r, uint8_t op)
{
	for (uint64_t b = 0; b < r->nblocks; b++) {
		int ret;

		if (op == BLKIF_OP_READ && !r->written[b])
			continue;
		ret = issue(r, op, b);
		if (ret < 0)
			return ret;
	}
	return drain(r);
}

static bool mixed_done(const struct run *r, uint64_t n, int64_t start)
{
	if (r->p->ops)
		return n >= r->p->ops;
	return xenbus_now_ms() - start >= (int64_t)(r->p->seconds * 1000);
}

static int mixed_phase(struct run *r)
{
	int64_t start = xenbus_now_ms();
	uint64_t n;

	for (n = 0; !mixed_done(r, n, start); n++) {
		uint64_t block = r->p->random ? rng_next(&r->rng) % r->nblocks
					      : r->seq++ % r->nblocks;
		bool read = r->p->preexisting || (rng_next(&r->rng) & 1);
		uint8_t op = read && r->written[block] ? BLKIF_OP_READ
						       : BLKIF_OP_WRITE;
		int ret;

		ret = issue(r, op, block);
		if (ret < 0)
			return ret;
		if (op == BLKIF_OP_WRITE && r->p->flush_every &&
		    ++r->writes_since_flush >= r->p->flush_every) {
			ret = flush_now(r);
			if (ret < 0)
				return ret;
		}
	}
	return drain(r);
}

static int run_phases(struct run *r)
{
	int ret;

	if (r->p->fill) {
		ret = sequential_pass(r, BLKIF_OP_WRITE);
		if (ret < 0)
			return ret;
	}
	ret = mixed_phase(r);
	if (ret < 0)
		return ret;
	if (r->p->flush_every ||
	    frontend_disk_info(r->fe)->feature_flush_cache) {
		ret = flush_now(r);
		if (ret < 0)
			return ret;
	}
	if (r->p->verify)
		return sequential_pass(r, BLKIF_OP_READ);
	return 0;
}

int workload_run(struct frontend *fe, const struct workload_params *p,
		 struct workload_stats *st, char *why, size_t why_len)
{
	const struct frontend_disk_info *di = frontend_disk_info(fe);
	struct run r = { .fe = fe,
			 .p = p,
			 .st = st,
			 .why = why,
			 .why_len = why_len,
			 .rng = p->seed };
	int64_t start = xenbus_now_ms();
	int ret;

	memset(st, 0, sizeof(*st));
	if (p->bs == 0 || p->bs % SECT || p->bs > MAX_SEGS * BLKIF_PAGE_SIZE ||
	    p->depth == 0 || p->depth > 32) {
		say(why, why_len, "bad block size or depth");
		return -EINVAL;
	}
	if (di->sector_size != SECT) {
		say(why, why_len, "sector-size %u is not 512", di->sector_size);
		return -EINVAL;
	}
	r.nsect = p->bs / SECT;
	r.sectors = di->sectors;
	r.nblocks = (di->sectors + r.nsect - 1) / r.nsect;
	if (!r.nblocks) {
		say(why, why_len,
		    "disk of %" PRIu64 " sectors is smaller than one block",
		    di->sectors);
		return -EINVAL;
	}
	r.ios = calloc(p->depth, sizeof(*r.ios));
	r.written = calloc(r.nblocks, 1);
	if (!r.ios || !r.written) {
		free(r.ios);
		free(r.written);
		return -ENOMEM;
	}
	if (p->preexisting)
		memset(r.written, 1, r.nblocks);
	ret = run_phases(&r);
	st->seconds = (double)(xenbus_now_ms() - start) / 1000.0;
	free(r.ios);
	free(r.written);
	return ret;
}

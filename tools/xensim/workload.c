// SPDX-License-Identifier: MIT
/* Verified workloads and targeted checks for the simulated blkfront. */
#include "tools/xensim/workload.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/xenbus.h"
#include "tools/xensim/workload-check.h"

#define SECT WORKLOAD_SECTOR
#define PAGE BLKIF_PAGE_SIZE
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

/*
 * Pages one request's slot owns: whole pages, or (partial) room for
 * segments that start and end inside pages.
 */
static uint32_t pages_per_io(uint32_t bs, bool partial, uint32_t max_segs)
{
	uint32_t whole = (bs + PAGE - 1) / PAGE;
	uint32_t n = partial ? 2 * whole : whole;

	if (n > max_segs)
		n = max_segs;
	return n < whole ? whole : n;
}

uint32_t workload_data_pages(const struct workload_params *p,
			     unsigned int queues)
{
	uint64_t n =
		(uint64_t)queues * p->depth *
		pages_per_io(p->bs, p->partial, BLKIF_MAX_INDIRECT_SEGMENTS);

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

struct io {
	uint8_t op;
	uint64_t sector; /* device sectors */
	uint32_t nsect;
	unsigned int nseg;
	struct frontend_segment *seg; /* pages_per_io entries */
	uint64_t id;
	int64_t issued_ms;
	bool busy;
};

/* What all queues of one run share; each queue touches its own blocks. */
struct shared {
	struct frontend *fe;
	const struct workload_params *p;
	uint8_t *written; /* per block */
	uint64_t nblocks;
	uint64_t sectors; /* device sectors */
	uint32_t nsect; /* device sectors per block */
	uint32_t ss; /* sector size */
	uint32_t spp; /* sectors per page */
	uint32_t units; /* 512-byte pattern units per sector */
	uint32_t pages_per_io;
	uint32_t depth;
	unsigned int nq;
};

/* One queue's thread. */
struct run {
	struct shared *sh;
	unsigned int q;
	struct workload_stats st;
	struct io *ios;
	struct frontend_segment *segs;
	uint64_t rng;
	uint64_t seq;
	uint64_t writes_since_flush;
	uint64_t ops_wanted;
	char why[512];
	int ret;
	pthread_t thread;
};

/* A cheap per-run PRNG; never shared between threads. */
static uint64_t rng_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return splitmix64(*state);
}

/*
 * Lay io->nsect sectors over the slot's pages starting at @first_page:
 * whole pages from sector 0, or (partial) segments that start and end at
 * random sectors inside their pages. Returns the segment count.
 */
static unsigned int layout_segments(const struct shared *sh, struct io *io,
				    uint32_t first_page, bool partial,
				    uint64_t *rng)
{
	uint32_t left = io->nsect, spp = sh->spp;
	unsigned int n = 0;

	while (left) {
		uint32_t room_after = (sh->pages_per_io - n - 1) * spp;
		uint32_t min_len = left > room_after ? left - room_after : 1;
		uint32_t max_len = left < spp ? left : spp;
		uint32_t len = max_len, first = 0;

		if (partial && min_len < max_len)
			len = min_len + (uint32_t)(rng_next(rng) %
						   (max_len - min_len + 1));
		if (partial && len < spp)
			first = (uint32_t)(rng_next(rng) % (spp - len + 1));
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

static void *segment_data(const struct shared *sh,
			  const struct frontend_segment *s)
{
	return (char *)frontend_data_page(sh->fe, s->page) +
	       (size_t)s->first_sect * sh->ss;
}

static uint32_t segment_sectors(const struct frontend_segment *s)
{
	return (uint32_t)s->last_sect - s->first_sect + 1;
}

static void fill_io_pages(const struct shared *sh, const struct io *io)
{
	uint64_t sector = io->sector;

	for (unsigned int i = 0; i < io->nseg; i++) {
		uint32_t n = segment_sectors(&io->seg[i]);

		workload_fill_pattern(sh->p->seed, sector * sh->units,
				      segment_data(sh, &io->seg[i]),
				      n * sh->units);
		sector += n;
	}
}

static void poison_io_pages(const struct shared *sh, const struct io *io)
{
	for (unsigned int i = 0; i < io->nseg; i++)
		memset(frontend_data_page(sh->fe, io->seg[i].page), POISON,
		       PAGE);
}

/* The byte the pattern puts at @byte of 512-byte sector @sector. */
static uint8_t pattern_byte(uint64_t seed, uint64_t sector, uint32_t byte)
{
	uint64_t w[SECT / 8];

	fill_sector(seed, sector, w);
	return ((const uint8_t *)w)[byte];
}

/*
 * Compare what a READ brought in with the pattern; true if all of it
 * matches, else the first wrong byte in @m.
 */
static bool compare_io_pages(const struct shared *sh, const struct io *io,
			     struct workload_mismatch *m)
{
	uint64_t unit = io->sector * sh->units;

	for (unsigned int i = 0; i < io->nseg; i++) {
		uint32_t n = segment_sectors(&io->seg[i]) * sh->units;
		const uint8_t *data = segment_data(sh, &io->seg[i]);
		long bad = workload_check_pattern(sh->p->seed, unit, data, n);

		if (bad >= 0) {
			*m = (struct workload_mismatch){
				.found = true,
				.sector = unit + (uint64_t)bad / SECT,
				.byte = (uint32_t)(bad % SECT),
				.got = data[bad],
			};
			m->expected =
				pattern_byte(sh->p->seed, m->sector, m->byte);
			return false;
		}
		unit += n;
	}
	return true;
}

/* Keep the lower of two mismatches in @first. */
static void keep_first(struct workload_mismatch *first,
		       const struct workload_mismatch *m)
{
	if (!m->found)
		return;
	if (!first->found || m->sector < first->sector ||
	    (m->sector == first->sector && m->byte < first->byte))
		*first = *m;
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

static void describe_io(const struct run *r, const struct io *io, char *buf,
			size_t len)
{
	snprintf(buf, len,
		 "queue %u %s%s id %" PRIu64 " sector %" PRIu64 " (%u sectors, "
		 "%u segments)",
		 r->q,
		 io->nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST ? "indirect " : "",
		 op_name(io->op), io->id, io->sector, io->nsect, io->nseg);
}

static int submit_io(struct run *r, struct io *io)
{
	int ret = frontend_queue_io(r->sh->fe, r->q, io->op, io->sector,
				    io->seg, io->nseg, &io->id);

	if (ret < 0)
		return ret;
	if (io->nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST)
		r->st.indirect_ops++;
	io->busy = true;
	io->issued_ms = xenbus_now_ms();
	return 0;
}

/* ---- one queue's share of the workload ---- */

static struct io *find_io(struct run *r, uint64_t id)
{
	for (uint32_t i = 0; i < r->sh->depth; i++) {
		if (r->ios[i].busy && r->ios[i].id == id)
			return &r->ios[i];
	}
	return NULL;
}

static struct io *free_slot(struct run *r, uint32_t *index)
{
	for (uint32_t i = 0; i < r->sh->depth; i++) {
		if (!r->ios[i].busy) {
			*index = i;
			return &r->ios[i];
		}
	}
	return NULL;
}

/* Blocks are bs long, except a shorter last one at the end of the disk. */
static uint32_t block_sectors(const struct shared *sh, uint64_t block)
{
	uint64_t left = sh->sectors - block * sh->nsect;

	return left < sh->nsect ? (uint32_t)left : sh->nsect;
}

/* Blocks of this queue: q, q + nq, q + 2 nq, ... */
static uint64_t queue_blocks(const struct run *r)
{
	const struct shared *sh = r->sh;

	if (r->q >= sh->nblocks)
		return 0;
	return (sh->nblocks - r->q + sh->nq - 1) / sh->nq;
}

static uint64_t queue_block(const struct run *r, uint64_t j)
{
	return r->q + j * r->sh->nq;
}

static int timed_out(struct run *r, int timeout_ms)
{
	struct io *oldest = NULL;
	char desc[160];

	for (uint32_t i = 0; i < r->sh->depth; i++) {
		if (r->ios[i].busy &&
		    (!oldest || r->ios[i].issued_ms < oldest->issued_ms))
			oldest = &r->ios[i];
	}
	if (oldest)
		describe_io(r, oldest, desc, sizeof(desc));
	say(r->why, sizeof(r->why), "no response in %d ms to %s", timeout_ms,
	    oldest ? desc : "(none)");
	return -ETIMEDOUT;
}

/* Count a READ's bytes and, with verify, compare its data. */
static void account_read(struct run *r, const struct io *io)
{
	const struct shared *sh = r->sh;
	struct workload_mismatch m;

	r->st.bytes_read += (uint64_t)io->nsect * sh->ss;
	if (!sh->p->verify)
		return;
	r->st.blocks_compared++;
	if (compare_io_pages(sh, io, &m))
		return;
	r->st.blocks_mismatched++;
	keep_first(&r->st.first, &m);
}

/* Complete one response: account, compare, mark written. */
static int complete_one(struct run *r, int timeout_ms)
{
	struct frontend_response rsp = { 0 };
	char desc[160];
	struct io *io;
	int ret;

	ret = frontend_wait_on(r->sh->fe, r->q, &rsp, timeout_ms);
	if (ret == -ETIMEDOUT)
		return timed_out(r, timeout_ms);
	io = find_io(r, rsp.id);
	if (ret < 0) {
		if (io)
			describe_io(r, io, desc, sizeof(desc));
		say(r->why, sizeof(r->why),
		    "bad response from backend: id %" PRIu64 " op %u status "
		    "%d%s%s: %s",
		    rsp.id, rsp.operation, rsp.status, io ? " to " : "",
		    io ? desc : "",
		    ret == -EPROTO ? "unknown id or wrong operation"
				   : strerror(-ret));
		return ret;
	}
	if (!io) {
		say(r->why, sizeof(r->why), "response for unknown id %" PRIu64,
		    rsp.id);
		return -EPROTO;
	}
	io->busy = false;
	describe_io(r, io, desc, sizeof(desc));
	if (rsp.status != BLKIF_RSP_OKAY) {
		r->st.error = (struct workload_answer){ .found = true,
							.op = io->op,
							.sector = io->sector,
							.sectors = io->nsect,
							.status = rsp.status };
		say(r->why, sizeof(r->why), "%s: status %d", desc, rsp.status);
		return -EIO;
	}
	r->st.ops++;
	switch (io->op) {
	case BLKIF_OP_WRITE:
		r->st.bytes_written += (uint64_t)io->nsect * r->sh->ss;
		r->st.blocks_written++;
		r->sh->written[io->sector / r->sh->nsect] = 1;
		return 0;
	case BLKIF_OP_READ:
		account_read(r, io);
		return 0;
	default:
		r->st.flushes++;
		return 0;
	}
}

static int drain(struct run *r)
{
	while (frontend_queue_in_flight(r->sh->fe, r->q)) {
		int ret = complete_one(r, r->sh->p->timeout_ms);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Issue one I/O into a free slot (completing one first if none is). */
static int issue(struct run *r, uint8_t op, uint64_t block)
{
	struct shared *sh = r->sh;
	uint32_t slot;
	struct io *io;
	int ret;

	while (!(io = free_slot(r, &slot))) {
		ret = complete_one(r, sh->p->timeout_ms);
		if (ret < 0)
			return ret;
	}
	*io = (struct io){ .op = op,
			   .sector = block * sh->nsect,
			   .nsect = block_sectors(sh, block),
			   .seg = r->segs + (size_t)slot * sh->pages_per_io };
	if (op != BLKIF_OP_FLUSH_DISKCACHE) {
		uint32_t first_page =
			(r->q * sh->depth + slot) * sh->pages_per_io;

		layout_segments(sh, io, first_page, sh->p->partial, &r->rng);
		if (op == BLKIF_OP_WRITE)
			fill_io_pages(sh, io);
		else
			poison_io_pages(sh, io);
	} else {
		io->sector = 0;
		io->nsect = 0;
	}
	ret = submit_io(r, io);
	if (ret < 0) {
		say(r->why, sizeof(r->why),
		    "queue %u: cannot queue request: %s", r->q, strerror(-ret));
		return ret;
	}
	return frontend_push_on(sh->fe, r->q);
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
	uint64_t n = queue_blocks(r);

	for (uint64_t j = 0; j < n; j++) {
		uint64_t b = queue_block(r, j);
		int ret;

		if (op == BLKIF_OP_READ && !r->sh->written[b])
			continue;
		ret = issue(r, op, b);
		if (ret < 0)
			return ret;
	}
	return drain(r);
}

static bool mixed_done(const struct run *r, uint64_t n, int64_t start)
{
	const struct workload_params *p = r->sh->p;

	if (p->ops)
		return n >= r->ops_wanted;
	return xenbus_now_ms() - start >= (int64_t)(p->seconds * 1000);
}

static int mixed_phase(struct run *r)
{
	const struct workload_params *p = r->sh->p;
	uint64_t nb = queue_blocks(r);
	int64_t start = xenbus_now_ms();
	uint64_t n;

	if (!nb)
		return 0;
	for (n = 0; !mixed_done(r, n, start); n++) {
		uint64_t j = p->random ? rng_next(&r->rng) % nb : r->seq++ % nb;
		uint64_t block = queue_block(r, j);
		bool read = p->preexisting || (rng_next(&r->rng) & 1);
		uint8_t op = read && r->sh->written[block] ? BLKIF_OP_READ
							   : BLKIF_OP_WRITE;
		int ret;

		ret = issue(r, op, block);
		if (ret < 0)
			return ret;
		if (op == BLKIF_OP_WRITE && p->flush_every &&
		    ++r->writes_since_flush >= p->flush_every) {
			ret = flush_now(r);
			if (ret < 0)
				return ret;
		}
	}
	return drain(r);
}

static int run_phases(struct run *r)
{
	const struct workload_params *p = r->sh->p;
	int ret;

	if (p->fill) {
		ret = sequential_pass(r, BLKIF_OP_WRITE);
		if (ret < 0)
			return ret;
	}
	ret = mixed_phase(r);
	if (ret < 0)
		return ret;
	if (p->flush_every ||
	    frontend_disk_info(r->sh->fe)->feature_flush_cache) {
		ret = flush_now(r);
		if (ret < 0)
			return ret;
	}
	if (p->verify)
		return sequential_pass(r, BLKIF_OP_READ);
	return 0;
}

static void *run_thread(void *arg)
{
	struct run *r = arg;

	r->ret = run_phases(r);
	return NULL;
}

/* The request size the transport can carry in one request. */
static uint32_t usable_bs(const struct shared *sh, uint32_t bs)
{
	uint64_t max =
		(uint64_t)frontend_disk_info(sh->fe)->max_segments * PAGE;

	return bs > max ? (uint32_t)max : bs;
}

static int setup_shared(struct shared *sh, struct workload_stats *st, char *why,
			size_t why_len)
{
	const struct frontend_disk_info *di = frontend_disk_info(sh->fe);
	const struct workload_params *p = sh->p;
	uint32_t bs;

	sh->ss = di->sector_size;
	sh->spp = PAGE / sh->ss;
	sh->units = sh->ss / SECT;
	sh->nq = di->nr_queues;
	sh->depth = p->depth < di->ring_size ? p->depth : di->ring_size;
	bs = usable_bs(sh, p->bs);
	if (bs == 0 || bs % sh->ss || p->depth == 0) {
		say(why, why_len,
		    "block size %u is not a multiple of the %u-byte sector, or "
		    "depth is 0",
		    bs, sh->ss);
		return -EINVAL;
	}
	sh->nsect = bs / sh->ss;
	sh->pages_per_io = pages_per_io(bs, p->partial, di->max_segments);
	if ((uint64_t)sh->nq * sh->depth * sh->pages_per_io >
	    frontend_nr_data_pages(sh->fe)) {
		say(why, why_len,
		    "%u queues x depth %u x %u pages exceed the %u data pages",
		    sh->nq, sh->depth, sh->pages_per_io,
		    frontend_nr_data_pages(sh->fe));
		return -ENOSPC;
	}
	sh->sectors = di->sectors;
	sh->nblocks = (di->sectors + sh->nsect - 1) / sh->nsect;
	if (!sh->nblocks) {
		say(why, why_len,
		    "disk of %" PRIu64 " sectors is smaller than one block",
		    di->sectors);
		return -EINVAL;
	}
	st->bs = bs;
	st->depth = sh->depth;
	st->queues = sh->nq;
	return 0;
}

static int setup_run(struct run *r, struct shared *sh, unsigned int q)
{
	const struct workload_params *p = sh->p;

	r->sh = sh;
	r->q = q;
	r->rng = p->seed ^ ((uint64_t)q * 0x2545f4914f6cdd1dull);
	r->ops_wanted = p->ops / sh->nq + (q < p->ops % sh->nq ? 1 : 0);
	r->ios = calloc(sh->depth, sizeof(*r->ios));
	r->segs =
		calloc((size_t)sh->depth * sh->pages_per_io, sizeof(*r->segs));
	return r->ios && r->segs ? 0 : -ENOMEM;
}

static void merge_stats(struct workload_stats *st, const struct run *r)
{
	st->bytes_written += r->st.bytes_written;
	st->bytes_read += r->st.bytes_read;
	st->ops += r->st.ops;
	st->flushes += r->st.flushes;
	st->blocks_written += r->st.blocks_written;
	st->blocks_compared += r->st.blocks_compared;
	st->blocks_mismatched += r->st.blocks_mismatched;
	keep_first(&st->first, &r->st.first);
	if (!st->error.found)
		st->error = r->st.error;
	st->indirect_ops += r->st.indirect_ops;
}

/* Start every queue's thread (queue 0 runs on the caller's), join all. */
static int run_queues(struct shared *sh, struct run *runs,
		      struct workload_stats *st, char *why, size_t why_len)
{
	int ret = 0;

	for (unsigned int q = 1; q < sh->nq; q++) {
		int err = pthread_create(&runs[q].thread, NULL, run_thread,
					 &runs[q]);

		if (err) {
			runs[q].ret = -err;
			runs[q].thread = 0;
			say(runs[q].why, sizeof(runs[q].why),
			    "cannot start a thread for queue %u", q);
		}
	}
	run_thread(&runs[0]);
	for (unsigned int q = 0; q < sh->nq; q++) {
		if (q && runs[q].thread)
			pthread_join(runs[q].thread, NULL);
		merge_stats(st, &runs[q]);
		if (runs[q].ret < 0 && !ret) {
			ret = runs[q].ret;
			say(why, why_len, "%s", runs[q].why);
		}
	}
	return ret;
}

int workload_run(struct frontend *fe, const struct workload_params *p,
		 struct workload_stats *st, char *why, size_t why_len)
{
	struct shared sh = { .fe = fe, .p = p };
	struct run *runs = NULL;
	int64_t start = xenbus_now_ms();
	int ret;

	memset(st, 0, sizeof(*st));
	ret = setup_shared(&sh, st, why, why_len);
	if (ret < 0)
		return ret;
	sh.written = calloc(sh.nblocks, 1);
	runs = calloc(sh.nq, sizeof(*runs));
	ret = sh.written && runs ? 0 : -ENOMEM;
	for (unsigned int q = 0; !ret && q < sh.nq; q++)
		ret = setup_run(&runs[q], &sh, q);
	if (!ret) {
		if (p->preexisting)
			memset(sh.written, 1, sh.nblocks);
		ret = run_queues(&sh, runs, st, why, why_len);
		st->unannounced = frontend_unannounced(fe);
	}
	st->seconds = (double)(xenbus_now_ms() - start) / 1000.0;
	for (unsigned int q = 0; runs && q < sh.nq; q++) {
		free(runs[q].ios);
		free(runs[q].segs);
	}
	free(runs);
	free(sh.written);
	return ret;
}

void workload_report_verify(const struct workload_stats *st, FILE *out)
{
	const struct workload_mismatch *m = &st->first;

	fprintf(out,
		"fact check=verify case=summary written=%" PRIu64
		" compared=%" PRIu64 " mismatched=%" PRIu64,
		st->blocks_written, st->blocks_compared, st->blocks_mismatched);
	if (m->found)
		fprintf(out,
			" first=%" PRIu64 ":%u expected=0x%02x got=0x%02x\n",
			m->sector, m->byte, m->expected, m->got);
	else
		fputs(" first=- expected=- got=-\n", out);
	fflush(out);
}

void workload_report_error(const struct workload_stats *st, FILE *out)
{
	const struct workload_answer *a = &st->error;
	char buf[8];

	if (!a->found)
		return;
	fprintf(out,
		"fact check=workload case=error-answer op=%s sector=%" PRIu64
		" sectors=%u status=%s\n",
		op_name(a->op), a->sector, a->sectors,
		check_status_name(a->status, buf));
	fflush(out);
}

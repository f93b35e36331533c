// SPDX-License-Identifier: MIT
/*
 * Targeted checks for the integration tests: each drives a few requests
 * whose correct outcome is known exactly (data, or an error status) and
 * then proves the ring still serves ordinary I/O.
 */
#include "tools/xensim/workload-check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SECT WORKLOAD_SECTOR
#define SECTS_PER_PAGE BLKIF_SECTORS_PER_PAGE
#define MAX_SEGS BLKIF_MAX_SEGMENTS_PER_REQUEST

int check_fail(struct check *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->why_len, fmt, ap);
	va_end(ap);
	return err;
}

/* Push what is queued and wait for exactly one response. */
int check_await(struct check *c, uint64_t id, int16_t *status)
{
	struct frontend_response rsp;
	int ret;

	ret = frontend_push(c->fe);
	if (ret < 0)
		return check_fail(c, ret, "notify failed: %s", strerror(-ret));
	ret = frontend_wait(c->fe, &rsp, CHECK_TIMEOUT_MS);
	if (ret < 0)
		return check_fail(c, ret, "request id %" PRIu64 ": %s", id,
				  ret == -ETIMEDOUT ? "no response in 10 s"
						    : "bad response");
	if (rsp.id != id)
		return check_fail(c, -EPROTO,
				  "expected response %" PRIu64 ", got %" PRIu64,
				  id, rsp.id);
	*status = rsp.status;
	return 0;
}

int check_rw(struct check *c, uint8_t op, uint64_t sector,
	     const struct frontend_segment *segs, unsigned int nr,
	     int16_t *status)
{
	uint64_t id;
	int ret;

	ret = frontend_queue_rw(c->fe, op, sector, segs, nr, &id);
	if (ret < 0)
		return check_fail(c, ret, "cannot queue: %s", strerror(-ret));
	return check_await(c, id, status);
}

static void *seg_data(struct check *c, const struct frontend_segment *s)
{
	return (char *)frontend_data_page(c->fe, s->page) +
	       (size_t)s->first_sect * SECT;
}

void check_fill_segs(struct check *c, uint64_t sector,
		     const struct frontend_segment *s, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		uint32_t n = (uint32_t)s[i].last_sect - s[i].first_sect + 1;

		workload_fill_pattern(c->seed, sector, seg_data(c, &s[i]), n);
		sector += n;
	}
}

void check_poison_segs(struct check *c, const struct frontend_segment *s,
		       unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		memset(frontend_data_page(c->fe, s[i].page), CHECK_POISON,
		       BLKIF_PAGE_SIZE);
}

static unsigned int full_pages(struct frontend_segment *s, unsigned int n,
			       uint32_t first_page)
{
	for (unsigned int i = 0; i < n; i++)
		s[i] = (struct frontend_segment){ first_page + i, 0,
						  SECTS_PER_PAGE - 1 };
	return n;
}

/*
 * 11 whole pages written in one request and read back through other
 * pages, then read again page by page through yet another page.
 */
static int check_full_11(struct check *c)
{
	struct frontend_segment w[MAX_SEGS], r[MAX_SEGS];
	const struct frontend_segment one = { 2 * MAX_SEGS, 0,
					      SECTS_PER_PAGE - 1 };
	uint64_t sector = 8 * 3, mismatched = 0;
	unsigned int okay = 0;
	int ret;

	full_pages(w, MAX_SEGS, 0);
	full_pages(r, MAX_SEGS, MAX_SEGS);
	ret = check_report_round_trip(c, "full", sector, w, MAX_SEGS, r,
				      MAX_SEGS);
	for (unsigned int i = 0; !ret && i < MAX_SEGS; i++) {
		uint64_t at = sector + i * SECTS_PER_PAGE;
		int16_t st;

		check_poison_segs(c, &one, 1);
		ret = check_rw(c, BLKIF_OP_READ, at, &one, 1, &st);
		okay += !ret && st == BLKIF_RSP_OKAY;
		for (unsigned int k = 0; !ret && k < SECTS_PER_PAGE; k++)
			mismatched += workload_check_pattern(
					      c->seed, at + k,
					      (char *)frontend_data_page(
						      c->fe, one.page) +
						      k * SECT,
					      1) >= 0;
	}
	if (!ret)
		check_fact(c, "page-reads",
			   "requests=%u okay=%u sectors=%u mismatched=%" PRIu64,
			   MAX_SEGS, okay, MAX_SEGS * SECTS_PER_PAGE,
			   mismatched);
	return ret;
}

/*
 * 11 segments with every kind of in-page start and end written and read
 * back as whole pages and a tail, through other pages; then the reverse.
 */
static int check_partial(struct check *c)
{
	static const uint8_t first[MAX_SEGS] = {
		1, 0, 7, 3, 0, 2, 5, 0, 6, 4, 1
	};
	static const uint8_t last[MAX_SEGS] = {
		1, 7, 7, 5, 0, 6, 7, 3, 6, 4, 2
	};
	struct frontend_segment w[MAX_SEGS], r[MAX_SEGS];
	uint32_t total = 0;
	unsigned int rn;
	int ret;

	for (unsigned int i = 0; i < MAX_SEGS; i++) {
		w[i] = (struct frontend_segment){ i, first[i], last[i] };
		total += last[i] - first[i] + 1u;
	}
	rn = full_pages(r, total / SECTS_PER_PAGE, MAX_SEGS);
	if (total % SECTS_PER_PAGE) {
		/* A tail that ends at the page's last sector. */
		r[rn] = (struct frontend_segment){
			MAX_SEGS + rn,
			(uint8_t)(SECTS_PER_PAGE - total % SECTS_PER_PAGE),
			SECTS_PER_PAGE - 1
		};
		rn++;
	}
	ret = check_report_round_trip(c, "partial", 101, w, MAX_SEGS, r, rn);
	return ret
		       ?: check_report_round_trip(c, "whole", 307, r, rn, w,
						  MAX_SEGS);
}

/*
 * Requests across and beyond the end of the disk, then its last sector
 * written and read back: facts for vbd-past-end.sh and vbd-attacks.sh.
 */
static int check_past_end(struct check *c)
{
	uint64_t sectors = frontend_disk_info(c->fe)->sectors;
	const struct frontend_segment two = { 0, 0, 1 }, one = { 0, 0, 0 };
	const struct frontend_segment page = { 0, 0, SECTS_PER_PAGE - 1 };
	int ret;

	check_fact(c, "disk", "sectors=%" PRIu64, sectors);
	ret = check_report_rw(c, "read-crossing-end", BLKIF_OP_READ,
			      sectors - 1, &two, 1);
	if (!ret)
		ret = check_report_rw(c, "write-crossing-end", BLKIF_OP_WRITE,
				      sectors - 1, &two, 1);
	if (!ret)
		ret = check_report_rw(c, "write-past-end", BLKIF_OP_WRITE,
				      sectors, &one, 1);
	if (!ret)
		ret = check_report_rw(c, "read-wrapping", BLKIF_OP_READ,
				      UINT64_MAX - 3, &page, 1);
	if (ret < 0)
		return ret;
	check_fill_segs(c, sectors - 1, &one, 1);
	ret = check_report_rw(c, "write-last-sector", BLKIF_OP_WRITE,
			      sectors - 1, &one, 1);
	if (ret < 0)
		return ret;
	check_poison_segs(c, &one, 1);
	ret = check_report_rw(c, "read-last-sector", BLKIF_OP_READ, sectors - 1,
			      &one, 1);
	if (ret < 0)
		return ret;
	check_report_data(c, "last-sector-data", sectors - 1, &one, 1);
	return check_report_probe(c, 0);
}

/* A page written and read back, then an empty flush. */
static int check_flush(struct check *c)
{
	int ret;

	check_fact(c, "disk", "feature-flush-cache=%d",
		   frontend_disk_info(c->fe)->feature_flush_cache);
	ret = check_report_probe(c, 64);
	return ret ?: check_report_flush(c, "flush");
}

/*
 * Write @bytes sequentially from sector 0 with up to 32 requests in
 * flight, and report how many requests it took and how many were OKAY.
 */
static int report_write_span(struct check *c, const char *kase, uint64_t bytes)
{
	const uint32_t per_req = MAX_SEGS * SECTS_PER_PAGE;
	uint64_t total = bytes / SECT, sector = 0;
	uint64_t sectors = frontend_disk_info(c->fe)->sectors;
	struct frontend_response rsp;
	uint32_t slot = 0, okay = 0;

	if (total > sectors)
		total = sectors;
	while (sector < total || frontend_in_flight(c->fe)) {
		if (sector < total && frontend_free_slots(c->fe)) {
			struct frontend_segment s[MAX_SEGS];
			uint32_t n = total - sector < per_req
					     ? (uint32_t)(total - sector)
					     : per_req;
			unsigned int nr = 0;
			int ret;

			for (uint32_t left = n; left; nr++) {
				uint32_t len = left < SECTS_PER_PAGE
						       ? left
						       : SECTS_PER_PAGE;

				s[nr] = (struct frontend_segment){
					(slot % 32) * MAX_SEGS + nr, 0,
					(uint8_t)(len - 1)
				};
				left -= len;
			}
			check_fill_segs(c, sector, s, nr);
			ret = frontend_queue_rw(c->fe, BLKIF_OP_WRITE, sector,
						s, nr, NULL);
			if (ret < 0)
				return check_fail(c, ret, "cannot queue write");
			sector += n;
			slot++;
			continue;
		}
		int ret = frontend_push(c->fe);

		if (ret >= 0)
			ret = frontend_wait(c->fe, &rsp, CHECK_TIMEOUT_MS);
		if (ret < 0)
			return check_fail(c, ret, "write stream: %s",
					  strerror(-ret));
		okay += rsp.status == BLKIF_RSP_OKAY;
	}
	check_fact(c, kase, "sectors=%" PRIu64 " requests=%u okay=%u", total,
		   slot, okay);
	return 0;
}

static int wait_for_go(struct check *c, const char *said)
{
	char line[64];

	fprintf(c->out, "%s\n", said);
	fflush(c->out);
	if (!fgets(line, sizeof(line), c->in))
		return check_fail(c, -EPIPE, "no go-ahead after %s", said);
	return 0;
}

/*
 * For the cache test: write 8 MiB, tell the test, wait, flush, tell the
 * test, wait. The test measures the image's dirty pages in between.
 */
static int check_flush_pause(struct check *c)
{
	int ret = report_write_span(c, "write", 8ull << 20);

	if (!ret)
		ret = wait_for_go(c, "WRITTEN");
	if (!ret)
		ret = check_report_flush(c, "flush");
	return ret ?: wait_for_go(c, "FLUSHED");
}

/*
 * Malformed requests a hostile guest may send, one at a time, each
 * answered on its own (docs/security.md says with what); then the probe.
 * A barrier is sent only when the backend does not offer barriers.
 */
static int check_bad_requests(struct check *c)
{
	struct frontend_request base = { .operation = BLKIF_OP_READ,
					 .nr_segments = 1,
					 .sector_number = 8 };
	struct frontend_request r;
	uint64_t n = 0;
	int ret;

	base.seg[0].gref = frontend_data_gref(c->fe, 0);
	base.seg[0].last_sect = SECTS_PER_PAGE - 1;
	for (unsigned int i = 1; i < MAX_SEGS; i++)
		base.seg[i] = base.seg[0];

#define TRY(kase, mutate)                                 \
	do {                                              \
		r = base;                                 \
		mutate;                                   \
		ret = check_report_raw(c, kase, &r, n++); \
		if (ret < 0)                              \
			return ret;                       \
	} while (0)

	TRY("unknown-op-99", r.operation = 99);
	TRY("12-segments", r.nr_segments = 12);
	TRY("255-segments", r.nr_segments = 255);
	TRY("no-segments", r.nr_segments = 0);
	TRY("last-sect-8", r.seg[0].last_sect = 8);
	TRY("first-after-last",
	    (r.seg[0].first_sect = 5, r.seg[0].last_sect = 2));
	TRY("read-ungranted", r.seg[0].gref = 0x7ffff0);
	TRY("write-ungranted",
	    (r.operation = BLKIF_OP_WRITE, r.seg[0].gref = 0x7ffff1));
	if (!frontend_disk_info(c->fe)->feature_barrier)
		TRY("barrier-not-offered",
		    (r.operation = BLKIF_OP_WRITE_BARRIER));
#undef TRY
	return check_report_probe(c, 16);
}

/* ---- indirect segments ---- */

/* @n full pages from data page @first, as segments. */
static struct frontend_segment *page_run(unsigned int n, uint32_t first)
{
	struct frontend_segment *s = calloc(n, sizeof(*s));

	if (s)
		full_pages(s, n, first);
	return s;
}

/*
 * Read what lies at @sector on, 11 pages at a time, through data pages
 * 0-10, up to @pages pages (a whole number of 11-page reads), and report
 * the reads answered OKAY and the sectors not holding the pattern.
 */
static int report_eleven_page_reads(struct check *c, const char *kase,
				    uint64_t sector, uint32_t pages)
{
	struct frontend_segment s[MAX_SEGS];
	unsigned int requests = 0, okay = 0;
	uint64_t mismatched = 0;

	full_pages(s, MAX_SEGS, 0);
	for (uint32_t i = 0; i + MAX_SEGS <= pages; i += MAX_SEGS) {
		uint64_t at = sector + (uint64_t)i * SECTS_PER_PAGE;
		int16_t st;
		int ret;

		check_poison_segs(c, s, MAX_SEGS);
		ret = check_rw(c, BLKIF_OP_READ, at, s, MAX_SEGS, &st);
		if (ret < 0)
			return ret;
		requests++;
		okay += st == BLKIF_RSP_OKAY;
		for (unsigned int k = 0; k < MAX_SEGS * SECTS_PER_PAGE; k++)
			mismatched +=
				workload_check_pattern(
					c->seed, at + k,
					(char *)frontend_data_page(
						c->fe, k / SECTS_PER_PAGE) +
						(k % SECTS_PER_PAGE) * SECT,
					1) >= 0;
	}
	check_fact(c, kase, "requests=%u okay=%u mismatched=%" PRIu64, requests,
		   okay, mismatched);
	return 0;
}

/*
 * Indirect requests as large as negotiated (at most half the data
 * pages), whole pages and partial segments, read back through other
 * pages and again through ordinary 11-segment reads; and the smallest
 * request that must go indirect (12 segments). Reports how many
 * segments it used first; without indirect segments, only that.
 */
static int check_indirect(struct check *c)
{
	const struct frontend_disk_info *di = frontend_disk_info(c->fe);
	uint32_t n = di->max_segments, half = frontend_nr_data_pages(c->fe) / 2;
	struct frontend_segment *w, *r;
	uint32_t total = 0;
	uint64_t sector = 4096;
	int ret;

	if (n > half)
		n = half;
	check_fact(c, "disk", "max-segments=%u backend-offers=%u used=%u",
		   di->max_segments, di->backend_max_indirect,
		   di->max_segments > MAX_SEGS ? n : 0);
	if (di->max_segments <= MAX_SEGS)
		return 0;
	if ((sector + 2ull * n * SECTS_PER_PAGE + 16) > di->sectors)
		return check_fail(c, -ENOSPC, "disk too small for %u segments",
				  n);
	w = page_run(n, 0);
	r = page_run(n, n);
	ret = w && r ? 0 : check_fail(c, -ENOMEM, "out of memory");
	if (!ret)
		ret = check_report_round_trip(c, "whole", sector, w, n, r, n);
	/*
	 * Partial segments inside an indirect request, into a fresh area,
	 * read back as whole pages.
	 */
	for (unsigned int i = 0; !ret && i < n; i++) {
		w[i].first_sect = (uint8_t)(i % SECTS_PER_PAGE);
		w[i].last_sect =
			(uint8_t)(SECTS_PER_PAGE - 1 -
				  (i * 3) % (SECTS_PER_PAGE - w[i].first_sect));
		total += w[i].last_sect - w[i].first_sect + 1u;
	}
	if (!ret)
		ret = check_report_round_trip(c, "partial",
					      sector + n * SECTS_PER_PAGE + 7,
					      w, n, r, total / SECTS_PER_PAGE);
	/* A 12-segment request: the smallest that must go indirect. */
	if (!ret)
		ret = check_report_round_trip(c, "twelve", 3, r, MAX_SEGS + 1,
					      r + n / 2, MAX_SEGS + 1);
	/* What the big write left, seen through 11-segment reads. */
	if (!ret)
		ret = report_eleven_page_reads(c, "eleven-page-reads",
					       sector + 7, n / 4);
	free(w);
	free(r);
	return ret;
}

/* ---- flush with data, barriers ---- */

/* A FLUSH_DISKCACHE that carries data: written, synced, read back. */
static int check_flush_data(struct check *c)
{
	struct frontend_segment w[4], r[4];
	int ret;

	check_fact(c, "disk", "feature-flush-cache=%d",
		   frontend_disk_info(c->fe)->feature_flush_cache);
	full_pages(w, 4, 0);
	full_pages(r, 4, 4);
	check_fill_segs(c, 200, w, 4);
	ret = check_report_rw(c, "flush-with-data", BLKIF_OP_FLUSH_DISKCACHE,
			      200, w, 4);
	if (ret < 0)
		return ret;
	check_poison_segs(c, r, 4);
	ret = check_report_rw(c, "read", BLKIF_OP_READ, 200, r, 4);
	if (!ret)
		check_report_data(c, "read-data", 200, r, 4);
	return ret;
}

/* Fill @n pages from @first with the pattern of @seed at @sector. */
static void fill_with_seed(struct check *c, uint64_t seed, uint64_t sector,
			   const struct frontend_segment *s, unsigned int n)
{
	uint64_t saved = c->seed;

	c->seed = seed;
	check_fill_segs(c, sector, s, n);
	c->seed = saved;
}

/* Queue one request on queue 0 or fail the check. */
static int queue_or_fail(struct check *c, uint8_t op, uint64_t sector,
			 const struct frontend_segment *s, unsigned int n,
			 uint64_t *id)
{
	int ret = frontend_queue_rw(c->fe, op, sector, s, n, id);

	return ret < 0 ? check_fail(c, ret, "cannot queue: %s", strerror(-ret))
		       : 0;
}

/*
 * Three requests on the ring at once: before, the barrier, after; report
 * which came back in which order (before, barrier, after, or another)
 * and their statuses in that order, as round-@i.
 */
static int barrier_round(struct check *c, unsigned int i, uint64_t sector,
			 unsigned int n, uint8_t after_op, uint64_t before_seed,
			 uint64_t barrier_seed)
{
	static const char *const names[] = { "before", "barrier", "after" };
	struct frontend_segment b[4], m[4], a[4];
	char kase[16], order[40] = "", status[40] = "", buf[8];
	uint64_t ids[3];
	int ret;

	full_pages(b, n, 0);
	full_pages(m, n, 4);
	full_pages(a, n, 8);
	fill_with_seed(c, before_seed, sector, b, n);
	fill_with_seed(c, barrier_seed, sector, m, n);
	if (after_op == BLKIF_OP_WRITE)
		check_fill_segs(c, sector, a, n);
	else
		check_poison_segs(c, a, n);
	ret = queue_or_fail(c, BLKIF_OP_WRITE, sector, b, n, &ids[0]);
	if (!ret)
		ret = queue_or_fail(c, BLKIF_OP_WRITE_BARRIER, sector, m, n,
				    &ids[1]);
	if (!ret)
		ret = queue_or_fail(c, after_op, sector, a, n, &ids[2]);
	if (!ret)
		ret = frontend_push(c->fe);
	for (unsigned int got = 0; !ret && got < 3; got++) {
		struct frontend_response rsp;
		const char *which = "other";

		ret = frontend_wait(c->fe, &rsp, CHECK_TIMEOUT_MS);
		if (ret < 0)
			return check_fail(c, ret, "barrier round %u: %s", i,
					  strerror(-ret));
		ret = 0;
		for (unsigned int k = 0; k < 3; k++)
			if (rsp.id == ids[k])
				which = names[k];
		snprintf(order + strlen(order), sizeof(order) - strlen(order),
			 "%s%s", got ? "," : "", which);
		snprintf(status + strlen(status),
			 sizeof(status) - strlen(status), "%s%s",
			 got ? "," : "", check_status_name(rsp.status, buf));
	}
	if (ret < 0)
		return ret;
	snprintf(kase, sizeof(kase), "round-%u", i);
	check_fact(c, kase, "order=%s status=%s", order, status);
	return 0;
}

/*
 * 24 rounds of write, barrier, write (or read) to the same sectors; then
 * what is on the disk: the data the read after the barrier saw, or a
 * read of the last write's. Both must be the check's seed's pattern.
 */
static int check_barrier(struct check *c)
{
	struct frontend_segment r[4];
	int ret = 0;

	check_fact(c, "disk", "feature-barrier=%d",
		   frontend_disk_info(c->fe)->feature_barrier);
	for (unsigned int i = 0; !ret && i < 24; i++) {
		uint64_t sector = 512 + i * 64;
		unsigned int n = 1 + i % 4;
		bool read_after = i % 3 == 2;
		char kase[24];

		ret = barrier_round(c, i, sector, n,
				    read_after ? BLKIF_OP_READ : BLKIF_OP_WRITE,
				    c->seed + 1 + i,
				    read_after ? c->seed : c->seed + 100 + i);
		if (ret < 0)
			return ret;
		if (read_after) {
			full_pages(r, n, 8);
		} else {
			full_pages(r, n, 12);
			check_poison_segs(c, r, n);
			snprintf(kase, sizeof(kase), "round-%u-read", i);
			ret = check_report_rw(c, kase, BLKIF_OP_READ, sector, r,
					      n);
		}
		snprintf(kase, sizeof(kase), "round-%u-data", i);
		if (!ret)
			check_report_data(c, kase, sector, r, n);
	}
	return ret;
}

/* ---- discard ---- */

/* Queue a DISCARD of @n sectors at @sector and report its status. */
static int report_discard(struct check *c, const char *kase, uint64_t sector,
			  uint64_t n, uint8_t flags)
{
	uint64_t id;
	int ret = frontend_queue_discard(c->fe, 0, sector, n, flags, &id);

	if (ret < 0)
		return check_fail(c, ret, "%s: cannot queue a discard", kase);
	return check_report_await(c, kase, id);
}

/* Page-sized pieces of [@sector, @sector + @n), 11 pages at a time. */
static unsigned int range_pages(uint64_t n, uint64_t done)
{
	const uint64_t per = MAX_SEGS * SECTS_PER_PAGE;

	return (unsigned int)((n - done < per ? n - done : per) /
			      SECTS_PER_PAGE);
}

/*
 * Write [@sector, @sector + @n) with the pattern, 11 pages at a time, and
 * report how many requests it took and how many were answered OKAY.
 */
static int report_write_range(struct check *c, const char *kase,
			      uint64_t sector, uint64_t n)
{
	struct frontend_segment s[MAX_SEGS];
	unsigned int requests = 0, okay = 0;

	full_pages(s, MAX_SEGS, 0);
	for (uint64_t done = 0; done < n; done += MAX_SEGS * SECTS_PER_PAGE) {
		unsigned int pages = range_pages(n, done);
		int16_t st;
		int ret;

		check_fill_segs(c, sector + done, s, pages);
		ret = check_rw(c, BLKIF_OP_WRITE, sector + done, s, pages, &st);
		if (ret < 0)
			return ret;
		requests++;
		okay += st == BLKIF_RSP_OKAY;
	}
	check_fact(c, kase, "sectors=%" PRIu64 " requests=%u okay=%u", n,
		   requests, okay);
	return 0;
}

/*
 * Read [@sector, @sector + @n) back, 11 pages at a time, and report the
 * reads answered OKAY and the sectors that do not hold the pattern
 * (@zeros: that are not all zero).
 */
static int report_read_range(struct check *c, const char *kase, uint64_t sector,
			     uint64_t n, bool zeros)
{
	struct frontend_segment s[MAX_SEGS];
	unsigned int requests = 0, okay = 0;
	uint64_t mismatched = 0;

	full_pages(s, MAX_SEGS, MAX_SEGS);
	for (uint64_t done = 0; done < n; done += MAX_SEGS * SECTS_PER_PAGE) {
		unsigned int pages = range_pages(n, done);
		int16_t st;
		int ret;

		check_poison_segs(c, s, pages);
		ret = check_rw(c, BLKIF_OP_READ, sector + done, s, pages, &st);
		if (ret < 0)
			return ret;
		requests++;
		okay += st == BLKIF_RSP_OKAY;
		for (unsigned int k = 0; k < pages * SECTS_PER_PAGE; k++) {
			const unsigned char *p =
				(const unsigned char *)frontend_data_page(
					c->fe, s[k / SECTS_PER_PAGE].page) +
				(k % SECTS_PER_PAGE) * SECT;

			if (zeros)
				mismatched += p[0] != 0 ||
					      memcmp(p, p + 1, SECT - 1) != 0;
			else
				mismatched += workload_check_pattern(
						      c->seed,
						      sector + done + k, p,
						      1) >= 0;
		}
	}
	check_fact(c, kase,
		   "sectors=%" PRIu64 " requests=%u okay=%u %s=%" PRIu64, n,
		   requests, okay, zeros ? "nonzero" : "mismatched",
		   mismatched);
	return 0;
}

/*
 * Write a 4 MiB range plus a guard granule on each side, tell the host
 * (WRITTEN), discard the range in four requests (two with the secure
 * flag, which a backend without discard-secure ignores), tell the host
 * (DISCARDED: it checks the image's allocated blocks dropped), then read
 * the range and the guards back. Each step is reported.
 */
static int check_discard(struct check *c)
{
	const struct frontend_disk_info *di = frontend_disk_info(c->fe);
	uint64_t g, start, len = 8192, guard;
	int ret;

	if (!di->feature_discard)
		return check_fail(c, -EOPNOTSUPP,
				  "backend does not offer discard");
	g = di->discard_granularity / SECT;
	if (!g)
		g = 1;
	guard = g > SECTS_PER_PAGE ? g : SECTS_PER_PAGE;
	start = (2048 + g - 1) / g * g;
	len = (len + g - 1) / g * g;
	if (start + len + guard > di->sectors)
		return check_fail(c, -ENOSPC,
				  "disk too small for the discard check");
	ret = report_write_range(c, "write", start - guard, len + 2 * guard);
	if (!ret)
		ret = check_report_flush(c, "flush-written");
	if (!ret)
		ret = wait_for_go(c, "WRITTEN");
	for (unsigned int i = 0; !ret && i < 4; i++) {
		char kase[32];

		snprintf(kase, sizeof(kase), "discard-%u%s", i,
			 i % 2 ? "-secure" : "");
		ret = report_discard(c, kase, start + i * len / 4, len / 4,
				     i % 2 ? BLKIF_DISCARD_SECURE : 0);
	}
	if (!ret)
		ret = check_report_flush(c, "flush-discarded");
	if (!ret)
		ret = wait_for_go(c, "DISCARDED");
	if (!ret)
		ret = report_read_range(c, "discarded", start, len, true);
	if (!ret)
		ret = report_read_range(c, "guard-before", start - guard, guard,
					false);
	if (!ret)
		ret = report_read_range(c, "guard-after", start + len, guard,
					false);
	return ret ?: check_report_probe(c, 0);
}

/* A DISCARD sent to a disk that does not offer feature-discard. */
static int check_discard_unsupported(struct check *c)
{
	int ret;

	check_fact(c, "disk", "feature-discard=%d",
		   frontend_disk_info(c->fe)->feature_discard);
	ret = report_discard(c, "discard", 64, 64, 0);
	return ret ?: check_report_probe(c, 64);
}

/* ---- read-only disks ---- */

/*
 * A read-only disk: its info, a write, a flush with data and (when
 * offered) a barrier, then a read of what the disk holds (the pattern of
 * the check's seed, --preexisting).
 */
static int check_readonly(struct check *c)
{
	const struct frontend_segment s = { 0, 0, SECTS_PER_PAGE - 1 };
	int ret;

	check_fact(c, "disk", "info=%u", frontend_disk_info(c->fe)->info);
	ret = check_report_rw(c, "write", BLKIF_OP_WRITE, 8, &s, 1);
	if (!ret)
		ret = check_report_rw(c, "flush-with-data",
				      BLKIF_OP_FLUSH_DISKCACHE, 8, &s, 1);
	if (!ret && frontend_disk_info(c->fe)->feature_barrier)
		ret = check_report_rw(c, "barrier-write",
				      BLKIF_OP_WRITE_BARRIER, 8, &s, 1);
	if (ret < 0)
		return ret;
	check_poison_segs(c, &s, 1);
	ret = check_report_rw(c, "read", BLKIF_OP_READ, 8, &s, 1);
	if (!ret)
		check_report_data(c, "read-data", 8, &s, 1);
	return ret;
}

/* ---- the null image ---- */

/*
 * A disk that stores nothing (null:SIZE): a write of a pattern, a flush
 * and a two-page read back, with how many bytes of it are not zero.
 */
static int check_null(struct check *c)
{
	const struct frontend_segment segs[2] = {
		{ 0, 0, SECTS_PER_PAGE - 1 },
		{ 1, 0, SECTS_PER_PAGE - 1 },
	};
	unsigned int nonzero = 0;
	int ret;

	check_fill_segs(c, 16, segs, 2);
	ret = check_report_rw(c, "write", BLKIF_OP_WRITE, 16, segs, 2);
	if (!ret)
		ret = check_report_flush(c, "flush");
	if (ret < 0)
		return ret;
	check_poison_segs(c, segs, 2);
	ret = check_report_rw(c, "read", BLKIF_OP_READ, 16, segs, 2);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < 2; i++) {
		const unsigned char *page = frontend_data_page(c->fe, i);

		for (unsigned int b = 0; b < BLKIF_PAGE_SIZE; b++)
			nonzero += page[b] != 0;
	}
	check_fact(c, "read-data", "bytes=%u nonzero=%u", 2 * BLKIF_PAGE_SIZE,
		   nonzero);
	return 0;
}

/* ---- online resize ---- */

/*
 * Requests past the end; the host grows the image and signals the daemon
 * between RESIZE-READY and our go-ahead; we wait for `sectors` to change
 * (the backend's state watch fires) and report the new size, then the
 * new tail written and read back and a read past the new end.
 */
static int check_resize(struct check *c)
{
	const struct frontend_segment one = { 0, 0, 0 };
	const struct frontend_segment page = { 0, 0, SECTS_PER_PAGE - 1 };
	uint64_t old = frontend_disk_info(c->fe)->sectors, now;
	int ret;

	check_fact(c, "disk", "sectors=%" PRIu64, old);
	ret = check_report_rw(c, "read-past-old-end", BLKIF_OP_READ, old, &page,
			      1);
	if (!ret)
		ret = check_report_rw(c, "write-past-old-end", BLKIF_OP_WRITE,
				      old, &one, 1);
	if (!ret)
		ret = wait_for_go(c, "RESIZE-READY");
	if (ret < 0)
		return ret;
	ret = frontend_wait_resize(c->fe, CHECK_TIMEOUT_MS);
	now = frontend_disk_info(c->fe)->sectors;
	check_fact(c, "resized", "old=%" PRIu64 " now=%" PRIu64 " result=%d",
		   old, now, ret);
	if (ret < 0 || now <= old)
		return 0; /* the test sees it; the tail below is not there */
	ret = check_report_round_trip(c, "old-end", old, &page, 1, &page, 1);
	if (!ret)
		ret = check_report_round_trip(c, "new-last", now - 1, &one, 1,
					      &one, 1);
	if (!ret)
		ret = check_report_rw(c, "read-past-new-end", BLKIF_OP_READ,
				      now, &one, 1);
	return ret;
}

/* ---- hostile indirect and discard requests ---- */

static int raw_indirect_report(struct check *c, const char *kase,
			       struct frontend_indirect_request *req,
			       const struct blkif_request_segment *e,
			       unsigned int ne, uint64_t n)
{
	grant_ref_t pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	int ret;

	ret = frontend_raw_indirect_pages(c->fe, 0, e, ne, pages);
	if (ret < 0)
		return check_fail(c, ret, "cannot build indirect pages for %s",
				  kase);
	for (unsigned int i = 0; i < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; i++)
		if (req->indirect_grefs[i] == 1)
			req->indirect_grefs[i] = pages[i];
	req->id = RAW_ID_BASE + n;
	ret = frontend_queue_raw_indirect(c->fe, 0, req);
	if (ret < 0)
		return check_fail(c, ret, "cannot queue %s", kase);
	return check_report_await(c, kase, req->id);
}

/* Only when the backend offers discard: else all are EOPNOTSUPP. */
static int hostile_discards(struct check *c)
{
	uint64_t sectors = frontend_disk_info(c->fe)->sectors;
	const struct {
		const char *kase;
		uint64_t sector, n;
	} bad[] = {
		{ "discard-past-end", sectors, 8 },
		{ "discard-crossing-end", sectors - 8, 16 },
		{ "discard-0-sectors", 8, 0 },
		{ "discard-wrapping", UINT64_MAX - 3, 8 },
	};

	if (!frontend_disk_info(c->fe)->feature_discard)
		return 0;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t id;
		int ret = frontend_queue_discard(c->fe, 0, bad[i].sector,
						 bad[i].n, 0, &id);

		if (ret < 0)
			return check_fail(c, ret, "cannot queue %s",
					  bad[i].kase);
		ret = check_report_await(c, bad[i].kase, id);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Indirect requests a hostile guest may send; each must fail alone and
 * the ring keep serving. An indirect page entry of 1 below stands for
 * "the library's valid indirect page".
 */
static int check_bad_indirect(struct check *c)
{
	const struct frontend_disk_info *di = frontend_disk_info(c->fe);
	uint32_t max = di->backend_max_indirect;
	unsigned int ne = max + 1 < 4096 ? max + 1 : 4096;
	struct blkif_request_segment *e = calloc(4096, sizeof(*e));
	struct frontend_indirect_request base = {
		.indirect_op = BLKIF_OP_READ,
		.nr_segments = 16,
		.sector_number = 8,
		.indirect_grefs = { 1, 1, 1, 1, 1, 1, 1, 1 },
	};
	struct frontend_indirect_request r;
	uint64_t n = 100;
	int ret = 0;

	if (!e)
		return check_fail(c, -ENOMEM, "out of memory");
	if (!max) {
		free(e);
		return check_fail(c, -EOPNOTSUPP, "backend offers no indirect");
	}
	for (unsigned int i = 0; i < 4096; i++)
		e[i] = (struct blkif_request_segment){
			.gref = frontend_data_gref(c->fe, i % 16),
			.last_sect = SECTS_PER_PAGE - 1
		};

#define TRY(kase, mutate)                                                   \
	do {                                                                \
		r = base;                                                   \
		mutate;                                                     \
		if (!ret)                                                   \
			ret = raw_indirect_report(c, kase, &r, e, ne, n++); \
	} while (0)

	if (max < 4096)
		TRY("more-than-offered", r.nr_segments = (uint16_t)ne);
	TRY("4097-segments", r.nr_segments = 4097);
	TRY("65535-segments", r.nr_segments = 65535);
	TRY("no-segments", r.nr_segments = 0);
	TRY("page-not-granted",
	    (r.indirect_grefs[0] = 0x7ffff0, r.indirect_op = BLKIF_OP_WRITE));
	TRY("page-gref-0", r.indirect_grefs[0] = 0);
	TRY("inner-flush", r.indirect_op = BLKIF_OP_FLUSH_DISKCACHE);
	TRY("inner-discard", r.indirect_op = BLKIF_OP_DISCARD);
	TRY("inner-indirect", r.indirect_op = BLKIF_OP_INDIRECT);
	TRY("past-end", r.sector_number = di->sectors - SECTS_PER_PAGE);
	if (!ret) {
		/* Bad entries inside a valid indirect page. */
		e[3].gref = 0x7ffff2;
		TRY("segment-ungranted", (void)0);
		e[3].gref = frontend_data_gref(c->fe, 3);
		e[5].last_sect = SECTS_PER_PAGE;
		TRY("segment-last-sect-8", (void)0);
		e[5] = (struct blkif_request_segment){
			.gref = frontend_data_gref(c->fe, 5),
			.first_sect = 6,
			.last_sect = 2
		};
		TRY("segment-first-after-last", (void)0);
	}
#undef TRY
	free(e);
	if (!ret)
		ret = hostile_discards(c);
	return ret ?: check_report_probe(c, 16);
}

static const struct {
	const char *name;
	int (*fn)(struct check *c);
} checks[] = {
	{ "past-end", check_past_end },
	{ "partial-segments", check_partial },
	{ "full-11-segments", check_full_11 },
	{ "flush", check_flush },
	{ "flush-pause", check_flush_pause },
	{ "bad-requests", check_bad_requests },
	{ "indirect", check_indirect },
	{ "flush-data", check_flush_data },
	{ "barrier", check_barrier },
	{ "discard", check_discard },
	{ "discard-unsupported", check_discard_unsupported },
	{ "readonly", check_readonly },
	{ "resize", check_resize },
	{ "bad-indirect", check_bad_indirect },
	{ "null", check_null },
};

const char *workload_check_names(void)
{
	return "past-end partial-segments full-11-segments flush flush-pause "
	       "bad-requests indirect flush-data barrier discard "
	       "discard-unsupported readonly resize bad-indirect null "
	       "numbered-writes numbered-read";
}

int workload_check(struct frontend *fe, const char *name, uint64_t seed,
		   FILE *in, FILE *out, char *why, size_t why_len)
{
	struct check c = { name, fe, seed, in, out, why, why_len };

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		if (!strcmp(checks[i].name, name))
			return checks[i].fn(&c);
	}
	if (check_attack_find(name))
		return check_attack_find(name)(&c);
	if (check_numbered_find(name))
		return check_numbered_find(name)(&c);
	snprintf(why, why_len, "unknown check %s (known: %s %s)", name,
		 workload_check_names(), workload_attack_names());
	return -EINVAL;
}

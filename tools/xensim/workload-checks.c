// SPDX-License-Identifier: MIT
/*
 * Targeted checks for the integration tests: each drives a few requests
 * whose correct outcome is known exactly (data, or an error status) and
 * then proves the ring still serves ordinary I/O.
 */
#include "tools/xensim/workload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SECT WORKLOAD_SECTOR
#define SECTS_PER_PAGE BLKIF_SECTORS_PER_PAGE
#define MAX_SEGS BLKIF_MAX_SEGMENTS_PER_REQUEST
#define CHECK_TIMEOUT_MS 10000
/* Ids of raw requests, far from the library's own counter. */
#define RAW_ID_BASE 0x5eed000000000000ull

struct check {
	struct frontend *fe;
	uint64_t seed;
	FILE *in, *out;
	char *why;
	size_t why_len;
};

static int fail(struct check *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct check *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->why_len, fmt, ap);
	va_end(ap);
	return err;
}

/* Push what is queued and wait for exactly one response. */
static int await_status(struct check *c, uint64_t id, int16_t *status)
{
	struct frontend_response rsp;
	int ret;

	ret = frontend_push(c->fe);
	if (ret < 0)
		return fail(c, ret, "notify failed: %s", strerror(-ret));
	ret = frontend_wait(c->fe, &rsp, CHECK_TIMEOUT_MS);
	if (ret < 0)
		return fail(c, ret, "request id %" PRIu64 ": %s", id,
			    ret == -ETIMEDOUT ? "no response in 10 s"
					      : "bad response");
	if (rsp.id != id)
		return fail(c, -EPROTO,
			    "expected response %" PRIu64 ", got %" PRIu64, id,
			    rsp.id);
	*status = rsp.status;
	return 0;
}

static int rw(struct check *c, uint8_t op, uint64_t sector,
	      const struct frontend_segment *segs, unsigned int nr,
	      int16_t *status)
{
	uint64_t id;
	int ret;

	ret = frontend_queue_rw(c->fe, op, sector, segs, nr, &id);
	if (ret < 0)
		return fail(c, ret, "cannot queue: %s", strerror(-ret));
	return await_status(c, id, status);
}

static int rw_ok(struct check *c, uint8_t op, uint64_t sector,
		 const struct frontend_segment *segs, unsigned int nr)
{
	int16_t st;
	int ret = rw(c, op, sector, segs, nr, &st);

	if (ret < 0)
		return ret;
	if (st != BLKIF_RSP_OKAY)
		return fail(c, -EIO,
			    "%s at sector %" PRIu64 " (%u segments) failed "
			    "with status %d",
			    op == BLKIF_OP_READ ? "READ" : "WRITE", sector, nr,
			    st);
	return 0;
}

static void *seg_data(struct check *c, const struct frontend_segment *s)
{
	return (char *)frontend_data_page(c->fe, s->page) +
	       (size_t)s->first_sect * SECT;
}

static void fill_segs(struct check *c, uint64_t sector,
		      const struct frontend_segment *s, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		uint32_t n = (uint32_t)s[i].last_sect - s[i].first_sect + 1;

		workload_fill_pattern(c->seed, sector, seg_data(c, &s[i]), n);
		sector += n;
	}
}

static void poison_segs(struct check *c, const struct frontend_segment *s,
			unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		memset(frontend_data_page(c->fe, s[i].page), 0x5a,
		       BLKIF_PAGE_SIZE);
}

/*
 * Check the pattern in each segment and that the sectors of the page
 * outside [first_sect, last_sect] still hold the poison.
 */
static int verify_segs(struct check *c, uint64_t sector,
		       const struct frontend_segment *s, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		const unsigned char *page =
			frontend_data_page(c->fe, s[i].page);
		uint32_t n = (uint32_t)s[i].last_sect - s[i].first_sect + 1;
		long bad = workload_check_pattern(c->seed, sector,
						  seg_data(c, &s[i]), n);

		if (bad >= 0)
			return fail(c, -EIO,
				    "data mismatch at sector %" PRIu64
				    " byte %ld (segment %u, sectors %u-%u)",
				    sector + (uint64_t)bad / SECT, bad % SECT,
				    i, s[i].first_sect, s[i].last_sect);
		for (uint32_t b = 0; b < BLKIF_PAGE_SIZE; b++) {
			uint32_t sec = b / SECT;

			if (sec >= s[i].first_sect && sec <= s[i].last_sect)
				continue;
			if (page[b] != 0x5a)
				return fail(c, -EIO,
					    "segment %u (sectors %u-%u): "
					    "backend wrote page byte %u "
					    "outside the segment",
					    i, s[i].first_sect, s[i].last_sect,
					    b);
		}
		sector += n;
	}
	return 0;
}

static int write_then_verify(struct check *c, uint64_t sector,
			     const struct frontend_segment *w, unsigned int wn,
			     const struct frontend_segment *r, unsigned int rn)
{
	int ret;

	fill_segs(c, sector, w, wn);
	ret = rw_ok(c, BLKIF_OP_WRITE, sector, w, wn);
	if (ret < 0)
		return ret;
	poison_segs(c, r, rn);
	ret = rw_ok(c, BLKIF_OP_READ, sector, r, rn);
	if (ret < 0)
		return ret;
	return verify_segs(c, sector, r, rn);
}

/* One full page at data page 0: the "ring still works" probe. */
static int still_serving(struct check *c, uint64_t sector)
{
	const struct frontend_segment s = { 0, 0, SECTS_PER_PAGE - 1 };

	return write_then_verify(c, sector, &s, 1, &s, 1);
}

static unsigned int full_pages(struct frontend_segment *s, unsigned int n,
			       uint32_t first_page)
{
	for (unsigned int i = 0; i < n; i++)
		s[i] = (struct frontend_segment){ first_page + i, 0,
						  SECTS_PER_PAGE - 1 };
	return n;
}

static int check_full_11(struct check *c)
{
	struct frontend_segment w[MAX_SEGS], r[MAX_SEGS];
	uint64_t sector = 8 * 3;
	int ret;

	full_pages(w, MAX_SEGS, 0);
	full_pages(r, MAX_SEGS, MAX_SEGS);
	ret = write_then_verify(c, sector, w, MAX_SEGS, r, MAX_SEGS);
	if (ret < 0)
		return ret;
	/* The same data, page by page, through other pages. */
	for (unsigned int i = 0; i < MAX_SEGS; i++) {
		struct frontend_segment one = { 2 * MAX_SEGS, 0,
						SECTS_PER_PAGE - 1 };

		poison_segs(c, &one, 1);
		ret = rw_ok(c, BLKIF_OP_READ, sector + i * SECTS_PER_PAGE, &one,
			    1);
		if (ret < 0)
			return ret;
		ret = verify_segs(c, sector + i * SECTS_PER_PAGE, &one, 1);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int check_partial(struct check *c)
{
	/* 11 segments with every kind of in-page start and end. */
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
	/* Read back as whole pages then a tail, through other pages. */
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
	ret = write_then_verify(c, 101, w, MAX_SEGS, r, rn);
	if (ret < 0)
		return ret;
	/* And the reverse: whole-page writes, partial-segment reads. */
	return write_then_verify(c, 307, r, rn, w, MAX_SEGS);
}

static int expect_error(struct check *c, const char *what, uint8_t op,
			uint64_t sector, const struct frontend_segment *s,
			unsigned int nr)
{
	int16_t st;
	int ret = rw(c, op, sector, s, nr, &st);

	if (ret < 0)
		return ret;
	if (st == BLKIF_RSP_OKAY)
		return fail(c, -EIO,
			    "%s: backend answered OKAY, wanted an error", what);
	return 0;
}

static int check_past_end(struct check *c)
{
	uint64_t sectors = frontend_disk_info(c->fe)->sectors;
	const struct frontend_segment two = { 0, 0, 1 }, one = { 0, 0, 0 };
	const struct frontend_segment page = { 0, 0, SECTS_PER_PAGE - 1 };
	int ret;

	ret = expect_error(c, "READ crossing the end", BLKIF_OP_READ,
			   sectors - 1, &two, 1);
	if (!ret)
		ret = expect_error(c, "WRITE crossing the end", BLKIF_OP_WRITE,
				   sectors - 1, &two, 1);
	if (!ret)
		ret = expect_error(c, "WRITE just past the end", BLKIF_OP_WRITE,
				   sectors, &one, 1);
	if (!ret)
		ret = expect_error(c, "READ at a wrapping sector",
				   BLKIF_OP_READ, UINT64_MAX - 3, &page, 1);
	if (ret < 0)
		return ret;
	/* The last sector itself is fine, and the ring keeps serving. */
	ret = write_then_verify(c, sectors - 1, &one, 1, &one, 1);
	if (ret < 0)
		return ret;
	return still_serving(c, 0);
}

static int check_flush(struct check *c)
{
	uint64_t id;
	int16_t st;
	int ret;

	if (!frontend_disk_info(c->fe)->feature_flush_cache)
		return fail(c, -EOPNOTSUPP,
			    "backend does not offer feature-flush-cache");
	ret = still_serving(c, 64);
	if (ret < 0)
		return ret;
	ret = frontend_queue_flush(c->fe, &id);
	if (ret < 0)
		return fail(c, ret, "cannot queue flush");
	ret = await_status(c, id, &st);
	if (ret < 0)
		return ret;
	if (st != BLKIF_RSP_OKAY)
		return fail(c, -EIO, "FLUSH failed with status %d", st);
	return 0;
}

/* Write @bytes sequentially from sector 0 with up to 32 requests in flight. */
static int write_span(struct check *c, uint64_t bytes)
{
	const uint32_t per_req = MAX_SEGS * SECTS_PER_PAGE;
	uint64_t total = bytes / SECT, sector = 0;
	uint64_t sectors = frontend_disk_info(c->fe)->sectors;
	struct frontend_response rsp;
	uint32_t slot = 0;

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
			fill_segs(c, sector, s, nr);
			ret = frontend_queue_rw(c->fe, BLKIF_OP_WRITE, sector,
						s, nr, NULL);
			if (ret < 0)
				return fail(c, ret, "cannot queue write");
			sector += n;
			slot++;
			continue;
		}
		int ret = frontend_push(c->fe);

		if (ret >= 0)
			ret = frontend_wait(c->fe, &rsp, CHECK_TIMEOUT_MS);
		if (ret < 0)
			return fail(c, ret, "write stream: %s", strerror(-ret));
		if (rsp.status != BLKIF_RSP_OKAY)
			return fail(c, -EIO, "WRITE id %" PRIu64 " failed: %d",
				    rsp.id, rsp.status);
	}
	return 0;
}

static int wait_for_go(struct check *c, const char *said)
{
	char line[64];

	fprintf(c->out, "%s\n", said);
	fflush(c->out);
	if (!fgets(line, sizeof(line), c->in))
		return fail(c, -EPIPE, "no go-ahead after %s", said);
	return 0;
}

/*
 * For the cache test: write 8 MiB, tell the test, wait, flush, tell the
 * test, wait. The test measures the image's dirty pages in between.
 */
static int check_flush_pause(struct check *c)
{
	uint64_t id;
	int16_t st;
	int ret;

	ret = write_span(c, 8ull << 20);
	if (ret < 0)
		return ret;
	ret = wait_for_go(c, "WRITTEN");
	if (ret < 0)
		return ret;
	ret = frontend_queue_flush(c->fe, &id);
	if (ret < 0)
		return fail(c, ret, "cannot queue flush");
	ret = await_status(c, id, &st);
	if (ret < 0)
		return ret;
	if (st != BLKIF_RSP_OKAY)
		return fail(c, -EIO, "FLUSH failed with status %d", st);
	return wait_for_go(c, "FLUSHED");
}

static int raw_expect_error(struct check *c, const char *what,
			    struct frontend_request *req, uint64_t n)
{
	int16_t st;
	int ret;

	req->id = RAW_ID_BASE + n;
	ret = frontend_queue_raw(c->fe, req);
	if (ret < 0)
		return fail(c, ret, "cannot queue %s", what);
	ret = await_status(c, req->id, &st);
	if (ret < 0)
		return ret;
	if (st == BLKIF_RSP_OKAY)
		return fail(c, -EIO,
			    "%s: backend answered OKAY, wanted an error", what);
	return 0;
}

/* Malformed requests a hostile guest may send; each must fail alone. */
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

#define TRY(what, mutate)                                 \
	do {                                              \
		r = base;                                 \
		mutate;                                   \
		ret = raw_expect_error(c, what, &r, n++); \
		if (ret < 0)                              \
			return ret;                       \
	} while (0)

	TRY("unknown operation 99", r.operation = 99);
	TRY("12 segments", r.nr_segments = 12);
	TRY("255 segments", r.nr_segments = 255);
	TRY("no segments", r.nr_segments = 0);
	TRY("last_sect 8", r.seg[0].last_sect = 8);
	TRY("first_sect > last_sect",
	    (r.seg[0].first_sect = 5, r.seg[0].last_sect = 2));
	TRY("ungranted grant ref", r.seg[0].gref = 0x7ffff0);
	TRY("write to ungranted ref",
	    (r.operation = BLKIF_OP_WRITE, r.seg[0].gref = 0x7ffff1));
	if (!frontend_disk_info(c->fe)->feature_barrier)
		TRY("barrier without feature-barrier",
		    (r.operation = BLKIF_OP_WRITE_BARRIER));
#undef TRY
	return still_serving(c, 16);
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
};

const char *workload_check_names(void)
{
	return "past-end partial-segments full-11-segments flush flush-pause "
	       "bad-requests";
}

int workload_check(struct frontend *fe, const char *name, uint64_t seed,
		   FILE *in, FILE *out, char *why, size_t why_len)
{
	struct check c = { fe, seed, in, out, why, why_len };

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		if (!strcmp(checks[i].name, name))
			return checks[i].fn(&c);
	}
	snprintf(why, why_len, "unknown check %s (known: %s)", name,
		 workload_check_names());
	return -EINVAL;
}

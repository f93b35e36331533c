// SPDX-License-Identifier: MIT
/*
 * Facts for the tests (workload-check.h): what a check sent and what came
 * back, one parseable line each, with no verdict. The test states what
 * it expects and compares (tests/lib.sh: expect_facts).
 */
#include "tools/xensim/workload-check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#define SECT WORKLOAD_SECTOR
#define SECTS_PER_PAGE BLKIF_SECTORS_PER_PAGE

void check_fact(struct check *c, const char *kase, const char *fmt, ...)
{
	va_list ap;

	fprintf(c->out, "fact check=%s case=%s ", c->name, kase);
	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	fputc('\n', c->out);
	fflush(c->out);
}

const char *check_status_name(int16_t status, char buf[8])
{
	switch (status) {
	case BLKIF_RSP_OKAY:
		return "OKAY";
	case BLKIF_RSP_ERROR:
		return "ERROR";
	case BLKIF_RSP_EOPNOTSUPP:
		return "EOPNOTSUPP";
	default:
		snprintf(buf, 8, "%d", status);
		return buf;
	}
}

int check_report_await(struct check *c, const char *kase, uint64_t id)
{
	char buf[8];
	int16_t st;
	int ret = check_await(c, id, &st);

	if (ret < 0)
		return ret;
	check_fact(c, kase, "status=%s", check_status_name(st, buf));
	return 0;
}

int check_report_rw(struct check *c, const char *kase, uint8_t op,
		    uint64_t sector, const struct frontend_segment *segs,
		    unsigned int nr)
{
	uint64_t id;
	int ret = frontend_queue_rw(c->fe, op, sector, segs, nr, &id);

	if (ret < 0)
		return check_fail(c, ret, "%s: cannot queue: %s", kase,
				  strerror(-ret));
	return check_report_await(c, kase, id);
}

int check_report_raw(struct check *c, const char *kase,
		     struct frontend_request *req, uint64_t n)
{
	int ret;

	req->id = RAW_ID_BASE + n;
	ret = frontend_queue_raw(c->fe, req);
	if (ret < 0)
		return check_fail(c, ret, "%s: cannot queue: %s", kase,
				  strerror(-ret));
	return check_report_await(c, kase, req->id);
}

/* Does the page hold anything but the poison outside sectors first-last? */
static bool changed_outside(const unsigned char *page, unsigned int first,
			    unsigned int last)
{
	for (uint32_t b = 0; b < BLKIF_PAGE_SIZE; b++) {
		uint32_t sec = b / SECT;

		if ((sec < first || sec > last) && page[b] != CHECK_POISON)
			return true;
	}
	return false;
}

void check_report_data(struct check *c, const char *kase, uint64_t sector,
		       const struct frontend_segment *s, unsigned int nr)
{
	uint64_t at = sector, sectors = 0, mismatched = 0, outside = 0;

	for (unsigned int i = 0; i < nr; i++) {
		const unsigned char *page =
			frontend_data_page(c->fe, s[i].page);

		for (unsigned int k = s[i].first_sect; k <= s[i].last_sect;
		     k++) {
			mismatched += workload_check_pattern(c->seed, at,
							     page + k * SECT,
							     1) >= 0;
			sectors++;
			at++;
		}
		outside +=
			changed_outside(page, s[i].first_sect, s[i].last_sect);
	}
	check_fact(c, kase,
		   "sector=%" PRIu64 " sectors=%" PRIu64 " mismatched=%" PRIu64
		   " outside=%" PRIu64,
		   sector, sectors, mismatched, outside);
}

int check_report_round_trip(struct check *c, const char *kase, uint64_t sector,
			    const struct frontend_segment *w, unsigned int wn,
			    const struct frontend_segment *r, unsigned int rn)
{
	char name[64];
	int ret;

	check_fill_segs(c, sector, w, wn);
	snprintf(name, sizeof(name), "%s-write", kase);
	ret = check_report_rw(c, name, BLKIF_OP_WRITE, sector, w, wn);
	if (ret < 0)
		return ret;
	check_poison_segs(c, r, rn);
	snprintf(name, sizeof(name), "%s-read", kase);
	ret = check_report_rw(c, name, BLKIF_OP_READ, sector, r, rn);
	if (ret < 0)
		return ret;
	snprintf(name, sizeof(name), "%s-data", kase);
	check_report_data(c, name, sector, r, rn);
	return 0;
}

int check_report_probe(struct check *c, uint64_t sector)
{
	const struct frontend_segment s = { 0, 0, SECTS_PER_PAGE - 1 };

	return check_report_round_trip(c, "probe", sector, &s, 1, &s, 1);
}

int check_report_flush(struct check *c, const char *kase)
{
	uint64_t id;
	int ret = frontend_queue_flush(c->fe, &id);

	if (ret < 0)
		return check_fail(c, ret, "%s: cannot queue a flush: %s", kase,
				  strerror(-ret));
	return check_report_await(c, kase, id);
}

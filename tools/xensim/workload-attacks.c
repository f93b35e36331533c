// SPDX-License-Identifier: MIT
/*
 * Hostile-guest attacks for tests/vbd-attacks.sh: what a malicious
 * frontend can do with its ring indexes, event channel, grants and
 * request slots. Each attack does its work and reports what came back as
 * facts (workload-check.h): the status of each request, the backend's
 * state after a lie about the ring indexes, the tallies of a race, the
 * data read back; then, unless the ring is gone, the probe. The test
 * judges them; an attack fails only when it cannot do its work.
 *
 * The disk holds the pattern of the check's seed throughout: every write
 * an attack makes carries exactly the pattern of the sectors it names, so
 * any byte the backend writes anywhere else, or from the wrong page,
 * shows when the test compares the image with the pattern afterwards.
 */
#include "tools/xensim/workload-check.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "tools/xensim/xensim.h"

#define SECTS_PER_PAGE BLKIF_SECTORS_PER_PAGE
#define MAX_SEGS BLKIF_MAX_SEGMENTS_PER_REQUEST
/* A grant reference no guest of ours ever allocates. */
#define NEVER_GRANTED 0x7ffff0u
#define RING_CLOSE_WAIT_MS 10000
#define STORM_NOTIFIES 50000u
#define RACE_ROUNDS 1000u
#define REVOKE_ROUNDS 200u
/* Rewrites before a racing round gives up on its answer. */
#define RACE_MAX_FLIPS 50000000u
/* Where the attacks put their requests: clear of the checks' sectors. */
#define ATTACK_SECTOR 1024u

/*
 * Wait (at most RING_CLOSE_WAIT_MS) for the backend to leave Connected
 * without our asking, and report the state it is in then.
 */
static int report_ring_state(struct check *c, const char *kase, int ret)
{
	int state = frontend_backend_state(c->fe);

	if (ret < 0)
		return check_fail(c, ret, "%s: notify failed", kase);
	for (int waited = 0; state == 4 && waited < RING_CLOSE_WAIT_MS;
	     waited += 50) {
		poll(NULL, 0, 50);
		state = frontend_backend_state(c->fe);
	}
	check_fact(c, kase, "backend-state=%d", state);
	return 0;
}

static int attack_prod_beyond_ring(struct check *c)
{
	uint32_t prod = frontend_req_prod_pvt(c->fe, 0);
	int ret = frontend_set_req_prod(
		c->fe, 0, prod + frontend_disk_info(c->fe)->ring_size + 1);

	return report_ring_state(c, "req-prod-ring-and-one-ahead", ret);
}

static int attack_prod_jump(struct check *c)
{
	uint32_t prod = frontend_req_prod_pvt(c->fe, 0);
	int ret = frontend_set_req_prod(c->fe, 0, prod + 0x7fffffffu);

	return report_ring_state(c, "req-prod-2-31-ahead", ret);
}

static int attack_prod_backwards(struct check *c)
{
	int ret = check_report_probe(c, ATTACK_SECTOR);

	if (ret < 0)
		return ret;
	ret = frontend_set_req_prod(c->fe, 0,
				    frontend_req_prod_pvt(c->fe, 0) - 1);
	return report_ring_state(c, "req-prod-back-by-one", ret);
}

/* ---- responses never consumed, notification storms ---- */

/*
 * Fill every request slot with reads (with a one-page ring, the whole
 * ring), push, and leave the answers on the ring for two seconds while
 * poking the backend; then take them: each must be OKAY.
 */
static int attack_never_consume(struct check *c)
{
	const struct frontend_segment s = { 0, 0, SECTS_PER_PAGE - 1 };
	unsigned int n = 0, okay = 0;
	int ret;

	while (frontend_free_slots(c->fe)) {
		ret = frontend_queue_rw(c->fe, BLKIF_OP_READ,
					ATTACK_SECTOR + n * SECTS_PER_PAGE, &s,
					1, NULL);
		if (ret < 0)
			return check_fail(c, ret, "cannot queue read %u", n);
		n++;
	}
	check_fact(c, "left-on-ring", "requests=%u ring=%u", n,
		   frontend_disk_info(c->fe)->ring_size);
	ret = frontend_push(c->fe);
	for (unsigned int i = 0; !ret && i < 20; i++) {
		poll(NULL, 0, 100);
		ret = frontend_notify(c->fe, 0);
	}
	if (ret < 0)
		return check_fail(c, ret, "notify failed");
	for (unsigned int i = 0; i < n; i++) {
		struct frontend_response rsp;

		ret = frontend_wait(c->fe, &rsp, CHECK_TIMEOUT_MS);
		if (ret < 0)
			return check_fail(c, ret,
					  "answer %u of %u left on the ring: "
					  "%s",
					  i, n, strerror(-ret));
		okay += rsp.status == BLKIF_RSP_OKAY;
	}
	check_fact(c, "answers", "answered=%u okay=%u", n, okay);
	return check_report_probe(c, ATTACK_SECTOR);
}

static int attack_evtchn_storm(struct check *c)
{
	for (unsigned int i = 0; i < STORM_NOTIFIES; i++) {
		int ret = frontend_notify(c->fe, 0);

		if (ret < 0)
			return check_fail(c, ret, "notify %u failed", i);
	}
	check_fact(c, "notifies", "sent=%u", STORM_NOTIFIES);
	return check_report_probe(c, ATTACK_SECTOR);
}

/* ---- grants ---- */

/*
 * One raw request over data page @page with the grant @gref, whole page,
 * at ATTACK_SECTOR, its status reported as @kase: a write carries the
 * pattern of that page, a read goes into the poisoned page.
 */
static int report_page_io(struct check *c, const char *kase, uint8_t op,
			  grant_ref_t gref, uint32_t page)
{
	const struct frontend_segment s = { page, 0, SECTS_PER_PAGE - 1 };
	struct frontend_request r = { .operation = op,
				      .nr_segments = 1,
				      .sector_number = ATTACK_SECTOR };

	r.seg[0].gref = gref;
	r.seg[0].last_sect = SECTS_PER_PAGE - 1;
	if (op == BLKIF_OP_WRITE)
		check_fill_segs(c, ATTACK_SECTOR, &s, 1);
	else
		check_poison_segs(c, &s, 1);
	return check_report_raw(c, kase, &r, 0x1000 + op);
}

/* Grant data page @page as the guest likes: to @peer, maybe read-only. */
static int grant_page_to(struct check *c, uint32_t page, uint32_t peer,
			 bool readonly, grant_ref_t *gref)
{
	int ret = xensim_grant_access(frontend_domain(c->fe), peer,
				      frontend_data_pfn(c->fe, page), readonly);

	if (ret < 0)
		return check_fail(c, ret, "cannot grant page %u", page);
	*gref = (grant_ref_t)ret;
	return 0;
}

static uint32_t backend_domid(struct check *c)
{
	return frontend_disk_info(c->fe)->backend_domid;
}

static int attack_grant_other_domain(struct check *c)
{
	uint32_t other = backend_domid(c) + 0x100;
	grant_ref_t gref;
	int ret = grant_page_to(c, 1, other, false, &gref);

	if (!ret)
		ret = report_page_io(c, "read-into-other-domains-grant",
				     BLKIF_OP_READ, gref, 1);
	if (!ret)
		ret = report_page_io(c, "write-from-other-domains-grant",
				     BLKIF_OP_WRITE, gref, 1);
	return ret ?: check_report_probe(c, ATTACK_SECTOR);
}

/*
 * A READ into a read-only grant, and (without persistent grants, which
 * are mapped writable) a WRITE from it: the control that the grant
 * itself works.
 */
static int attack_grant_readonly_read(struct check *c)
{
	grant_ref_t gref;
	int ret = grant_page_to(c, 1, backend_domid(c), true, &gref);

	if (!ret)
		ret = report_page_io(c, "read-into-readonly-grant",
				     BLKIF_OP_READ, gref, 1);
	if (!ret && !frontend_disk_info(c->fe)->persistent)
		ret = report_page_io(c, "write-from-readonly-grant",
				     BLKIF_OP_WRITE, gref, 1);
	xensim_grant_end(frontend_domain(c->fe), gref);
	return ret ?: check_report_probe(c, ATTACK_SECTOR);
}

static int attack_grant_revoked(struct check *c)
{
	grant_ref_t gref;
	int ret = grant_page_to(c, 1, backend_domid(c), false, &gref);

	if (!ret && xensim_grant_end(frontend_domain(c->fe), gref) < 0)
		ret = check_fail(c, -EIO, "cannot revoke grant %u", gref);
	if (!ret)
		ret = report_page_io(c, "read-into-revoked-grant",
				     BLKIF_OP_READ, gref, 1);
	if (!ret)
		ret = report_page_io(c, "write-from-revoked-grant",
				     BLKIF_OP_WRITE, gref, 1);
	return ret ?: check_report_probe(c, ATTACK_SECTOR);
}

/* Busy-wait: sleeping would give the backend whole milliseconds. */
static void spin_us(unsigned int us)
{
	struct timespec now, end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += (long)us * 1000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while (now.tv_sec < end.tv_sec ||
	       (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
}

/*
 * Revoke the grant 0-63 µs after pushing the request that uses it, and
 * tally the answers: OKAY (the copy came first), refused, and, of the
 * reads answered OKAY, those whose page does not hold the pattern. A
 * mapped grant cannot be revoked (-EBUSY, as in Xen): then the guest
 * tries again once answered, and with persistent grants gives up (the
 * backend keeps the mapping until disconnect).
 */
static int attack_grant_revoke_race(struct check *c)
{
	const struct frontend_segment s = { 1, 0, SECTS_PER_PAGE - 1 };
	struct xensim_domain *dom = frontend_domain(c->fe);
	unsigned int ok = 0, refused = 0, busy = 0, bad_data = 0;

	for (unsigned int i = 0; i < REVOKE_ROUNDS; i++) {
		struct frontend_request r = { .operation = BLKIF_OP_READ,
					      .nr_segments = 1,
					      .id = RAW_ID_BASE + 0x2000 + i,
					      .sector_number = ATTACK_SECTOR };
		grant_ref_t gref;
		bool revoked;
		int16_t st;
		int ret = grant_page_to(c, 1, backend_domid(c), false, &gref);

		if (ret < 0)
			return ret;
		r.seg[0].gref = gref;
		r.seg[0].last_sect = SECTS_PER_PAGE - 1;
		check_poison_segs(c, &s, 1);
		ret = frontend_queue_raw(c->fe, &r);
		if (!ret)
			ret = frontend_push(c->fe);
		if (ret < 0)
			return check_fail(c, ret, "cannot send round %u", i);
		spin_us(i % 64);
		revoked = xensim_grant_end(dom, gref) == 0;
		ret = check_await(c, r.id, &st);
		if (ret < 0)
			return ret;
		if (!revoked && xensim_grant_end(dom, gref) < 0)
			busy++;
		if (st != BLKIF_RSP_OKAY) {
			refused++;
			continue;
		}
		ok++;
		bad_data += workload_check_pattern(c->seed, ATTACK_SECTOR,
						   frontend_data_page(c->fe, 1),
						   SECTS_PER_PAGE) >= 0;
	}
	check_fact(c, "rounds",
		   "answered=%u okay=%u refused=%u okay-bad-data=%u "
		   "still-mapped=%u",
		   ok + refused, ok, refused, bad_data, busy);
	return check_report_probe(c, ATTACK_SECTOR);
}

/*
 * The two rounds of a write-and-read-back attack: round 0 writes the
 * pattern of @sector from @s, round 1 reads into @s poisoned.
 */
static uint8_t prepare_round(struct check *c, unsigned int round,
			     uint64_t sector, const struct frontend_segment *s,
			     unsigned int n)
{
	if (round) {
		check_poison_segs(c, s, n);
		return BLKIF_OP_READ;
	}
	check_fill_segs(c, sector, s, n);
	return BLKIF_OP_WRITE;
}

/* After the rounds: what @s holds (read back), then the probe. */
static int report_read_back(struct check *c, int ret,
			    const struct frontend_segment *s, unsigned int n)
{
	if (ret < 0)
		return ret;
	check_report_data(c, "read-back-data", ATTACK_SECTOR, s, n);
	return check_report_probe(c, ATTACK_SECTOR);
}

/*
 * One grant in many segments: 11 whole-page reads into the same page,
 * then 8 one-sector segments of one page, each its own sector, written
 * and read back: the page is the pattern of 8 consecutive sectors. Then
 * (without persistent grants) whether the grant could be ended.
 */
static int attack_same_page_many_segments(struct check *c)
{
	static const char *const kase[] = { "write-8-sectors-one-page", "read-"
									"8-"
									"sector"
									"s-one-"
									"pag"
									"e" };
	struct frontend_request r = { .operation = BLKIF_OP_READ,
				      .nr_segments = MAX_SEGS,
				      .sector_number = ATTACK_SECTOR };
	const struct frontend_segment whole = { 1, 0, SECTS_PER_PAGE - 1 };
	grant_ref_t gref;
	int ret = grant_page_to(c, 1, backend_domid(c), false, &gref);

	for (unsigned int i = 0; i < MAX_SEGS; i++)
		r.seg[i] = (typeof(r.seg[0])){ gref, 0, SECTS_PER_PAGE - 1 };
	if (!ret)
		ret = check_report_raw(c, "11-reads-into-one-page", &r, 0x3000);
	for (unsigned int op = 0; !ret && op < 2; op++) {
		r.operation = prepare_round(c, op, ATTACK_SECTOR, &whole, 1);
		r.nr_segments = SECTS_PER_PAGE;
		for (uint8_t i = 0; i < SECTS_PER_PAGE; i++)
			r.seg[i] = (typeof(r.seg[0])){ gref, i, i };
		ret = check_report_raw(c, kase[op], &r, 0x3001 + op);
	}
	if (!ret && !frontend_disk_info(c->fe)->persistent)
		check_fact(c, "grant-end", "result=%d",
			   xensim_grant_end(frontend_domain(c->fe), gref));
	return report_read_back(c, ret, &whole, 1);
}

/* ---- the request rewritten while the backend works on it ---- */

/* What a racing guest tallies: answers OKAY, and answers refused. */
struct race {
	unsigned int ok, refused;
};

/*
 * Push the request just queued (@queued: how queueing went) and flip it
 * between its bad form and its good one (@flip) as fast as the guest
 * can, until its answer comes; tally the answer.
 */
static int race_round(struct check *c, unsigned int round, int queued,
		      void (*flip)(struct check *c, void *arg, bool good),
		      void *arg, struct race *tally)
{
	struct frontend_response rsp;
	int ret = queued ?: frontend_push(c->fe);

	if (ret < 0)
		return check_fail(c, ret, "cannot send round %u", round);
	for (unsigned int n = 0;; n++) {
		flip(c, arg, n & 1);
		ret = frontend_wait(c->fe, &rsp, 0);
		if (ret > 0)
			break;
		if (ret != -ETIMEDOUT)
			return check_fail(c, ret, "round %u: %s", round,
					  strerror(-ret));
		if (n > RACE_MAX_FLIPS)
			return check_fail(c, -ETIMEDOUT, "round %u: no answer",
					  round);
	}
	if (rsp.status == BLKIF_RSP_OKAY)
		tally->ok++;
	else
		tally->refused++;
	return 0;
}

/* Tell the test how the races went, then the probe. */
static int race_report(struct check *c, int ret, const struct race *tally)
{
	if (ret < 0)
		return ret;
	check_fact(c, "rounds", "answered=%u okay=%u refused=%u",
		   tally->ok + tally->refused, tally->ok, tally->refused);
	return check_report_probe(c, ATTACK_SECTOR);
}

struct slot_forms {
	struct frontend_request good, bad;
};

static void flip_slot(struct check *c, void *arg, bool good)
{
	struct slot_forms *f = arg;

	frontend_rewrite_last(c->fe, 0, good ? &f->good : &f->bad);
}

/*
 * A write of the pattern at ATTACK_SECTOR, whose sector and segment the
 * guest keeps flipping to values outside the disk and its grants until
 * the answer comes. The backend must act on one consistent copy: an
 * answer every round, and nothing written anywhere but ATTACK_SECTOR
 * (the test checks the image and its size afterwards).
 */
static int attack_double_fetch(struct check *c)
{
	const struct frontend_segment s = { 1, 0, SECTS_PER_PAGE - 1 };
	struct slot_forms f = { .good = { .operation = BLKIF_OP_WRITE,
					  .nr_segments = 1,
					  .sector_number = ATTACK_SECTOR } };
	struct race tally = { 0, 0 };
	grant_ref_t gref;
	int ret = grant_page_to(c, 1, backend_domid(c), false, &gref);

	if (ret < 0)
		return ret;
	f.good.seg[0] = (typeof(f.good.seg[0])){ gref, 0, SECTS_PER_PAGE - 1 };
	f.bad = f.good;
	f.bad.sector_number = frontend_disk_info(c->fe)->sectors + 64;
	f.bad.seg[0] = (typeof(f.bad.seg[0])){ NEVER_GRANTED, 3, 9 };
	check_fill_segs(c, ATTACK_SECTOR, &s, 1);
	for (unsigned int i = 0; !ret && i < RACE_ROUNDS; i++) {
		f.good.id = RAW_ID_BASE + 0x4000 + i;
		ret = race_round(c, i, frontend_queue_raw(c->fe, &f.good),
				 flip_slot, &f, &tally);
	}
	if (!frontend_disk_info(c->fe)->persistent)
		xensim_grant_end(frontend_domain(c->fe), gref);
	return race_report(c, ret, &tally);
}

/* ---- indirect page lists ---- */

/* @n segments over data pages 0-15, whole pages. */
static void indirect_entries(struct check *c, struct blkif_request_segment *e,
			     unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		e[i] = (struct blkif_request_segment){
			.gref = frontend_data_gref(c->fe, i % 16),
			.last_sect = SECTS_PER_PAGE - 1
		};
}

static int send_indirect(struct check *c, const char *kase,
			 struct frontend_indirect_request *r,
			 const struct blkif_request_segment *e, unsigned int ne,
			 unsigned int real_pages)
{
	grant_ref_t pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	int ret = frontend_raw_indirect_pages(c->fe, 0, e, ne, pages);

	if (ret < 0)
		return check_fail(c, ret, "cannot build indirect pages");
	for (unsigned int i = 0; i < real_pages; i++)
		r->indirect_grefs[i] = pages[i];
	ret = frontend_queue_raw_indirect(c->fe, 0, r);
	if (ret < 0)
		return check_fail(c, ret, "cannot queue an indirect request");
	return check_report_await(c, kase, r->id);
}

static int need_indirect(struct check *c, uint32_t segs)
{
	const struct frontend_disk_info *di = frontend_disk_info(c->fe);

	if (!di->persistent)
		return check_fail(c, -EOPNOTSUPP,
				  "needs persistent grants (the segment "
				  "entries name the data pages' grants)");
	if (di->backend_max_indirect < segs)
		return check_fail(c, -EOPNOTSUPP,
				  "needs %u indirect segments, the backend "
				  "offers %u",
				  segs, di->backend_max_indirect);
	return 0;
}

/* 600 segments need two indirect pages; the guest names only one. */
static int attack_indirect_missing_page(struct check *c)
{
	static struct blkif_request_segment e[600];
	struct frontend_indirect_request r = {
		.indirect_op = BLKIF_OP_READ,
		.nr_segments = 600,
		.id = RAW_ID_BASE + 0x5000,
		.sector_number = 0,
	};
	int ret = need_indirect(c, 600);

	indirect_entries(c, e, 600);
	if (!ret)
		ret = send_indirect(c, "600-segments-one-page", &r, e, 600, 1);
	return ret ?: check_report_probe(c, ATTACK_SECTOR);
}

/*
 * 16 segments need one indirect page; the other seven entries hold junk
 * (the backend must ignore them): a write and a read of the pattern.
 */
static int attack_indirect_junk_pages(struct check *c)
{
	struct blkif_request_segment e[16];
	struct frontend_segment s[16];
	struct frontend_indirect_request r = {
		.nr_segments = 16,
		.sector_number = ATTACK_SECTOR,
		.indirect_grefs = { 0, NEVER_GRANTED, 0, NEVER_GRANTED + 1,
				    0xffffffffu, 1, 2, 3 },
	};
	static const char *const kase[] = { "write-junk-in-unused-pages",
					    "read-junk-in-unused-pages" };
	int ret = need_indirect(c, 16);

	indirect_entries(c, e, 16);
	for (unsigned int i = 0; i < 16; i++)
		s[i] = (struct frontend_segment){ i, 0, SECTS_PER_PAGE - 1 };
	for (unsigned int op = 0; !ret && op < 2; op++) {
		r.indirect_op = prepare_round(c, op, ATTACK_SECTOR, s, 16);
		r.id = RAW_ID_BASE + 0x5100 + op;
		ret = send_indirect(c, kase[op], &r, e, 16, 1);
	}
	return report_read_back(c, ret, s, 16);
}

struct page_forms {
	struct blkif_request_segment good[16], bad[16];
	grant_ref_t pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
};

static void flip_indirect_page(struct check *c, void *arg, bool good)
{
	struct page_forms *f = arg;

	frontend_raw_indirect_pages(c->fe, 0, good ? f->good : f->bad, 16,
				    f->pages);
}

/*
 * The indirect page rewritten while the request is in flight: segments
 * flipped to an ungranted reference and an impossible last_sect. Either
 * answer is right; the write carries the pattern of its own sectors.
 */
static int attack_indirect_rewrite(struct check *c)
{
	struct page_forms f;
	struct frontend_segment s[16];
	struct race tally = { 0, 0 };
	int ret = need_indirect(c, 16);

	if (ret < 0)
		return ret;
	indirect_entries(c, f.good, 16);
	for (unsigned int i = 0; i < 16; i++) {
		f.bad[i] = (struct blkif_request_segment){
			.gref = NEVER_GRANTED, .first_sect = 2, .last_sect = 9
		};
		s[i] = (struct frontend_segment){ i, 0, SECTS_PER_PAGE - 1 };
	}
	check_fill_segs(c, ATTACK_SECTOR, s, 16);
	for (unsigned int i = 0; !ret && i < RACE_ROUNDS / 4; i++) {
		struct frontend_indirect_request r = {
			.indirect_op = BLKIF_OP_WRITE,
			.nr_segments = 16,
			.id = RAW_ID_BASE + 0x6000 + i,
			.sector_number = ATTACK_SECTOR,
		};

		ret = frontend_raw_indirect_pages(c->fe, 0, f.good, 16,
						  f.pages);
		r.indirect_grefs[0] = f.pages[0];
		ret = race_round(
			c, i, ret ?: frontend_queue_raw_indirect(c->fe, 0, &r),
			flip_indirect_page, &f, &tally);
	}
	return race_report(c, ret, &tally);
}

/* ---- operations ---- */

static int attack_unknown_ops(struct check *c)
{
	static const uint8_t ops[] = { 7, 99, 200, 255 };

	for (size_t i = 0; i < sizeof(ops); i++) {
		struct frontend_request r = { .operation = ops[i],
					      .nr_segments = 1,
					      .sector_number = ATTACK_SECTOR };
		char kase[16];
		int ret;

		r.seg[0].gref = NEVER_GRANTED;
		r.seg[0].last_sect = SECTS_PER_PAGE - 1;
		snprintf(kase, sizeof(kase), "operation-%u", ops[i]);
		ret = check_report_raw(c, kase, &r, 0x7000 + i);
		if (ret < 0)
			return ret;
	}
	return check_report_probe(c, ATTACK_SECTOR);
}

/* A read-only disk offers no discard; one sent anyway. */
static int attack_discard_readonly(struct check *c)
{
	uint64_t id;
	int ret;

	check_fact(c, "disk", "readonly=%d",
		   !!(frontend_disk_info(c->fe)->info & VDISK_READONLY));
	ret = frontend_queue_discard(c->fe, 0, ATTACK_SECTOR, 64, 0, &id);
	if (ret < 0)
		return check_fail(c, ret, "cannot queue discard");
	return check_report_await(c, "discard", id);
}

static const struct {
	const char *name;
	check_fn fn;
} attacks[] = {
	{ "prod-beyond-ring", attack_prod_beyond_ring },
	{ "prod-jump", attack_prod_jump },
	{ "prod-backwards", attack_prod_backwards },
	{ "never-consume", attack_never_consume },
	{ "evtchn-storm", attack_evtchn_storm },
	{ "grant-other-domain", attack_grant_other_domain },
	{ "grant-readonly-read", attack_grant_readonly_read },
	{ "grant-revoked", attack_grant_revoked },
	{ "grant-revoke-race", attack_grant_revoke_race },
	{ "same-page-many-segments", attack_same_page_many_segments },
	{ "double-fetch", attack_double_fetch },
	{ "indirect-missing-page", attack_indirect_missing_page },
	{ "indirect-junk-pages", attack_indirect_junk_pages },
	{ "indirect-rewrite", attack_indirect_rewrite },
	{ "unknown-ops", attack_unknown_ops },
	{ "discard-readonly", attack_discard_readonly },
};

check_fn check_attack_find(const char *name)
{
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		if (!strcmp(attacks[i].name, name))
			return attacks[i].fn;
	}
	return NULL;
}

const char *workload_attack_names(void)
{
	return "prod-beyond-ring prod-jump prod-backwards never-consume "
	       "evtchn-storm grant-other-domain "
	       "grant-readonly-read grant-revoked grant-revoke-race "
	       "same-page-many-segments double-fetch indirect-missing-page "
	       "indirect-junk-pages indirect-rewrite unknown-ops "
	       "discard-readonly";
}

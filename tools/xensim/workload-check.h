/* SPDX-License-Identifier: MIT */
/*
 * What the targeted checks (workload-checks.c) and the hostile-guest
 * attacks (workload-attacks.c) share: one check's context, the helpers
 * that send a request and collect its answer, and those that report what
 * happened as facts for the test to judge (workload-facts.c).
 * Internal to xensim-blkfront; one thread drives a check, on queue 0.
 */
#ifndef XENSIM_WORKLOAD_CHECK_H
#define XENSIM_WORKLOAD_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "tools/xensim/workload.h"

#define CHECK_TIMEOUT_MS 10000
/* Ids of raw requests, far from the library's own counter. */
#define RAW_ID_BASE 0x5eed000000000000ull

struct check {
	const char *name; /* as the test named it */
	struct frontend *fe;
	uint64_t seed; /* of the pattern the disk holds or gets */
	FILE *in, *out; /* the test's go-aheads, and what we tell it */
	char *why; /* filled by check_fail */
	size_t why_len;
};

/* Describe the failure in c->why and return @err. */
int check_fail(struct check *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Push what is queued and wait for exactly the response to @id. */
int check_await(struct check *c, uint64_t id, int16_t *status);
/* Queue one READ or WRITE over data pages and wait for its status. */
int check_rw(struct check *c, uint8_t op, uint64_t sector,
	     const struct frontend_segment *segs, unsigned int nr,
	     int16_t *status);
/* Fill the segments with the pattern of the sectors from @sector on. */
void check_fill_segs(struct check *c, uint64_t sector,
		     const struct frontend_segment *s, unsigned int nr);
/* What check_poison_segs() fills pages with. */
#define CHECK_POISON 0x5a
/* Fill the segments' whole pages with CHECK_POISON. */
void check_poison_segs(struct check *c, const struct frontend_segment *s,
		       unsigned int nr);

/*
 * ---- facts (workload-facts.c) ----
 * A check judges nothing: it sends its requests, collects what came
 * back and prints one line per fact on c->out,
 *
 *   fact check=NAME case=CASE KEY=VALUE...
 *
 * in the order it sent them, for the test to compare with what it
 * expects (tests/lib.sh: expect_facts). It fails (-errno) only when it
 * could not do its work: a request it could not queue, an answer that
 * never came or answered no request of ours.
 */

/* Print one fact line: "fact check=NAME case=@kase " then @fmt. */
void check_fact(struct check *c, const char *kase, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* OKAY, ERROR, EOPNOTSUPP, or the number of any other status. */
const char *check_status_name(int16_t status, char buf[8]);
/* Push what is queued, wait for @id's answer, report "status=S". */
int check_report_await(struct check *c, const char *kase, uint64_t id);
/* Queue one READ/WRITE (or other op over pages) and report its status. */
int check_report_rw(struct check *c, const char *kase, uint8_t op,
		    uint64_t sector, const struct frontend_segment *segs,
		    unsigned int nr);
/* Queue @req as is (its id: RAW_ID_BASE + @n) and report its status. */
int check_report_raw(struct check *c, const char *kase,
		     struct frontend_request *req, uint64_t n);
/*
 * Count the sectors of the segments that do not hold the pattern from
 * @sector on, and the pages with a byte changed outside their segment,
 * and report "sector=S sectors=N mismatched=M outside=K".
 */
void check_report_data(struct check *c, const char *kase, uint64_t sector,
		       const struct frontend_segment *s, unsigned int nr);
/*
 * Write the pattern from @w at @sector, read it back into @r (poisoned
 * first), and report @kase-write and @kase-read (their statuses) and
 * @kase-data (check_report_data of @r).
 */
int check_report_round_trip(struct check *c, const char *kase, uint64_t sector,
			    const struct frontend_segment *w, unsigned int wn,
			    const struct frontend_segment *r, unsigned int rn);
/*
 * The ring still serves: a page written at @sector and read back, as the
 * facts probe-write, probe-read and probe-data.
 */
int check_report_probe(struct check *c, uint64_t sector);
/* Queue an empty FLUSH_DISKCACHE and report its status. */
int check_report_flush(struct check *c, const char *kase);

typedef int (*check_fn)(struct check *c);
/* The attack called @name (workload-attacks.c), or NULL. */
check_fn check_attack_find(const char *name);
/* The numbered writes or reads called @name (workload-numbered.c), or NULL. */
check_fn check_numbered_find(const char *name);

#endif /* XENSIM_WORKLOAD_CHECK_H */

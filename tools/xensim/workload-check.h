/* SPDX-License-Identifier: MIT */
/*
 * What the targeted checks (workload-checks.c) and the hostile-guest
 * attacks (workload-attacks.c) share: one check's context and the helpers
 * that send a request and judge its answer. Internal to xensim-blkfront;
 * one thread drives a check, on queue 0.
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
/* The same, and anything but OKAY is a failure. */
int check_rw_ok(struct check *c, uint8_t op, uint64_t sector,
		const struct frontend_segment *segs, unsigned int nr);
/* Fill the segments with the pattern of the sectors from @sector on. */
void check_fill_segs(struct check *c, uint64_t sector,
		     const struct frontend_segment *s, unsigned int nr);
/* Fill the segments' whole pages with 0x5a. */
void check_poison_segs(struct check *c, const struct frontend_segment *s,
		       unsigned int nr);
/*
 * The segments hold the pattern from @sector on, and the rest of their
 * pages still holds the poison.
 */
int check_verify_segs(struct check *c, uint64_t sector,
		      const struct frontend_segment *s, unsigned int nr);
/* Write a page at @sector and read it back verified: the ring works. */
int check_still_serving(struct check *c, uint64_t sector);

typedef int (*check_fn)(struct check *c);
/* The attack called @name (workload-attacks.c), or NULL. */
check_fn check_attack_find(const char *name);

#endif /* XENSIM_WORKLOAD_CHECK_H */

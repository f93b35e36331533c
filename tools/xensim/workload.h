/* SPDX-License-Identifier: MIT */
/*
 * Workloads for the simulated blkfront: verified random and sequential
 * I/O, and the targeted checks the integration tests select.
 *
 * Data written to sector S is a function of (seed, S) only, so any later
 * read of a sector that was ever written can be verified byte by byte, two
 * concurrent writes of the same sector never disagree, and a host-side
 * tool can regenerate the expected image (workload_fill_pattern).
 */
#ifndef XENSIM_WORKLOAD_H
#define XENSIM_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/xensim/frontend.h"

#define WORKLOAD_SECTOR 512u

/* Fill @buf with the pattern of @count sectors starting at @sector. */
void workload_fill_pattern(uint64_t seed, uint64_t sector, void *buf,
			   uint32_t count);
/* Index of the first byte that differs from the pattern, or -1. */
long workload_check_pattern(uint64_t seed, uint64_t sector, const void *buf,
			    uint32_t count);

struct workload_params {
	uint64_t seed;
	uint32_t bs; /* bytes per request, a multiple of the sector size */
	uint32_t depth; /* requests in flight, per queue */
	uint64_t ops; /* 0: run for seconds */
	double seconds;
	bool random; /* random offsets, else sequential */
	bool partial; /* segments that start/end inside pages */
	bool fill; /* write the whole disk sequentially first */
	bool verify; /* read back and compare every written byte */
	bool preexisting; /* the disk already holds the pattern: only read */
	uint32_t flush_every; /* flush after this many writes (0: at end) */
	int timeout_ms; /* per request */
};

/* A byte a READ brought in that is not the pattern's. */
struct workload_mismatch {
	bool found;
	uint64_t sector; /* in 512-byte units, as the pattern numbers them */
	uint32_t byte; /* within that sector */
	uint8_t expected, got;
};

/* A request the backend answered with an error status. */
struct workload_answer {
	bool found;
	uint8_t op;
	uint64_t sector; /* device sectors */
	uint32_t sectors;
	int16_t status;
};

struct workload_stats {
	uint64_t bytes_written;
	uint64_t bytes_read;
	uint64_t ops;
	uint64_t flushes;
	double seconds;
	uint64_t blocks_written; /* WRITE requests answered OKAY */
	uint64_t blocks_compared; /* READs whose data was compared (verify) */
	uint64_t blocks_mismatched; /* of those, READs with a wrong byte */
	struct workload_mismatch first; /* the lowest wrong byte seen */
	struct workload_answer error; /* the one that stopped the run */
	uint32_t bs; /* bytes per request used (capped by the transport) */
	uint32_t depth; /* per queue, capped by the ring size */
	unsigned int queues; /* each driven by its own thread */
	uint64_t indirect_ops; /* requests sent as BLKIF_OP_INDIRECT */
	uint64_t unannounced; /* frontend_unannounced() at the end */
};

/*
 * Data pages a workload needs with @queues queues: the library lays each
 * request of @bs bytes over its own pages (more for --partial). An upper
 * bound whatever the backend offers.
 */
uint32_t workload_data_pages(const struct workload_params *p,
			     unsigned int queues);

/*
 * Run the workload over every queue of @fe, one thread per queue, each on
 * its own share of the disk (block b belongs to queue b % queues). With
 * verify, every READ of a block written (or preexisting) is compared with
 * the pattern and counted in @st, matching or not: the run judges no data,
 * the test does (workload_report_verify). It stops only when it cannot go
 * on: -EIO on an error response, -EPROTO on a response to no request of
 * ours, -ETIMEDOUT when a request goes unanswered, the request described
 * in @why. @st holds what was done until then.
 */
int workload_run(struct frontend *fe, const struct workload_params *p,
		 struct workload_stats *st, char *why, size_t why_len);

/*
 * Print what a verified run that was done saw, as one fact for the test
 * to judge
 * (tests/lib.sh: expect_verified), in the form of the checks' facts
 * (workload-check.h):
 *
 *   fact check=verify case=summary written=W compared=C mismatched=M
 *        first=SECTOR:BYTE expected=0xEE got=0xGG
 *
 * W WRITE requests answered OKAY, C READs compared with the pattern, M of
 * them with a wrong byte, and the lowest wrong byte (512-byte sector and
 * byte in it, "-" for all three when none).
 */
void workload_report_verify(const struct workload_stats *st, FILE *out);

/*
 * Print the error answer that stopped a run, if one did, as a fact:
 *
 *   fact check=workload case=error-answer op=OP sector=S sectors=N
 *        status=STATUS
 *
 * OP READ, WRITE or FLUSH; S and N in device sectors; STATUS as the
 * checks name it (check_status_name).
 */
void workload_report_error(const struct workload_stats *st, FILE *out);

/*
 * Named checks. Each sends its requests and reports what came back as
 * facts on @out (workload-check.h) for the test to judge; it returns 0
 * when it could do its work, else -errno with a description in @why. Checks
 * that need the host to look at the image
 * ("flush-pause", "discard", "resize") print a word on @out and wait for a
 * line on @in.
 */
int workload_check(struct frontend *fe, const char *name, uint64_t seed,
		   FILE *in, FILE *out, char *why, size_t why_len);
/* The names workload_check knows, space separated. */
const char *workload_check_names(void);
/*
 * The hostile-guest attacks workload_check also runs (workload-attacks.c),
 * space separated; they report facts as the checks do.
 */
const char *workload_attack_names(void);

#endif /* XENSIM_WORKLOAD_H */

/* SPDX-License-Identifier: MIT */
/*
 * Host I/O errors, per disk: each failed host I/O (the engine's
 * host_error hook) is counted by operation and errno, and logged without
 * flooding the journal: the first of each operation and errno on a disk
 * at once, the ones that follow in one summary line per interval with
 * their count ("(x17 in 10 s)").
 *
 * Threads: host_errors_record() runs on the worker threads; every other
 * function on the main thread. One mutex guards the table. It is taken
 * when the host fails an I/O and when the main thread registers a disk or
 * reads the counts, never for an I/O that succeeds, so the data path stays
 * lock-free. Messages are logged after the mutex is released.
 */
#ifndef BLKBACKD_HOST_ERRORS_H
#define BLKBACKD_HOST_ERRORS_H

#include <stdint.h>

struct host_errors;

/* Errors of one operation with one errno on one disk. */
struct host_error_count {
	unsigned int op; /* enum blk_stat_op */
	int err; /* a positive errno */
	uint64_t count;
};

/* At most this many operation-and-errno pairs are told apart per disk. */
#define HOST_ERRORS_MAX_KINDS 16

/* Summaries at most once per @interval_s seconds per disk and kind. */
int host_errors_create(struct host_errors **out, unsigned int interval_s);
/* Change the interval (a configuration reload). */
void host_errors_set_interval(struct host_errors *he, unsigned int interval_s);
/* Logs the summaries still owed; no worker may record any more. */
void host_errors_destroy(struct host_errors *he);

/*
 * Count the errors of the rings whose cookie is @cookie with any bits of
 * @queue_mask set (a disk's queues) for the disk @domid/@devid, called
 * @vdev (may be NULL) in messages. Counts start at zero; registering a
 * registered disk again only renames it. -ENOMEM.
 */
int host_errors_add_disk(struct host_errors *he, uint64_t cookie,
			 uint64_t queue_mask, uint32_t domid, uint32_t devid,
			 const char *vdev);
/* Log what is owed for the disk and forget it. */
void host_errors_remove_disk(struct host_errors *he, uint64_t cookie);

/*
 * Worker thread: the host failed an I/O of blkif operation @blkif_op with
 * @err (negative errno) on the ring with @ring_cookie. Unknown rings are
 * ignored.
 */
void host_errors_record(struct host_errors *he, uint64_t ring_cookie,
			uint8_t blkif_op, int err);

/*
 * Log the summaries that are due. Returns the milliseconds until the next
 * one, or -1 when none is owed (a poll() timeout).
 */
int host_errors_log_due(struct host_errors *he);

/*
 * Copy the disk's counts (at most HOST_ERRORS_MAX_KINDS) to @out; returns
 * how many. Kinds beyond the table's size are counted with err 0.
 */
unsigned int host_errors_counts(struct host_errors *he, uint64_t cookie,
				struct host_error_count *out);

#endif /* BLKBACKD_HOST_ERRORS_H */

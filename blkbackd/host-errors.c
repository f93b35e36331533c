// SPDX-License-Identifier: MIT
/*
 * Host I/O errors per disk: counting and rate-limited logging.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blkbackd/host-errors.h"
#include "blkbackd/log.h"
#include "libblk/stats.h"

#define NS_PER_SEC 1000000000ull

/* One operation and errno on one disk. */
struct error_kind {
	unsigned int op;
	int err; /* 0: the kinds the table had no room for */
	uint64_t count;
	uint64_t unlogged; /* counted since the last line */
	uint64_t last_line_ns; /* when the last line was logged */
};

struct disk_errors {
	struct disk_errors *next;
	uint64_t cookie;
	uint64_t queue_mask;
	struct log_disk who;
	char vdev[32];
	unsigned int nr_kinds;
	struct error_kind kind[HOST_ERRORS_MAX_KINDS];
};

struct host_errors {
	pthread_mutex_t lock; /* guards disks and everything in them */
	struct disk_errors *disks;
	uint64_t interval_ns;
};

/* A line to log once the lock is released. */
struct pending_line {
	struct log_disk who;
	char vdev[32];
	unsigned int op;
	int err;
	uint64_t count; /* 0: the first error, logged as it happened */
	unsigned int seconds;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

int host_errors_create(struct host_errors **out, unsigned int interval_s)
{
	struct host_errors *he = calloc(1, sizeof(*he));

	if (!he)
		return -ENOMEM;
	pthread_mutex_init(&he->lock, NULL);
	he->interval_ns = (uint64_t)interval_s * NS_PER_SEC;
	*out = he;
	return 0;
}

void host_errors_set_interval(struct host_errors *he, unsigned int interval_s)
{
	pthread_mutex_lock(&he->lock);
	he->interval_ns = (uint64_t)interval_s * NS_PER_SEC;
	pthread_mutex_unlock(&he->lock);
}

void host_errors_destroy(struct host_errors *he)
{
	if (!he)
		return;
	while (he->disks)
		host_errors_remove_disk(he, he->disks->cookie);
	pthread_mutex_destroy(&he->lock);
	free(he);
}

static struct disk_errors *find_disk(struct host_errors *he, uint64_t cookie)
{
	for (struct disk_errors *de = he->disks; de; de = de->next)
		if ((cookie & ~de->queue_mask) == de->cookie)
			return de;
	return NULL;
}

static void name_disk(struct disk_errors *de, const char *vdev)
{
	snprintf(de->vdev, sizeof(de->vdev), "%s", vdev ? vdev : "");
	de->who.vdev = de->vdev[0] ? de->vdev : NULL;
}

int host_errors_add_disk(struct host_errors *he, uint64_t cookie,
			 uint64_t queue_mask, uint32_t domid, uint32_t devid,
			 const char *vdev)
{
	struct disk_errors *de;
	int ret = 0;

	pthread_mutex_lock(&he->lock);
	de = find_disk(he, cookie);
	if (!de) {
		de = calloc(1, sizeof(*de));
		if (de) {
			de->cookie = cookie;
			de->queue_mask = queue_mask;
			de->who.domid = domid;
			de->who.devid = devid;
			de->next = he->disks;
			he->disks = de;
		}
	}
	if (de)
		name_disk(de, vdev);
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&he->lock);
	return ret;
}

/* The kind @op/@err of @de, made if new; the catch-all when full. */
static struct error_kind *kind_of(struct disk_errors *de, unsigned int op,
				  int err)
{
	struct error_kind *k;

	for (unsigned int i = 0; i < de->nr_kinds; i++)
		if (de->kind[i].op == op && de->kind[i].err == err)
			return &de->kind[i];
	/* The last slot stays for what finds no room: err 0, any op. */
	if (de->nr_kinds == HOST_ERRORS_MAX_KINDS - 1) {
		k = &de->kind[HOST_ERRORS_MAX_KINDS - 1];
		k->err = 0;
		k->op = op;
		return k;
	}
	k = &de->kind[de->nr_kinds++];
	*k = (struct error_kind){ .op = op, .err = err };
	return k;
}

static void take_line(struct pending_line *line, const struct disk_errors *de,
		      struct error_kind *k, uint64_t now)
{
	*line = (struct pending_line){
		.who = de->who,
		.op = k->op,
		.err = k->err,
		.count = k->last_line_ns ? k->unlogged : 0,
		.seconds = (unsigned int)((now - k->last_line_ns) / NS_PER_SEC),
	};
	snprintf(line->vdev, sizeof(line->vdev), "%s", de->vdev);
	line->who.vdev = line->vdev[0] ? line->vdev : NULL;
	k->unlogged = 0;
	k->last_line_ns = now;
}

static void log_line(const struct pending_line *line)
{
	char name[64], what[96];

	if (line->who.vdev)
		snprintf(name, sizeof(name), "vbd %u/%u (%s)", line->who.domid,
			 line->who.devid, line->who.vdev);
	else
		snprintf(name, sizeof(name), "vbd %u/%u", line->who.domid,
			 line->who.devid);
	snprintf(what, sizeof(what), "%s failed: %s",
		 blk_stat_op_name(line->op),
		 line->err ? strerror(line->err) : "errors of other kinds");
	if (line->count)
		log_disk_msg(LOG_ERR, &line->who, line->err,
			     "%s: %s (x%llu in %u s)", name, what,
			     (unsigned long long)line->count, line->seconds);
	else
		log_disk_msg(LOG_ERR, &line->who, line->err, "%s: %s", name,
			     what);
}

static bool line_due(const struct host_errors *he, const struct error_kind *k,
		     uint64_t now)
{
	return !k->last_line_ns ||
	       (k->unlogged && now - k->last_line_ns >= he->interval_ns);
}

void host_errors_record(struct host_errors *he, uint64_t ring_cookie,
			uint8_t blkif_op, int err)
{
	int op = blk_stat_op_of(blkif_op);
	struct pending_line line;
	struct disk_errors *de;
	struct error_kind *k;
	bool log = false;
	uint64_t now;

	if (op < 0)
		return;
	pthread_mutex_lock(&he->lock);
	/*
	 * Read under the lock: workers record at once, and a time read
	 * before another worker's line would lie before that line's stamp.
	 */
	now = now_ns();
	de = find_disk(he, ring_cookie);
	if (de) {
		k = kind_of(de, (unsigned int)op, -err);
		k->count++;
		k->unlogged++;
		log = line_due(he, k, now);
		if (log)
			take_line(&line, de, k, now);
	}
	pthread_mutex_unlock(&he->lock);
	if (log)
		log_line(&line);
}

/*
 * Take the next line whose interval has passed, or, with @only, the next
 * one that disk owes at all (it is going away); else lower @next_ns to
 * when one will be due.
 */
static bool take_owed(struct host_errors *he, uint64_t now,
		      const uint64_t *only, struct pending_line *line,
		      int64_t *next_ns)
{
	for (struct disk_errors *de = he->disks; de; de = de->next) {
		if (only && de->cookie != *only)
			continue;
		for (unsigned int i = 0; i < HOST_ERRORS_MAX_KINDS; i++) {
			struct error_kind *k = &de->kind[i];
			uint64_t due = k->last_line_ns + he->interval_ns;

			if (!k->unlogged)
				continue;
			if (only || now >= due) {
				take_line(line, de, k, now);
				return true;
			}
			if (*next_ns < 0 || (int64_t)(due - now) < *next_ns)
				*next_ns = (int64_t)(due - now);
		}
	}
	return false;
}

/* Log the lines owed (see take_owed()); the nanoseconds to the next, or -1. */
static int64_t log_owed(struct host_errors *he, const uint64_t *only)
{
	struct pending_line line;
	int64_t next_ns;
	bool found;

	do {
		next_ns = -1;
		pthread_mutex_lock(&he->lock);
		found = take_owed(he, now_ns(), only, &line, &next_ns);
		pthread_mutex_unlock(&he->lock);
		if (found)
			log_line(&line);
	} while (found);
	return next_ns;
}

int host_errors_log_due(struct host_errors *he)
{
	int64_t next_ns = log_owed(he, NULL);

	if (next_ns < 0)
		return -1;
	/* Rounded up, so that the poll() does not wake just before it. */
	return (int)((next_ns + 999999) / 1000000);
}

void host_errors_remove_disk(struct host_errors *he, uint64_t cookie)
{
	struct disk_errors **pp, *de = NULL;

	log_owed(he, &cookie);
	pthread_mutex_lock(&he->lock);
	for (pp = &he->disks; *pp; pp = &(*pp)->next) {
		if ((*pp)->cookie == cookie) {
			de = *pp;
			*pp = de->next;
			break;
		}
	}
	pthread_mutex_unlock(&he->lock);
	free(de);
}

unsigned int host_errors_counts(struct host_errors *he, uint64_t cookie,
				struct host_error_count *out)
{
	struct disk_errors *de;
	unsigned int n = 0;

	pthread_mutex_lock(&he->lock);
	de = find_disk(he, cookie);
	for (unsigned int i = 0; de && i < HOST_ERRORS_MAX_KINDS; i++) {
		const struct error_kind *k = &de->kind[i];

		if (k->count)
			out[n++] = (struct host_error_count){
				.op = k->op, .err = k->err, .count = k->count
			};
	}
	pthread_mutex_unlock(&he->lock);
	return n;
}

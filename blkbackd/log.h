/* SPDX-License-Identifier: MIT */
/*
 * Logging to stderr. Under systemd the journal reads the "<N>" priority
 * prefix; elsewhere messages carry the program name and a level word.
 * Messages about one disk go to the journal directly when run under
 * systemd, with the disk in structured fields (see log_disk_msg()).
 *
 * Any thread may log; each message is one write, so lines never
 * interleave.
 */
#ifndef BLKBACKD_LOG_H
#define BLKBACKD_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "blkbackd/rate.h"

/*
 * Set at startup, before any thread starts: once with a default so that
 * option errors are logged, again with the configured level.
 */
void log_init(int max_priority);

/* Change the least severe priority logged; any thread, at any time. */
void log_set_level(int max_priority);

void log_msg(int priority, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The disk a message is about. */
struct log_disk {
	uint32_t domid;
	uint32_t devid;
	const char *vdev; /* "xvda", or NULL when unknown */
};

/*
 * A message about @disk, caused by @err (a positive errno, or 0). Under
 * systemd it carries the journal fields DOMID=, VBD= (the device number),
 * VDEV= and ERRNO=, so that `journalctl DOMID=3` finds it.
 */
void log_disk_msg(int priority, const struct log_disk *disk, int err,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Would a message of @priority be logged now? */
bool log_wanted(int priority);

/*
 * A budget of lines for what a guest can make the daemon say (messages
 * about one disk): LOG_LIMIT_BURST at once, then LOG_LIMIT_PER_S a
 * second; a guest flapping its frontend cannot flood the journal. Debug
 * messages are not counted: an operator who asked for them wants all.
 * Zeroed: full. Owned by one thread.
 */
#define LOG_LIMIT_BURST 50u
#define LOG_LIMIT_PER_S 2u

struct log_limit {
	struct rate lines;
	unsigned int held; /* lines held back since the last let through */
};

/*
 * May a message of @priority, @lines long, go out at @now_ns
 * (CLOCK_MONOTONIC)? False: hold it back (counted). True: log it, after a
 * line saying how many were held back when *@held is more than 0; that
 * line is paid for too.
 */
bool log_limit_pass(struct log_limit *l, int priority, unsigned int lines,
		    uint64_t now_ns, unsigned int *held);

/* How many lines were held back and not yet told; now none. */
unsigned int log_limit_take_held(struct log_limit *l);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* BLKBACKD_LOG_H */

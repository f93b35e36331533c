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

#include <stdint.h>
#include <syslog.h>

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

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* BLKBACKD_LOG_H */

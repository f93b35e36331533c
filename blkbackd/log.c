// SPDX-License-Identifier: MIT
/*
 * stderr logging with journald priority prefixes; structured journal
 * entries for messages about a disk.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-journal.h>

#include "blkbackd/log.h"

static const char *const level_names[] = {
	[LOG_ERR] = "err",   [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

/* Changed at run time by blkbackctl log-level: read by every thread. */
static atomic_int log_max = LOG_INFO;
/* Written once by log_init() before threads exist; read-only afterwards. */
static bool log_journal;

void log_init(int max_priority)
{
	log_set_level(max_priority);
	/* systemd sets JOURNAL_STREAM when stderr is connected to journald. */
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_set_level(int max_priority)
{
	atomic_store_explicit(&log_max, max_priority, memory_order_relaxed);
}

bool log_wanted(int priority)
{
	return priority <= atomic_load_explicit(&log_max, memory_order_relaxed);
}

bool log_limit_pass(struct log_limit *l, int priority, unsigned int lines,
		    uint64_t now_ns, unsigned int *held)
{
	*held = 0;
	if (priority >= LOG_DEBUG)
		return true;
	if (!rate_take(&l->lines, LOG_LIMIT_BURST, LOG_LIMIT_PER_S,
		       lines + (l->held > 0), now_ns)) {
		l->held++;
		return false;
	}
	*held = log_limit_take_held(l);
	return true;
}

unsigned int log_limit_take_held(struct log_limit *l)
{
	unsigned int held = l->held;

	l->held = 0;
	return held;
}

/* One write per message so lines from threads never interleave. */
static void log_line(int priority, const char *line)
{
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", priority, line);
	else
		fprintf(stderr, "blkbackd: %s: %s\n", level_names[priority],
			line);
}

/* Under systemd, @line with @disk in the journal's fields; 0 when sent. */
static int log_to_journal(int priority, const char *line,
			  const struct log_disk *disk, int err)
{
	if (!log_journal)
		return -ENOTCONN;
	return sd_journal_send("MESSAGE=%s", line, "PRIORITY=%d", priority,
			       "SYSLOG_IDENTIFIER=blkbackd", "DOMID=%u",
			       disk->domid, "VBD=%u", disk->devid, "VDEV=%s",
			       disk->vdev ? disk->vdev : "", "ERRNO=%d", err,
			       NULL);
}

/* A message, about @disk (or NULL) and caused by @err. */
static void log_vmsg(int priority, const struct log_disk *disk, int err,
		     const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void log_vmsg(int priority, const struct log_disk *disk, int err,
		     const char *fmt, va_list ap)
{
	char line[1024];

	if (!log_wanted(priority))
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* Without a journal to take it, the message still reaches stderr. */
	if (disk && log_to_journal(priority, line, disk, err) == 0)
		return;
	log_line(priority, line);
}

void log_msg(int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(priority, NULL, 0, fmt, ap);
	va_end(ap);
}

void log_disk_msg(int priority, const struct log_disk *disk, int err,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(priority, disk, err, fmt, ap);
	va_end(ap);
}

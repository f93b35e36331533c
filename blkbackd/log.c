// SPDX-License-Identifier: MIT
/*
 * stderr logging with journald priority prefixes.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "blkbackd/log.h"

static const char *const level_names[] = {
	[LOG_ERR] = "err",   [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

/* Written once by log_init() before threads exist; read-only afterwards. */
static int log_max = LOG_INFO;
static bool log_journal;

void log_init(int max_priority)
{
	log_max = max_priority;
	/* systemd sets JOURNAL_STREAM when stderr is connected to journald. */
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_msg(int priority, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (priority > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per message so lines from threads never interleave. */
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", priority, line);
	else
		fprintf(stderr, "blkbackd: %s: %s\n", level_names[priority],
			line);
}

/* SPDX-License-Identifier: MIT */
/*
 * Logging to stderr. Under systemd the journal reads the "<N>" priority
 * prefix; elsewhere messages carry the program name and a level word.
 */
#ifndef BLKBACKD_LOG_H
#define BLKBACKD_LOG_H

#include <syslog.h>

/*
 * Set at startup, before any thread starts: once with a default so that
 * option errors are logged, again with the configured level.
 */
void log_init(int max_priority);

void log_msg(int priority, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* BLKBACKD_LOG_H */

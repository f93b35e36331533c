/* SPDX-License-Identifier: MIT */
/*
 * Live progress on standard error. On a terminal one line is rewritten in
 * place ('\r'); anywhere else (a log file, a pipe, a CI job) the live
 * updates are left out, so that what is kept holds whole lines only.
 * The benchmark's main process only (not its forked guests).
 */
#ifndef BENCH_PROGRESS_H
#define BENCH_PROGRESS_H

#include <stdbool.h>

/* Look once whether standard error is a terminal. */
void progress_init(void);
bool progress_live(void);

/* Show @fmt as the live line, over the previous one; nothing off a tty. */
void progress_update(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * Erase the live line, if one shows, so that the next line written to
 * standard error starts at its first column: call it before any message.
 */
void progress_clear(void);

#endif /* BENCH_PROGRESS_H */

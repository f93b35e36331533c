// SPDX-License-Identifier: MIT
#include "tools/bench/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static bool live;
static int shown; /* columns of the live line on the terminal, 0: none */

void progress_init(void)
{
	live = isatty(STDERR_FILENO);
}

bool progress_live(void)
{
	return live;
}

void progress_update(const char *fmt, ...)
{
	va_list ap;
	int len;

	if (!live)
		return;
	fputc('\r', stderr);
	va_start(ap, fmt);
	len = vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* Blank what a longer previous line leaves behind. */
	if (len >= 0 && len < shown)
		fprintf(stderr, "%*s", shown - len, "");
	shown = len > shown ? len : shown;
	fflush(stderr);
}

void progress_clear(void)
{
	if (!shown)
		return;
	fprintf(stderr, "\r%*s\r", shown, "");
	shown = 0;
}

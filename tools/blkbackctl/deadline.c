// SPDX-License-Identifier: MIT
/*
 * blkbackctl's deadlines (see deadline.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libblk/parse.h"
#include "tools/blkbackctl/deadline.h"

#define TIMEOUT_MS_MAX 3600000

static int answer_ms = DEADLINE_DEFAULT_MS;

int deadline_init(void)
{
	const char *text = getenv("BLKBACKCTL_TIMEOUT_MS");
	uint64_t ms;

	if (!text)
		return 0;
	if (blk_parse_u64(text, TIMEOUT_MS_MAX, &ms) < 0 || !ms)
		return -EINVAL;
	answer_ms = (int)ms;
	return 0;
}

int64_t deadline_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int deadline_request_ms(const char *request)
{
	size_t verb = strcspn(request, " ");

	if ((verb == 8 && strncmp(request, "snapshot", 8) == 0) ||
	    (verb == 4 && strncmp(request, "move", 4) == 0))
		return DEADLINE_LONG_MS;
	return answer_ms;
}

void deadline_text(int64_t ms, char *buf, size_t len)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%lld s", (long long)(ms / 1000));
	else
		snprintf(buf, len, "%lld ms", (long long)ms);
}

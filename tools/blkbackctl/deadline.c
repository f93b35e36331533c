// SPDX-License-Identifier: MIT
/*
 * blkbackctl's deadlines (see deadline.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "libblk/parse.h"
#include "tools/blkbackctl/deadline.h"

#define TIMEOUT_MS_MAX 3600000

static int answer_ms = DEADLINE_DEFAULT_MS;

/*
 * The xenstore stretch: its depth, and the handler's message, made before
 * the timer can fire: what is being done (two buffers, so that the one
 * the handler may read is never the one being written; "" or " reading
 * ...") and the rest.
 */
static unsigned int store_depth;
static char store_doing[2][256];
static volatile sig_atomic_t store_cur;
static char store_tail[192];

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

	if (verb == 13 && strncmp(request, "snapshot-copy", 13) == 0)
		return DEADLINE_COPY_MS;
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

/* SIGALRM: only write(2) and _exit(2), which signal handlers may call. */
static void store_expired(int sig)
{
	static const char head[] = "blkbackctl: xenstore did not answer";
	const char *doing = store_doing[store_cur];
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, head, sizeof(head) - 1);
	n = write(STDERR_FILENO, doing, strlen(doing));
	n = write(STDERR_FILENO, store_tail, strlen(store_tail));
	(void)n;
	_exit(1);
}

void deadline_store_begin(unsigned int extra_s)
{
	struct sigaction sa = { .sa_handler = store_expired };
	int64_t ms = answer_ms + (int64_t)extra_s * 1000;
	struct itimerval it = {
		.it_value = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 },
	};
	char bound[32];

	if (store_depth++)
		return;
	deadline_text(ms, bound, sizeof(bound));
	snprintf(store_tail, sizeof(store_tail),
		 " within %s; is xenstored running, or stuck? "
		 "(systemctl status xenstored; xenstore-ls /local/domain)\n",
		 bound);
	store_doing[store_cur][0] = '\0';
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

void deadline_store_doing(const char *fmt, ...)
{
	int next = !store_cur;
	va_list ap;

	store_doing[next][0] = ' ';
	va_start(ap, fmt);
	vsnprintf(store_doing[next] + 1, sizeof(store_doing[next]) - 1, fmt,
		  ap);
	va_end(ap);
	store_cur = next;
}

void deadline_store_end(void)
{
	static const struct itimerval off;

	if (store_depth && --store_depth == 0)
		setitimer(ITIMER_REAL, &off, NULL);
}

// SPDX-License-Identifier: MIT
/* Xenstore helpers for the simulated toolstack and blkfront. */
#include "tools/xensim/xenbus.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t xenbus_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int xenbus_printf(struct xs_handle *xs, xs_transaction_t t, const char *path,
		  const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	if (!xs_write(xs, t, path, buf, (unsigned int)n))
		return errno ? -errno : -EIO;
	return 0;
}

int xenbus_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *path,
		    uint64_t *out)
{
	unsigned int len;
	char *val, *end;
	unsigned long long v;

	val = xs_read(xs, t, path, &len);
	if (!val)
		return errno ? -errno : -ENOENT;
	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || end == val || *end != '\0') {
		free(val);
		return -EINVAL;
	}
	free(val);
	*out = v;
	return 0;
}

int xenbus_read_key_u64(struct xs_handle *xs, const char *dir, const char *key,
			uint64_t *out)
{
	char path[512];

	if (snprintf(path, sizeof(path), "%s/%s", dir, key) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return xenbus_read_u64(xs, XBT_NULL, path, out);
}

bool xenbus_exists(struct xs_handle *xs, const char *path)
{
	unsigned int len;
	char *val = xs_read(xs, XBT_NULL, path, &len);

	free(val);
	return val != NULL;
}

/* Drain every queued watch event without blocking. */
static void drain_watch_events(struct xs_handle *xs)
{
	char **ev;

	while ((ev = xs_check_watch(xs)))
		free(ev);
}

static int read_state(struct xs_handle *xs, const char *path)
{
	uint64_t v;

	if (xenbus_read_u64(xs, XBT_NULL, path, &v) < 0 || v > 8)
		return 0;
	return (int)v;
}

int xenbus_wait_state(struct xs_handle *xs, const char *dir,
		      unsigned int wanted_mask, int timeout_ms, int *last)
{
	char path[512], token[64];
	int64_t deadline = xenbus_now_ms() + timeout_ms;
	int state = 0, ret;

	if (snprintf(path, sizeof(path), "%s/state", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* A token unique to this wait, so nested waits do not confuse. */
	snprintf(token, sizeof(token), "xensim-wait-%p", (void *)&state);
	if (!xs_watch(xs, path, token))
		return errno ? -errno : -EIO;
	for (;;) {
		int64_t left;
		struct pollfd pfd = { .fd = xs_fileno(xs), .events = POLLIN };

		drain_watch_events(xs);
		state = read_state(xs, path);
		if (state >= 0 && (wanted_mask & XB_STATE_BIT(state))) {
			ret = state;
			break;
		}
		left = deadline - xenbus_now_ms();
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		/* Re-read at least every 200 ms in case a watch was lost. */
		if (poll(&pfd, 1, left > 200 ? 200 : (int)left) < 0 &&
		    errno != EINTR) {
			ret = -errno;
			break;
		}
	}
	xs_unwatch(xs, path, token);
	drain_watch_events(xs);
	if (last)
		*last = state;
	return ret;
}

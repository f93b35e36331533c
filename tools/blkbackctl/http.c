// SPDX-License-Identifier: MIT
/*
 * The HTTP exchange of blkbackctl metrics --http.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "tools/blkbackctl/deadline.h"
#include "tools/blkbackctl/http.h"

/* Request line and headers; Prometheus sends a few hundred bytes. */
#define REQUEST_MAX 8192

/* Read until the blank line that ends the headers; false if it never came. */
static bool read_head(int fd, char *buf, size_t len, int timeout_ms)
{
	int64_t deadline = deadline_now_ms() + timeout_ms;
	size_t got = 0;

	while (got < len - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - deadline_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return false;
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return true;
	}
	return false;
}

enum http_request http_read_request(int fd, int timeout_ms)
{
	char buf[REQUEST_MAX], method[16], target[256], version[16];

	if (!read_head(fd, buf, sizeof(buf), timeout_ms) ||
	    sscanf(buf, "%15s %255s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0)
		return HTTP_BAD_REQUEST;
	if (strcmp(method, "GET") != 0)
		return HTTP_BAD_METHOD;
	target[strcspn(target, "?")] = '\0';
	return strcmp(target, "/metrics") == 0 ? HTTP_GET_METRICS
					       : HTTP_NOT_FOUND;
}

void http_write_head(FILE *out, int status, const char *reason,
		     const char *content_type)
{
	fprintf(out,
		"HTTP/1.0 %d %s\r\nContent-Type: %s\r\n"
		"Connection: close\r\n\r\n",
		status, reason, content_type);
}

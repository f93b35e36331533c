/* SPDX-License-Identifier: MIT */
/*
 * One HTTP exchange on standard input and output, for a process started
 * per connection (systemd's Accept=yes sockets, inetd): as much HTTP/1.0
 * as Prometheus needs to scrape GET /metrics. A slow or silent client
 * holds only this process, never the daemon.
 */
#ifndef BLKBACKCTL_HTTP_H
#define BLKBACKCTL_HTTP_H

#include <stdio.h>

enum http_request {
	HTTP_GET_METRICS, /* GET /metrics (a query string is ignored) */
	HTTP_NOT_FOUND, /* GET of another path */
	HTTP_BAD_METHOD, /* not GET */
	HTTP_BAD_REQUEST, /* not HTTP, too long, or not within the timeout */
};

/* Read the request line and headers from @fd within @timeout_ms. */
enum http_request http_read_request(int fd, int timeout_ms);

/*
 * The status line and headers of a reply whose body follows, of type
 * @content_type; the connection closes after it.
 */
void http_write_head(FILE *out, int status, const char *reason,
		     const char *content_type);

#endif /* BLKBACKCTL_HTTP_H */

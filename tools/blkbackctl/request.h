/* SPDX-License-Identifier: MIT */
/*
 * One request to blkbackd's control socket: a line sent, the reply read
 * until the daemon closes, all within the request's deadline
 * (deadline_request_ms()). One thread.
 */
#ifndef BLKBACKCTL_REQUEST_H
#define BLKBACKCTL_REQUEST_H

/*
 * Send @request to the daemon at @path and return its whole reply, to be
 * freed; NULL after saying on stderr why not: out of reach, an error on
 * the socket, or no reply within the deadline (naming the socket, the
 * time waited and what to check).
 */
char *request_ask(const char *path, const char *request);

#endif /* BLKBACKCTL_REQUEST_H */

// SPDX-License-Identifier: MIT
/*
 * One request to blkbackd, bounded (see request.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "tools/blkbackctl/deadline.h"
#include "tools/blkbackctl/request.h"

#define REPLY_MAX (16u << 20)

/*
 * Connect to @path. A daemon that does not accept leaves the connection
 * in its backlog, and a full backlog makes a Unix socket's connect(2)
 * wait: for at most the socket's send timeout (socket(7), SO_SNDTIMEO),
 * then it fails with EAGAIN. Returns the descriptor, non-blocking for
 * what follows, or -1 (errno).
 */
static int connect_to(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0 &&
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    fcntl(fd, F_SETFL, O_NONBLOCK) == 0)
		return fd;
	err = errno;
	close(fd);
	errno = err == EINPROGRESS ? EAGAIN : err;
	return -1;
}

/* Wait for @events on @fd until @deadline: 1 ready, 0 passed, -errno. */
static int wait_ready(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = deadline - deadline_now_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(&p, 1, (int)left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Send all of @line; 0, -ETIMEDOUT or -errno. */
static int send_all(int fd, const char *line, size_t len, int64_t deadline)
{
	size_t sent = 0;

	while (sent < len) {
		int ret = wait_ready(fd, POLLOUT, deadline);
		ssize_t n;

		if (ret <= 0)
			return ret ?: -ETIMEDOUT;
		/* A daemon gone meanwhile is an error, not a SIGPIPE. */
		n = send(fd, line + sent, len - sent, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0)
			sent += (size_t)n;
	}
	return 0;
}

/* Read until the daemon closes; *@out: the reply. 0, -ETIMEDOUT, -errno. */
static int read_all(int fd, int64_t deadline, char **out)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);

	for (;;) {
		ssize_t n;
		int ret;

		if (buf && len + 1 == cap) {
			char *bigger = cap < REPLY_MAX ? realloc(buf, cap * 2)
						       : NULL;

			if (!bigger)
				free(buf);
			buf = bigger;
			cap *= 2;
		}
		if (!buf)
			return -ENOMEM;
		ret = wait_ready(fd, POLLIN, deadline);
		if (ret <= 0) {
			free(buf);
			return ret ?: -ETIMEDOUT;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			ret = -errno;
			free(buf);
			return ret;
		}
		if (n == 0)
			break;
		if (n > 0)
			len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static void say_no_answer(const char *path, int timeout_ms)
{
	char waited[32];

	deadline_text(timeout_ms, waited, sizeof(waited));
	fprintf(stderr,
		"blkbackctl: blkbackd did not answer on %s within %s; is "
		"blkbackd running, or stuck? systemctl status blkbackd; "
		"journalctl -u blkbackd\n",
		path, waited);
}

char *request_ask(const char *path, const char *request)
{
	int timeout_ms = deadline_request_ms(request);
	int64_t deadline = deadline_now_ms() + timeout_ms;
	size_t len = strlen(request);
	char *line = malloc(len + 2), *reply = NULL;
	int ret = -ENOMEM, fd = connect_to(path, timeout_ms);

	if (fd < 0 && errno != EAGAIN) {
		fprintf(stderr,
			"blkbackctl: cannot reach blkbackd at %s: %s (is it "
			"running, and are you root or in its "
			"control-group?)\n",
			path, strerror(errno));
		free(line);
		return NULL;
	}
	if (fd < 0) {
		ret = -ETIMEDOUT;
	} else if (line) {
		memcpy(line, request, len);
		memcpy(line + len, "\n", 2);
		ret = send_all(fd, line, len + 1, deadline);
		if (ret == 0)
			ret = read_all(fd, deadline, &reply);
	}
	if (ret == -ETIMEDOUT)
		say_no_answer(path, timeout_ms);
	else if (ret < 0)
		fprintf(stderr, "blkbackctl: talking to %s: %s\n", path,
			strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(line);
	return reply;
}

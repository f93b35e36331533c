// SPDX-License-Identifier: MIT
/*
 * Counting a backend's system calls and sleeps (tools/bench/syscount.h).
 */
#include "tools/bench/syscount.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"

#define PERF "perf"
/* How long perf may take to attach and to answer a command. */
#define ACK_TIMEOUT_MS 10000
#define STOP_GRACE_MS 5000

static void close_pipes(struct syscount *s)
{
	if (s->ctl >= 0)
		close(s->ctl);
	if (s->ack >= 0)
		close(s->ack);
	s->ctl = s->ack = -1;
}

/* Send perf one control command and wait for its "ack". */
static int command(struct syscount *s, const char *cmd)
{
	struct pollfd pfd = { .fd = s->ack, .events = POLLIN };
	char buf[16];
	size_t len = strlen(cmd);

	if (!s->perf)
		return -ENOTCONN;
	if (write(s->ctl, cmd, len) != (ssize_t)len)
		return -EIO;
	if (poll(&pfd, 1, ACK_TIMEOUT_MS) != 1 ||
	    read(s->ack, buf, sizeof(buf)) <= 0)
		return -ETIMEDOUT;
	return 0;
}

static void exec_perf(pid_t target, const char *out, int ctl, int ack)
{
	char pid[16], control[64];
	int null = open("/dev/null", O_RDWR);

	snprintf(pid, sizeof(pid), "%d", (int)target);
	snprintf(control, sizeof(control), "fd:%d,%d", ctl, ack);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
	}
	execlp(PERF, PERF, "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-D",
	       "-1", "--control", control, "-o", out, "-p", pid, (char *)NULL);
	_exit(127);
}

/* Say why @what failed for perf; returns @err. */
static int failed(char *why, size_t why_len, const char *what, int err)
{
	snprintf(why, why_len, "%s for %s: %s", what, PERF, strerror(-err));
	return err;
}

int syscount_attach(struct syscount *s, pid_t target, const char *dir,
		    char *why, size_t why_len)
{
	int ctl[2], ack[2];
	pid_t pid;
	int ret;

	memset(s, 0, sizeof(*s));
	s->ctl = s->ack = -1;
	snprintf(s->out, sizeof(s->out), "%s/syscount.%d", dir, (int)target);
	/* Close-on-exec: the guests and the daemon forked later get none. */
	if (pipe2(ctl, O_CLOEXEC) < 0)
		return failed(why, why_len, "pipe", -errno);
	if (pipe2(ack, O_CLOEXEC) < 0) {
		ret = -errno;
		close(ctl[0]);
		close(ctl[1]);
		return failed(why, why_len, "pipe", ret);
	}
	pid = cleanup_fork();
	if (pid == 0) {
		/* perf keeps its ends across exec; the others go with it. */
		fcntl(ctl[0], F_SETFD, 0);
		fcntl(ack[1], F_SETFD, 0);
		exec_perf(target, s->out, ctl[0], ack[1]);
	}
	close(ctl[0]);
	close(ack[1]);
	s->ctl = ctl[1];
	s->ack = ack[0];
	if (pid < 0) {
		ret = -errno;
		close_pipes(s);
		return failed(why, why_len, "fork", ret);
	}
	s->perf = pid;
	cleanup_add_file(s->out);
	/* A disable it answers means it attached and is ready. */
	ret = command(s, "disable\n");
	if (ret < 0) {
		snprintf(why, why_len,
			 "%s stat -e raw_syscalls:sys_enter did not start "
			 "(not installed, or no tracepoints here)",
			 PERF);
		syscount_finish(s);
	}
	return ret;
}

int syscount_enable(struct syscount *s)
{
	int ret = command(s, "enable\n");

	s->counting = ret == 0;
	return ret;
}

int syscount_disable(struct syscount *s)
{
	return command(s, "disable\n");
}

/* The count perf wrote: the first field of the line naming the event. */
static double read_count(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	double n = NAN;

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long v;

		if (!strstr(line, "raw_syscalls:sys_enter"))
			continue;
		v = strtoull(line, &end, 10);
		/* "<not counted>" and the like are not numbers. */
		if (end != line && *end == ',')
			n = (double)v;
		break;
	}
	fclose(f);
	return n;
}

double syscount_finish(struct syscount *s)
{
	double n = NAN;

	if (!s->perf)
		return NAN;
	close_pipes(s);
	/* SIGINT makes perf stat write its counts and exit. */
	if (cleanup_stop_child(s->perf, SIGINT, STOP_GRACE_MS) && s->counting)
		n = read_count(s->out);
	unlink(s->out);
	s->perf = 0;
	s->counting = false;
	return n;
}

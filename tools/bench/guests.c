// SPDX-License-Identifier: MIT
/*
 * Guests report over one pipe, a byte per event: 'R' ready (or 'E' failed
 * to set up), then 'D' done. The start barrier is a second pipe that the
 * parent closes: every guest blocked reading it wakes at the same time.
 */
#include "tools/bench/guests.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"

#define SETUP_TIMEOUT_MS (30000 + 1000 * (int)n)
#define STALL_TIMEOUT_MS 120000

struct group_run {
	unsigned int n;
	pid_t *pids;
	int status_fd; /* read end */
	int start_fd; /* write end */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void tell(int fd, char c)
{
	ssize_t r;

	do
		r = write(fd, &c, 1);
	while (r < 0 && errno == EINTR);
}

static void wait_for_start(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

static void guest_main(unsigned int guest, const struct bench_job *job,
		       bench_engine_open_fn open_engine, void *arg,
		       struct bench_guest_result *res, int status_fd,
		       int start_fd)
{
	struct bench_engine *e = NULL;
	int ret;

	ret = open_engine(guest, arg, job, &e, res->why, sizeof(res->why));
	if (ret < 0) {
		res->error = ret;
		tell(status_fd, 'E');
		_exit(1);
	}
	tell(status_fd, 'R');
	wait_for_start(start_fd);
	ret = bench_run_job(e, job, guest, res);
	tell(status_fd, 'D');
	e->ops->destroy(e);
	_exit(ret < 0 ? 1 : 0);
}

static void kill_all(struct group_run *r)
{
	for (unsigned int i = 0; i < r->n; i++)
		if (r->pids[i] > 0)
			kill(r->pids[i], SIGKILL);
}

static int spawn(struct group_run *r, const struct bench_job *job,
		 bench_engine_open_fn open_engine, void *arg,
		 struct bench_group *g)
{
	int status[2], start[2];

	if (pipe2(status, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(start, O_CLOEXEC) < 0) {
		close(status[0]);
		close(status[1]);
		return -errno;
	}
	fflush(NULL);
	for (unsigned int i = 0; i < r->n; i++) {
		pid_t pid;

		pid = cleanup_fork();
		if (pid == 0) {
			close(status[0]);
			close(start[1]);
			guest_main(i, job, open_engine, arg, &g->res[i],
				   status[1], start[0]);
		}
		if (pid < 0) {
			r->n = i;
			break;
		}
		r->pids[i] = pid;
	}
	close(status[1]);
	close(start[0]);
	r->status_fd = status[0];
	r->start_fd = start[1];
	return 0;
}

/* Read one status byte, waiting at most @ms; -ETIMEDOUT, -EPIPE at EOF. */
static int read_status(int fd, int ms, char *c)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, ms);
	ssize_t got;

	if (ret < 0)
		return errno == EINTR ? -EINTR : -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	got = read(fd, c, 1);
	if (got < 0)
		return errno == EINTR ? -EINTR : -errno;
	return got == 1 ? 0 : -EPIPE;
}

static int wait_ready(struct group_run *r, unsigned int n)
{
	double deadline = now_s() + SETUP_TIMEOUT_MS / 1000.0;
	unsigned int ready = 0;
	char c;

	while (ready < r->n) {
		int ms = (int)((deadline - now_s()) * 1000);
		int ret = read_status(r->status_fd, ms > 0 ? ms : 0, &c);

		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		if (c == 'E')
			return -EIO;
		ready++;
	}
	return r->n == n ? 0 : -EAGAIN;
}

static double progress_of(const struct bench_group *g,
			  const struct bench_job *job)
{
	uint64_t done = 0;

	for (unsigned int i = 0; i < g->n; i++)
		done += __atomic_load_n(&g->res[i].progress, __ATOMIC_RELAXED);
	return (double)done / ((double)job->total * g->n);
}

static int wait_done(struct group_run *r, const struct bench_job *job,
		     const struct bench_group_hooks *hooks,
		     const struct bench_group *g)
{
	unsigned int done = 0;
	double last_change = now_s(), last_progress = -1;
	char c;

	while (done < r->n) {
		int ret = read_status(r->status_fd, 500, &c);
		double p;

		if (ret == -EINTR)
			continue;
		if (ret == 0) {
			done++;
			continue;
		}
		if (ret != -ETIMEDOUT)
			return ret;
		p = progress_of(g, job);
		if (p != last_progress) {
			last_progress = p;
			last_change = now_s();
		} else if (now_s() - last_change > STALL_TIMEOUT_MS / 1000.0) {
			return -ETIMEDOUT;
		}
		if (hooks && hooks->progress)
			hooks->progress(hooks->arg, p, done);
	}
	return 0;
}

/* Reap every guest; -EIO if one did not exit cleanly. */
static int reap_all(struct group_run *r)
{
	int ret = 0;

	for (unsigned int i = 0; i < r->n; i++) {
		int st;

		if (r->pids[i] <= 0)
			continue;
		while (waitpid(r->pids[i], &st, 0) < 0 && errno == EINTR)
			;
		cleanup_forget_pid(r->pids[i]);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			ret = -EIO;
	}
	return ret;
}

static void first_failure(const struct bench_group *g, int ret, char *why,
			  size_t why_len)
{
	for (unsigned int i = 0; i < g->n; i++) {
		if (g->res[i].error < 0 || g->res[i].why[0]) {
			snprintf(why, why_len, "guest %u: %s", i,
				 g->res[i].why[0] ? g->res[i].why
						  : strerror(-g->res[i].error));
			return;
		}
	}
	switch (ret) {
	case -ETIMEDOUT:
		snprintf(why, why_len, "guests stopped making progress");
		break;
	case -EPIPE:
		snprintf(why, why_len, "a guest process died");
		break;
	default:
		snprintf(why, why_len, "a guest failed: %s", strerror(-ret));
	}
}

int bench_group_run(unsigned int n, const struct bench_job *job,
		    bench_engine_open_fn open_engine, void *open_arg,
		    const struct bench_group_hooks *hooks,
		    struct bench_group *g, char *why, size_t why_len)
{
	struct group_run r = { .n = n, .status_fd = -1, .start_fd = -1 };
	size_t bytes = sizeof(*g->res) * n;
	double t0;
	int ret, reaped;

	*g = (struct bench_group){ .n = n };
	g->res = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	r.pids = calloc(n, sizeof(*r.pids));
	if (g->res == MAP_FAILED || !r.pids) {
		g->res = g->res == MAP_FAILED ? NULL : g->res;
		free(r.pids);
		snprintf(why, why_len, "out of memory for %u guests", n);
		return -ENOMEM;
	}
	ret = spawn(&r, job, open_engine, open_arg, g);
	if (!ret)
		ret = wait_ready(&r, n);
	if (!ret) {
		if (hooks && hooks->started)
			hooks->started(hooks->arg);
		t0 = now_s();
		close(r.start_fd);
		r.start_fd = -1;
		ret = wait_done(&r, job, hooks, g);
		g->wall_seconds = now_s() - t0;
		if (hooks && hooks->finished)
			hooks->finished(hooks->arg);
	}
	if (ret < 0)
		kill_all(&r);
	reaped = reap_all(&r);
	if (!ret)
		ret = reaped;
	if (ret < 0)
		first_failure(g, ret, why, why_len);
	if (r.start_fd >= 0)
		close(r.start_fd);
	if (r.status_fd >= 0)
		close(r.status_fd);
	free(r.pids);
	return ret;
}

void bench_group_free(struct bench_group *g)
{
	if (g->res)
		munmap(g->res, sizeof(*g->res) * g->n);
	g->res = NULL;
}

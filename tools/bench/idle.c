// SPDX-License-Identifier: MIT
/*
 * The frontend server reports over a socket pair, a byte per event as the
 * guests do (guests.c): '.' for each frontend connected, 'R' when all are,
 * 'D' when all are closed again, or 'E' followed by the reason. The
 * benchmark tells it to close them by shutting down its writing side. Attaching
 * a thousand guests can take minutes, so the benchmark gives up only when no
 * guest connected for STALL_TIMEOUT_MS.
 */
#include "tools/bench/idle.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"
#include "tools/xensim/idle-guests.h"

#define IDLE_IMAGE_BYTES (1u << 20)
#define CONNECT_THREADS 8
/* Generous: the targets are judged from the figures, not by timeouts. */
#define HANDSHAKE_TIMEOUT_MS 120000
#define STALL_TIMEOUT_MS 180000
/* What one idle frontend holds open in the server, with some room. */
#define FDS_PER_IDLE_GUEST 12

static char **images;
static unsigned int nr_images;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Never read: sparse is enough, and a thousand of them cost no disk. */
static int make_sparse(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, IDLE_IMAGE_BYTES) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int idle_images_create(const char *workdir, unsigned int n, char *why,
		       size_t why_len)
{
	char **grown;
	int ret = 0;

	if (n <= nr_images)
		return 0;
	grown = realloc(images, n * sizeof(*images));
	if (!grown)
		return -ENOMEM;
	images = grown;
	for (; nr_images < n && !ret; nr_images++) {
		if (asprintf(&images[nr_images], "%s/idle%u.img", workdir,
			     nr_images) < 0)
			return -ENOMEM;
		ret = cleanup_add_file(images[nr_images]);
		if (!ret)
			ret = make_sparse(images[nr_images]);
		if (ret < 0)
			snprintf(why, why_len, "cannot make %s: %s",
				 images[nr_images], strerror(-ret));
	}
	return ret;
}

void idle_images_free(void)
{
	for (unsigned int i = 0; i < nr_images; i++)
		free(images[i]);
	free(images);
	images = NULL;
	nr_images = 0;
}

static void tell(int fd, char c, const char *why)
{
	ssize_t r = write(fd, &c, 1);

	if (r == 1 && why)
		r = write(fd, why, strlen(why));
	(void)r;
}

static void tell_connected(void *arg)
{
	tell(*(int *)arg, '.', NULL);
}

/* The server: connect them all, hold them until told, close them all. */
static void server_main(const struct idle_set *set, int fd)
{
	struct idle_guests_config cfg = { .domids = set->domids,
					  .n = set->n,
					  .devid = XENHOST_DEVID,
					  .nr_threads = CONNECT_THREADS,
					  .timeout_ms = HANDSHAKE_TIMEOUT_MS,
					  .connected = tell_connected,
					  .arg = &fd };
	struct idle_guests *ig;
	char why[256] = "", c;

	if (idle_guests_connect(&cfg, &ig, why, sizeof(why)) < 0) {
		tell(fd, 'E', why);
		_exit(1);
	}
	tell(fd, 'R', NULL);
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		; /* EOF: the benchmark wants them closed */
	if (idle_guests_close(ig, why, sizeof(why)) < 0) {
		tell(fd, 'E', why);
		_exit(1);
	}
	tell(fd, 'D', NULL);
	_exit(0);
}

/*
 * One socket pair: the server reports on its end, and the benchmark shuts
 * down the writing side of its own to say "close them now".
 */
static int spawn_server(struct idle_set *set)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = cleanup_fork();
	if (pid == 0) {
		close(sv[0]);
		server_main(set, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -errno;
	}
	set->server = pid;
	set->fd = sv[0];
	return 0;
}

/*
 * Wait for @want from the server, as long as it keeps making progress;
 * 'E' brings its reason into @why.
 */
static int await(struct idle_set *set, char want, char *why, size_t why_len)
{
	struct pollfd pfd = { .fd = set->fd, .events = POLLIN };
	double deadline = now_s() + STALL_TIMEOUT_MS / 1000.0;
	char c = 0;
	ssize_t got;

	for (;;) {
		int left = (int)((deadline - now_s()) * 1000);
		int ret = poll(&pfd, 1, left > 0 ? left : 0);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			snprintf(why, why_len,
				 "the idle-guest server made no progress in "
				 "%d s",
				 STALL_TIMEOUT_MS / 1000);
			return -ETIMEDOUT;
		}
		got = read(set->fd, &c, 1);
		if ((got < 0 && errno == EINTR) || (got == 1 && c == '.')) {
			deadline = now_s() + STALL_TIMEOUT_MS / 1000.0;
			continue;
		}
		break;
	}
	if (got == 1 && c == want)
		return 0;
	if (got == 1 && c == 'E') {
		got = read(set->fd, why, why_len - 1);
		why[got > 0 ? got : 0] = 0;
		return -EIO;
	}
	snprintf(why, why_len, "the idle-guest server died");
	return -EPIPE;
}

static void reap_server(struct idle_set *set)
{
	if (set->server <= 0)
		return;
	cleanup_stop_child(set->server, SIGKILL, 5000);
	set->server = 0;
}

static void close_socket(struct idle_set *set)
{
	if (set->fd >= 0)
		close(set->fd);
	set->fd = -1;
}

static pid_t xenstored_pid(const struct xenhost *h)
{
	char path[PATH_MAX + 32];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/xenstored.pid", h->dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

static void measure(const struct xenhost *h, const struct idle_set *set,
		    struct idle_figures *fig)
{
	pid_t xs = xenstored_pid(h);

	proc_usage_of(h->daemon, &fig->daemon);
	proc_usage_of(set->server, &fig->server);
	fig->have_xenstored = xs > 0 && proc_usage_of(xs, &fig->xenstored) == 0;
}

static int fail(struct idle_figures *fig, int ret, const char *why)
{
	fig->error = ret;
	/* A long reason is cut to fit the note. */
	snprintf(fig->note, sizeof(fig->note), "%.*s",
		 (int)sizeof(fig->note) - 1, why);
	return ret;
}

int idle_attach(struct xenhost *h, struct idle_set *set,
		struct idle_figures *fig)
{
	unsigned int n = fig->guests;
	char why[512] = "";
	double t0;
	int ret;

	*set = (struct idle_set){ .n = n, .fd = -1 };
	fig->detach_seconds = NAN;
	if (n > nr_images)
		return fail(fig, -EINVAL, "not enough idle images");
	if (proc_usage_of(h->daemon, &fig->daemon_before) < 0)
		return fail(fig, -ESRCH, "the daemon is not running");
	set->domids = calloc(n, sizeof(*set->domids));
	if (!set->domids)
		return fail(fig, -ENOMEM, "out of memory");
	t0 = now_s();
	ret = xenhost_plug(h, n, images, IDLE_GUEST_PAGES, set->domids, why,
			   sizeof(why));
	if (ret < 0) {
		free(set->domids);
		set->domids = NULL;
		return fail(fig, ret, why);
	}
	fig->plug_seconds = now_s() - t0;
	ret = spawn_server(set);
	if (!ret)
		ret = await(set, 'R', why, sizeof(why));
	else
		snprintf(why, sizeof(why), "cannot start the server: %s",
			 strerror(-ret));
	fig->connect_seconds = now_s() - t0 - fig->plug_seconds;
	fig->attach_seconds = now_s() - t0;
	if (ret < 0) {
		char ignored[64];

		fail(fig, ret, why);
		fprintf(stderr, "blkback-bench: %s; unplugging them\n", why);
		reap_server(set);
		close_socket(set);
		xenhost_unplug(h, n, set->domids, ignored, sizeof(ignored));
		free(set->domids);
		set->domids = NULL;
		return ret;
	}
	measure(h, set, fig);
	return 0;
}

int idle_detach(struct xenhost *h, struct idle_set *set,
		struct idle_figures *fig)
{
	char why[512] = "", why2[512] = "";
	double t0 = now_s();
	int ret, ret2;

	if (!set->domids)
		return 0;
	shutdown(set->fd, SHUT_WR);
	ret = await(set, 'D', why, sizeof(why));
	reap_server(set);
	close_socket(set);
	ret2 = xenhost_unplug(h, set->n, set->domids, why2, sizeof(why2));
	fig->detach_seconds = now_s() - t0;
	free(set->domids);
	set->domids = NULL;
	if (ret < 0 || ret2 < 0)
		return fail(fig, ret < 0 ? ret : ret2, ret < 0 ? why : why2);
	return 0;
}

void idle_abandon(struct idle_set *set)
{
	reap_server(set);
	close_socket(set);
	free(set->domids);
	set->domids = NULL;
}

void idle_raise_nofile(unsigned int idle_guests)
{
	unsigned long need =
		(unsigned long)idle_guests * FDS_PER_IDLE_GUEST + 256;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		unsigned long was = (unsigned long)rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			fprintf(stderr,
				"blkback-bench: raised the open-file limit "
				"from %lu to %lu (the daemon, xenstored and "
				"the idle-guest server inherit it)\n",
				was, (unsigned long)rl.rlim_cur);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
		fprintf(stderr,
			"blkback-bench: warning: the open-file limit %lu may "
			"be too low for %u idle guests (about %lu needed); "
			"raise the hard limit (ulimit -Hn)\n",
			(unsigned long)rl.rlim_cur, idle_guests, need);
}

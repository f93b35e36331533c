// SPDX-License-Identifier: MIT
#include "tools/bench/xenhost.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xenstore.h>

#include "tools/bench/cleanup.h"
#include "tools/bench/cpu.h"
#include "tools/xensim/toolstack.h"

#define MAX_DAEMON_ARGS 32
#define READY_TIMEOUT_MS 30000
/* The daemon detaches every disk and, under ASan, checks for leaks. */
#define STOP_GRACE_MS 30000

/* Copy the tail of @path into @buf as one line. */
static void log_tail(const char *path, char *buf, size_t len)
{
	char tail[600];
	ssize_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = 0;
	if (fd < 0)
		return;
	off_t end = lseek(fd, 0, SEEK_END);

	if (end > 0) {
		off_t from = end > (off_t)sizeof(tail) - 1
				     ? end - (off_t)sizeof(tail) + 1
				     : 0;
		got = pread(fd, tail, sizeof(tail) - 1, from);
	}
	close(fd);
	if (got <= 0)
		return;
	tail[got] = 0;
	for (char *p = tail; *p; p++)
		if (*p == '\n')
			*p = *(p + 1) ? '|' : 0;
	/* Keep the end: the last lines say why. */
	size_t n = strlen(tail), skip = n >= len ? n - len + 1 : 0;

	memcpy(buf, tail + skip, n - skip + 1);
}

/* Source DIR/env: lines of the form  export KEY='VALUE'. */
static int import_env(const char *dir)
{
	char path[PATH_MAX + 8], line[PATH_MAX + 64];
	int imported = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/env", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *key = line, *eq, *val, *end;

		if (!strncmp(key, "export ", 7))
			key += 7;
		eq = strchr(key, '=');
		if (!eq)
			continue;
		*eq = 0;
		val = eq + 1;
		end = val + strcspn(val, "\n");
		*end = 0;
		if (*val == '\'' && end > val + 1 && end[-1] == '\'') {
			val++;
			end[-1] = 0;
		}
		if (setenv(key, val, 1) < 0) {
			fclose(f);
			return -errno;
		}
		imported++;
	}
	fclose(f);
	return imported && getenv("XENSIM_DIR") && getenv("XENSIM_LIBDIR")
		       ? 0
		       : -EINVAL;
}

/* A socket for the daemon's sd_notify (NOTIFY_SOCKET), as systemd has. */
static int open_notify_socket(struct xenhost *h, const char *workdir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(h->notify_path, sizeof(h->notify_path), "%s/notify", workdir);
	if (strlen(h->notify_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, h->notify_path);
	h->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (h->notify_fd < 0)
		return -errno;
	if (bind(h->notify_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return cleanup_add_file(h->notify_path);
}

/* Wait for READY=1; -ETIMEDOUT, or -ESRCH when the daemon died first. */
static int wait_ready(struct xenhost *h, char *why, size_t why_len)
{
	struct pollfd pfd = { .fd = h->notify_fd, .events = POLLIN };
	char msg[512];

	for (int waited = 0; waited < READY_TIMEOUT_MS; waited += 100) {
		ssize_t got;

		if (xenhost_check_daemon(h, why, why_len) < 0)
			return -ESRCH;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		got = recv(h->notify_fd, msg, sizeof(msg) - 1, 0);
		if (got <= 0)
			continue;
		msg[got] = 0;
		if (strstr(msg, "READY=1")) {
			close(h->notify_fd);
			h->notify_fd = -1;
			return 0;
		}
	}
	snprintf(why, why_len, "blkbackd did not report ready in %d s",
		 READY_TIMEOUT_MS / 1000);
	return -ETIMEDOUT;
}

static int spawn_daemon(struct xenhost *h, const char *blkbackd,
			char *const *extra)
{
	char *argv[MAX_DAEMON_ARGS + 4] = { (char *)blkbackd, "--log-level",
					    "notice" };
	unsigned int argc = 3;
	pid_t pid;

	for (; extra && *extra && argc < MAX_DAEMON_ARGS + 3; extra++)
		argv[argc++] = *extra;
	fflush(NULL);
	cleanup_block_signals();
	pid = fork();
	if (pid == 0) {
		const char *libdir = getenv("XENSIM_LIBDIR");
		int fd = open(h->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		cleanup_in_child();
		cleanup_unblock_signals();
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		setenv("LD_LIBRARY_PATH", libdir ? libdir : "", 1);
		setenv("NOTIFY_SOCKET", h->notify_path, 1);
		execv(blkbackd, argv);
		fprintf(stderr, "exec %s: %s\n", blkbackd, strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		cleanup_add_pid(pid, true);
	cleanup_unblock_signals();
	if (pid < 0)
		return -errno;
	h->daemon = pid;
	return 0;
}

int xenhost_start(struct xenhost *h, const char *script, const char *blkbackd,
		  char *const *daemon_args, const char *workdir, char *why,
		  size_t why_len)
{
	char *argv[4];
	char start_log[PATH_MAX + 16];
	int ret;

	memset(h, 0, sizeof(*h));
	h->next_domid = 1;
	h->notify_fd = -1;
	if (access(blkbackd, X_OK) < 0) {
		snprintf(why, why_len,
			 "no daemon at %s (build it, or pass --blkbackd PATH)",
			 blkbackd);
		return -ENOENT;
	}
	if (access(script, X_OK) < 0) {
		snprintf(why, why_len,
			 "no xensim-host at %s (build tools/xensim, or pass "
			 "--xensim-host PATH)",
			 script);
		return -ENOENT;
	}
	snprintf(h->script, sizeof(h->script), "%s", script);
	snprintf(h->dir, sizeof(h->dir), "%s/host", workdir);
	snprintf(h->log, sizeof(h->log), "%s/blkbackd.log", workdir);
	snprintf(start_log, sizeof(start_log), "%s/xensim-host.log", workdir);
	cleanup_add_file(h->log);
	cleanup_add_file(start_log);
	cleanup_set_stopper(CLEANUP_HOST, h->script, h->dir);
	argv[0] = h->script;
	argv[1] = "start";
	argv[2] = h->dir;
	argv[3] = NULL;
	ret = cleanup_run_helper(argv, start_log);
	if (ret != 0) {
		char tail[300];

		log_tail(start_log, tail, sizeof(tail));
		snprintf(why, why_len, "cannot start the simulated host: %s",
			 tail);
		return -EIO;
	}
	ret = import_env(h->dir);
	if (ret < 0) {
		snprintf(why, why_len, "bad %s/env: %s", h->dir,
			 strerror(-ret));
		return ret;
	}
	ret = open_notify_socket(h, workdir);
	if (ret < 0) {
		snprintf(why, why_len, "cannot make %s: %s", h->notify_path,
			 strerror(-ret));
		return ret;
	}
	ret = spawn_daemon(h, blkbackd, daemon_args);
	if (ret < 0) {
		snprintf(why, why_len, "cannot start %s: %s", blkbackd,
			 strerror(-ret));
		return ret;
	}
	h->xs = xs_open(0);
	if (!h->xs) {
		snprintf(why, why_len, "cannot connect to xenstored: %s",
			 strerror(errno));
		return -EIO;
	}
	return wait_ready(h, why, why_len);
}

int xenhost_check_daemon(struct xenhost *h, char *why, size_t why_len)
{
	char tail[400];
	int st;

	if (h->daemon <= 0)
		return -ESRCH;
	if (waitpid(h->daemon, &st, WNOHANG) == 0)
		return 0;
	cleanup_forget_pid(h->daemon);
	h->daemon = 0;
	log_tail(h->log, tail, sizeof(tail));
	snprintf(why, why_len, "blkbackd exited: %s", tail);
	return -ESRCH;
}

int xenhost_daemon_cpu(const struct xenhost *h, double *seconds)
{
	return h->daemon > 0 ? cpu_process_seconds(h->daemon, seconds) : -ESRCH;
}

static int plug_one(struct xenhost *h, uint32_t domid, const char *image,
		    uint32_t pages, char *why, size_t why_len)
{
	const char *simdir = getenv("XENSIM_DIR");
	struct toolstack_disk disk = { .domid = domid,
				       .vdev = "xvda",
				       .target = image };
	struct toolstack_error err = { .what = "" };
	uint32_t mem_mb = (pages * 4096u + (1u << 20) - 1) >> 20;
	int ret;

	ret = toolstack_domain_create(h->xs, simdir, domid, mem_mb + 1);
	if (ret < 0) {
		snprintf(why, why_len, "cannot create domain %u: %s", domid,
			 strerror(-ret));
		return ret;
	}
	ret = toolstack_disk_attach(h->xs, &disk, &err);
	if (ret < 0) {
		char tail[300];

		log_tail(h->log, tail, sizeof(tail));
		snprintf(why, why_len,
			 "cannot plug %s into domain %u: %s (%s); blkbackd "
			 "log: %s",
			 image, domid, err.what, strerror(-ret), tail);
		toolstack_domain_destroy(h->xs, simdir, domid, true);
	}
	return ret;
}

int xenhost_plug(struct xenhost *h, unsigned int n, char *const *images,
		 uint32_t pages, uint32_t *domids, char *why, size_t why_len)
{
	for (unsigned int i = 0; i < n; i++) {
		int ret;

		if (h->next_domid >= 0x7ff0) {
			snprintf(why, why_len, "out of domain ids");
			ret = -ENOSPC;
		} else {
			domids[i] = h->next_domid++;
			ret = plug_one(h, domids[i], images[i], pages, why,
				       why_len);
		}
		if (ret < 0) {
			char ignored[64];

			xenhost_unplug(h, i, domids, ignored, sizeof(ignored));
			return ret;
		}
	}
	return 0;
}

int xenhost_unplug(struct xenhost *h, unsigned int n, const uint32_t *domids,
		   char *why, size_t why_len)
{
	const char *simdir = getenv("XENSIM_DIR");
	int first = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct toolstack_disk disk = { .domid = domids[i],
					       .vdev = "xvda" };
		struct toolstack_error err = { .what = "" };
		int ret = toolstack_disk_detach(h->xs, &disk, false, &err);

		if (ret < 0 && !first) {
			snprintf(why, why_len, "unplugging domain %u: %s (%s)",
				 domids[i], err.what, strerror(-ret));
			first = ret;
		}
		ret = toolstack_domain_destroy(h->xs, simdir, domids[i], true);
		if (ret < 0 && !first) {
			snprintf(why, why_len, "destroying domain %u: %s",
				 domids[i], strerror(-ret));
			first = ret;
		}
	}
	return first;
}

void xenhost_stop(struct xenhost *h)
{
	if (h->notify_fd >= 0)
		close(h->notify_fd);
	h->notify_fd = -1;
	if (h->xs)
		xs_close(h->xs);
	h->xs = NULL;
	if (h->daemon > 0) {
		if (!cleanup_stop_child(h->daemon, SIGTERM, STOP_GRACE_MS))
			fprintf(stderr,
				"blkback-bench: the daemon did not exit "
				"%d s after SIGTERM; killed it\n",
				STOP_GRACE_MS / 1000);
		h->daemon = 0;
	}
	if (h->dir[0]) {
		char *argv[] = { h->script, "stop", h->dir, NULL };

		cleanup_run_helper(argv, "/dev/null");
		cleanup_forget_stopper(CLEANUP_HOST);
	}
}

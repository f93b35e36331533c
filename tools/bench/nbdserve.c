// SPDX-License-Identifier: MIT
#include "tools/bench/nbdserve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"

#define NBDKIT "nbdkit"
#define START_WAIT_MS 10000
#define POLL_MS 20
#define STOP_GRACE_MS 10000

int nbdserve_available(char *why, size_t why_len)
{
	const char *path = getenv("PATH");
	char candidate[4096];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)n, p,
			 NBDKIT);
		if (access(candidate, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	snprintf(why, why_len, "no nbdkit (install nbdkit)");
	return -ENOENT;
}

/* Does the socket at @path accept a connection yet? */
static bool accepting(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int nbdserve_start(struct nbd_server *srv, const char *image, char *why,
		   size_t why_len)
{
	char *sock = srv->sock;
	pid_t pid;

	srv->pid = 0;
	if ((size_t)snprintf(srv->sock, sizeof(srv->sock), "%s.sock", image) >=
	    sizeof(srv->sock)) {
		snprintf(why, why_len, "%s: path too long for a socket", image);
		return -ENAMETOOLONG;
	}
	unlink(sock);
	/* Gone with the work directory however the run ends. */
	cleanup_add_file(sock);
	snprintf(srv->uri, sizeof(srv->uri), "nbd+unix:///?socket=%s", sock);
	pid = cleanup_fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execlp(NBDKIT, NBDKIT, "--foreground", "--unix", sock, "file",
		       image, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		snprintf(why, why_len, "fork: %s", strerror(errno));
		return -errno;
	}
	srv->pid = pid;
	for (int waited = 0; waited < START_WAIT_MS; waited += POLL_MS) {
		if (accepting(sock))
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			cleanup_forget_pid(pid);
			srv->pid = 0;
			break;
		}
		sleep_ms(POLL_MS);
	}
	snprintf(why, why_len, "nbdkit did not serve %s on %s", image, sock);
	nbdserve_stop(srv);
	return -ETIMEDOUT;
}

void nbdserve_stop(struct nbd_server *srv)
{
	if (!srv->pid)
		return;
	if (!cleanup_stop_child(srv->pid, SIGTERM, STOP_GRACE_MS))
		fprintf(stderr,
			"blkback-bench: nbdkit serving %s did not exit "
			"on SIGTERM; killed it\n",
			srv->sock);
	srv->pid = 0;
	unlink(srv->sock);
}

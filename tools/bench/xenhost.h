/* SPDX-License-Identifier: MIT */
/*
 * The BLKBACKD arm's host: a simulated Xen host (xensim-host: the real
 * xenstored under the xensim shim), the blkbackd binary running against
 * it with the fake grant-table and event-channel libraries, and the
 * simulated toolstack that creates guest domains and plugs their disks the
 * way xl does.
 */
#ifndef BENCH_XENHOST_H
#define BENCH_XENHOST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xs_handle;

struct xenhost {
	char script[PATH_MAX]; /* xensim-host */
	char dir[PATH_MAX]; /* the host's state directory */
	char log[PATH_MAX]; /* the daemon's stderr */
	pid_t daemon;
	int notify_fd; /* the daemon's sd_notify socket, -1 once it is ready */
	char notify_path[PATH_MAX];
	struct xs_handle *xs;
	uint32_t next_domid;
};

#define XENHOST_DEVID 51712u /* xvda */

/*
 * Start the host in @workdir/host and @blkbackd with @daemon_args (NULL
 * terminated, may be NULL), and wait until the daemon says READY=1 over
 * sd_notify, so that what is measured next starts from a daemon that has
 * finished starting. Exports XENSIM_DIR and XENSTORED_PATH to this
 * process, so that forked guests find the host.
 */
int xenhost_start(struct xenhost *h, const char *script, const char *blkbackd,
		  char *const *daemon_args, const char *workdir, char *why,
		  size_t why_len);
/*
 * Create @n domains with @pages of memory each and plug @images[i] into
 * domain @domids[i] as xvda. On failure, what was created is undone.
 */
int xenhost_plug(struct xenhost *h, unsigned int n, char *const *images,
		 uint32_t pages, uint32_t *domids, char *why, size_t why_len);
/* Unplug and destroy; returns the first error. */
int xenhost_unplug(struct xenhost *h, unsigned int n, const uint32_t *domids,
		   char *why, size_t why_len);
/* 0 while the daemon runs; else -ESRCH and its log's tail in @why. */
int xenhost_check_daemon(struct xenhost *h, char *why, size_t why_len);
int xenhost_daemon_cpu(const struct xenhost *h, double *seconds);
void xenhost_stop(struct xenhost *h);

#endif /* BENCH_XENHOST_H */

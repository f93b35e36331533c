// SPDX-License-Identifier: MIT
/*
 * idle-hold N FIRST_DOMID DIR: N simulated domains from FIRST_DOMID on,
 * each with a sparse 1 MiB image DIR/idle-DOMID.img of its own (made
 * here) plugged as xvda and an idle frontend connected
 * (tools/xensim/idle-guests.h), all in this one process; "ready" on
 * stdout once all are connected, then held until stdin ends, then closed,
 * unplugged and destroyed. For tests that need many idle guests cheaply
 * (tests/metrics-many-guests.sh). Needs XENSIM_DIR and XENSTORED_PATH.
 * Exits 0, or 1 after saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenstore.h>

#include "libblk/parse.h"
#include "tools/xensim/idle-guests.h"
#include "tools/xensim/toolstack.h"

#define MEM_MB 2 /* IDLE_GUEST_PAGES and some room */
#define CONNECT_THREADS 8
#define HANDSHAKE_TIMEOUT_MS 60000

static void unplug(struct xs_handle *xs, const char *simdir,
		   const uint32_t *domids, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct toolstack_disk disk = { .domid = domids[i],
					       .vdev = "xvda" };
		struct toolstack_error err = { .what = "" };

		toolstack_disk_detach(xs, &disk, false, &err);
		toolstack_domain_destroy(xs, simdir, domids[i], true);
	}
}

static int plug(struct xs_handle *xs, const char *simdir, uint32_t domid,
		const char *dir)
{
	char image[PATH_MAX];
	struct toolstack_disk disk = { .domid = domid,
				       .vdev = "xvda",
				       .target = image };
	struct toolstack_error err = { .what = "" };
	int fd, ret;

	/* A guest's own: the daemon lets one VM at a time write an image. */
	snprintf(image, sizeof(image), "%s/idle-%u.img", dir, domid);
	fd = open(image, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 1 << 20) < 0) {
		fprintf(stderr, "idle-hold: cannot make %s: %s\n", image,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	ret = toolstack_domain_create(xs, simdir, domid, MEM_MB);

	if (ret < 0) {
		fprintf(stderr, "idle-hold: cannot create domain %u: %s\n",
			domid, strerror(-ret));
		return ret;
	}
	ret = toolstack_disk_attach(xs, &disk, &err);
	if (ret < 0) {
		fprintf(stderr, "idle-hold: cannot plug domain %u: %s (%s)\n",
			domid, err.what, strerror(-ret));
		toolstack_domain_destroy(xs, simdir, domid, true);
	}
	return ret;
}

int main(int argc, char **argv)
{
	const char *simdir = getenv("XENSIM_DIR");
	struct idle_guests *ig = NULL;
	struct xs_handle *xs;
	uint64_t n, first;
	uint32_t *domids;
	unsigned int plugged = 0;
	char why[512] = "", c;
	int ret = 0;

	if (argc != 4 || blk_parse_u64(argv[1], 4000, &n) < 0 || !n ||
	    blk_parse_u64(argv[2], 0x7fef - n, &first) < 0 || !first) {
		fprintf(stderr, "usage: idle-hold N FIRST_DOMID DIR\n");
		return 2;
	}
	xs = simdir ? xs_open(0) : NULL;
	domids = calloc(n, sizeof(*domids));
	if (!xs || !domids) {
		fprintf(stderr, "idle-hold: no simulated host (XENSIM_DIR, "
				"XENSTORED_PATH) or no memory\n");
		return 1;
	}
	for (; plugged < n && ret == 0; plugged++) {
		domids[plugged] = (uint32_t)(first + plugged);
		ret = plug(xs, simdir, domids[plugged], argv[3]);
	}
	if (ret < 0)
		plugged--;
	if (ret == 0) {
		struct idle_guests_config cfg = {
			.domids = domids,
			.n = (unsigned int)n,
			.devid = 51712,
			.nr_threads = CONNECT_THREADS,
			.timeout_ms = HANDSHAKE_TIMEOUT_MS,
		};

		ret = idle_guests_connect(&cfg, &ig, why, sizeof(why));
		if (ret < 0)
			fprintf(stderr, "idle-hold: %s\n", why);
	}
	if (ret == 0) {
		printf("ready\n");
		fflush(stdout);
		while (read(STDIN_FILENO, &c, 1) > 0 || errno == EINTR)
			errno = 0;
		ret = idle_guests_close(ig, why, sizeof(why));
		if (ret < 0)
			fprintf(stderr, "idle-hold: %s\n", why);
	}
	unplug(xs, simdir, domids, plugged);
	free(domids);
	xs_close(xs);
	return ret < 0 ? 1 : 0;
}

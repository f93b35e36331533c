// SPDX-License-Identifier: MIT
/*
 * The daemon around its device code (tests/vbd-rig.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "blkbackd/host-errors.h"
#include "blkbackd/opener.h"
#include "blkbackd/vbd.h"
#include "tests/fake-worker.h"
#include "tests/vbd-rig.h"

static void must(bool ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "vbd-rig: %s failed\n", what);
	abort();
}

void rig_start(struct daemon *d, struct xs_handle *xs, const char *root,
	       unsigned int workers)
{
	*d = (struct daemon){ .xs = xs, .nr_roots = 1 };
	must(options_set_defaults(&d->opts) == 0, "options_set_defaults");
	snprintf(d->be_root[0], sizeof(d->be_root[0]), "%s", root);
	must(xs_watch(xs, root, VBD_TOKEN_BACKEND), "watching the root");
	must(xs_watch(xs, "@releaseDomain", VBD_TOKEN_RELEASE), "watching "
								"@releaseDomai"
								"n");
	blk_budget_init(&d->mappings, (long)d->opts.max_mapped_grants);
	d->closed_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	must(d->closed_fd >= 0, "eventfd");
	fake_workers_start(d, workers);
	must(host_errors_create(&d->host_errors, 60) == 0, "host_errors");
	must(opener_new(&d->opener) == 0, "opener_new");
}

void rig_stop(struct daemon *d)
{
	fake_workers_hold(d, false);
	vbd_release_all(d);
	opener_free(d->opener);
	host_errors_destroy(d->host_errors);
	fake_workers_stop(d);
	close(d->closed_fd);
	options_release(&d->opts);
}

bool rig_rings_closed(struct daemon *d)
{
	uint64_t n;

	if (read(d->closed_fd, &n, sizeof(n)) != sizeof(n))
		return false;
	vbd_rings_closed(d);
	return true;
}

void rig_put(struct xs_handle *xs, const char *dir, const char *key,
	     const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	must(xs_write(xs, XBT_NULL, path, val, (unsigned int)strlen(val)),
	     path);
}

void rig_plug(struct xs_handle *xs, const char *be, const char *fe,
	      uint32_t domid, const char *params, const char *mode)
{
	char id[16];
	const char *dev = strrchr(fe, '/') + 1;

	snprintf(id, sizeof(id), "%u", (unsigned int)domid);
	rig_put(xs, fe, "backend", be);
	rig_put(xs, fe, "backend-id", "0");
	rig_put(xs, fe, "virtual-device", dev);
	rig_put(xs, fe, "device-type", "disk");
	rig_put(xs, fe, "state", "1");
	rig_put(xs, be, "frontend", fe);
	rig_put(xs, be, "frontend-id", id);
	rig_put(xs, be, "params", params);
	rig_put(xs, be, "mode", mode);
	rig_put(xs, be, "dev", "xvda");
	rig_put(xs, be, "type", "phy");
	rig_put(xs, be, "device-type", "disk");
	rig_put(xs, be, "removable", "0");
	rig_put(xs, be, "online", "1");
	rig_put(xs, be, "state", "1");
}

void rig_frontend_rings(struct xs_handle *xs, const char *fe, int state)
{
	char s[16];

	snprintf(s, sizeof(s), "%d", state);
	rig_put(xs, fe, "ring-ref", "8");
	rig_put(xs, fe, "event-channel", "9");
	rig_put(xs, fe, "protocol", "x86_64-abi");
	rig_put(xs, fe, "feature-persistent", "1");
	rig_put(xs, fe, "state", s);
}

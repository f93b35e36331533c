// SPDX-License-Identifier: MIT
/*
 * The device state machine (blkbackd/vbd.c) as a unit: xenstore events
 * in, nodes and calls to the workers out, against the real xenstored that
 * tests/vbd-states.sh starts.
 *
 * What runs is the daemon's own code for devices (blkbackd/vbd*.c, the
 * opener, host errors, limits) on a struct daemon of the test's, with
 * real images in a scratch directory. The one seam is the workers:
 * tests/fake-worker.c is linked instead of blkbackd/worker.c, and keeps
 * the rings it is handed without mapping them, writing every call down.
 * The test plays the toolstack and the frontend by writing their nodes,
 * and the main loop by handing the daemon's watch events to
 * vbd_watch_fired() and the closed rings to vbd_rings_closed() until
 * nothing moves (settle()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <xenstore.h>

#include "blkbackd/log.h"
#include "blkbackd/vbd.h"
#include "tests/check.h"
#include "tests/fake-worker.h"
#include "tests/vbd-rig.h"
#include "tools/xensim/toolstack.h"

#define DOMID 5
#define ROOT "/local/domain/0/backend/vbd"
#define BE ROOT "/5/51712"
#define FE "/local/domain/5/device/vbd/51712"
#define SYNC "/test-vbd-sync"
#define SYNC_TOKEN "sync"
#define DISK_BYTES (1 << 20)

static struct daemon d;
static struct xs_handle *ts; /* the toolstack's and the frontend's */
static char image[300];

/* ---- xenstore as the toolstack and the frontend write it ---- */

/* @dir/@key's value (freed by the next call), or NULL when absent. */
static const char *get(const char *dir, const char *key)
{
	static char *last;
	char path[256];

	free(last);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	last = xs_read(ts, XBT_NULL, path, NULL);
	return last;
}

/* @dir/@key as a number, or -1 when absent. */
static long get_num(const char *dir, const char *key)
{
	const char *v = get(dir, key);

	return v ? strtol(v, NULL, 10) : -1;
}

static bool has(const char *dir, const char *key)
{
	return get(dir, key) != NULL;
}

static void rm(const char *path)
{
	xs_rm(ts, XBT_NULL, path);
}

/*
 * The daemon's main loop until nothing moves: every watch event up to a
 * write of the test's own (xenstored delivers a connection's events in
 * order), then the rings the workers closed, then the devices looked at;
 * again while that made news (the daemon's writes fire its watches too).
 */
static void settle(void)
{
	static unsigned int seq;

	for (int round = 0; round < 50; round++) {
		char want[64];
		bool news = false;

		snprintf(want, sizeof(want), "%s/%u", SYNC, ++seq);
		REQUIRE(xs_write(ts, XBT_NULL, want, "", 0));
		for (;;) {
			unsigned int num;
			char **ev = xs_read_watch(d.xs, &num);
			bool mine;

			REQUIRE(ev != NULL);
			mine = strcmp(ev[XS_WATCH_PATH], want) == 0;
			if (strcmp(ev[XS_WATCH_TOKEN], SYNC_TOKEN) != 0) {
				vbd_watch_fired(&d, ev[XS_WATCH_PATH],
						ev[XS_WATCH_TOKEN]);
				news = true;
			}
			free(ev);
			if (mine)
				break;
		}
		if (rig_rings_closed(&d))
			news = true;
		vbd_reconcile_stale(&d);
		if (!news)
			return;
	}
	fprintf(stderr, "test-vbd: the device never settled\n");
	exit(EXIT_FAILURE);
}

/* The toolstack plugs the disk @params, as libxl does without a script. */
static void plug(const char *params)
{
	rig_plug(ts, BE, FE, DOMID, params, "w");
}

/* The toolstack removes both directories, as libxl's unplug ends. */
static void unplug(void)
{
	rm(BE);
	rm(FE);
}

static void frontend_rings(int state)
{
	rig_frontend_rings(ts, FE, state);
}

static void frontend_state(int state)
{
	char s[16];

	snprintf(s, sizeof(s), "%d", state);
	rig_put(ts, FE, "state", s);
}

static long be_state(void)
{
	return get_num(BE, "state");
}

/* ---- the cases ---- */

/* Each case starts with no device and leaves none. */
static void clean_slate(void)
{
	unplug();
	settle();
	REQUIRE_EQ(d.nr_vbds, 0);
	REQUIRE_EQ(fake_live_rings(&d), 0);
	REQUIRE_EQ(fake_closing_rings(&d), 0);
}

/*
 * InitWait with the features offered, then Connected with the disk's
 * properties once the frontend published its ring, which is handed to a
 * worker as the frontend named it.
 */
static void test_normal_path(void)
{
	unsigned int connects = fake_calls(FAKE_CONNECT);
	const struct blk_conn_params *p;

	plug(image);
	settle();
	CHECK_EQ(d.nr_vbds, 1);
	CHECK_EQ(be_state(), XenbusStateInitWait);
	CHECK_EQ(get_num(BE, "feature-flush-cache"), 1);
	CHECK_EQ(get_num(BE, "feature-barrier"), 1);
	CHECK_EQ(get_num(BE, "feature-persistent"), 1);
	CHECK(has(BE, "max-ring-page-order"));
	CHECK_EQ(get_num(BE, "multi-queue-max-queues"), 2); /* one a worker */
	CHECK(get(BE, "physical-device-path") &&
	      strcmp(get(BE, "physical-device-path"), image) == 0);
	CHECK(!has(BE, "error"));
	/* Nothing to connect before the frontend says where its ring is. */
	CHECK(!has(BE, "sectors"));
	CHECK_EQ(fake_calls(FAKE_CONNECT), connects);

	frontend_rings(XenbusStateInitialised);
	settle();
	CHECK_EQ(be_state(), XenbusStateConnected);
	CHECK_EQ(get_num(BE, "sectors"), DISK_BYTES / 512);
	CHECK_EQ(get_num(BE, "info"), 0);
	CHECK_EQ(get_num(BE, "sector-size"), 512);
	CHECK(has(BE, "physical-sector-size"));
	CHECK_EQ(fake_calls(FAKE_CONNECT), connects + 1);
	CHECK_EQ(fake_live_rings(&d), 1);
	p = fake_last_connect();
	CHECK_EQ(p->domid, DOMID);
	CHECK_EQ(p->ring_refs[0], 8);
	CHECK_EQ(p->remote_port, 9);
	CHECK_EQ(p->ring_order, 0);
	CHECK(p->persistent);
	CHECK_EQ(p->limits.sectors, DISK_BYTES / 512);
	CHECK(!p->limits.readonly);

	/* Connected after Initialised is no news: nothing connects again. */
	frontend_state(XenbusStateConnected);
	settle();
	CHECK_EQ(be_state(), XenbusStateConnected);
	CHECK_EQ(fake_calls(FAKE_CONNECT), connects + 1);
	CHECK_EQ(fake_live_rings(&d), 1);
}

/*
 * The frontend closes: the backend goes Closing and its ring is released,
 * and it says Closed (the guest's pages are free) only once the worker
 * has closed the ring.
 */
static void test_frontend_closes(void)
{
	unsigned int disconnects = fake_calls(FAKE_DISCONNECT);

	test_normal_path();
	fake_workers_hold(&d, true);
	frontend_state(XenbusStateClosing);
	settle();
	CHECK_EQ(be_state(), XenbusStateClosing);
	CHECK_EQ(fake_calls(FAKE_DISCONNECT), disconnects + 1);
	CHECK_EQ(fake_live_rings(&d), 0);
	CHECK_EQ(fake_closing_rings(&d), 1);

	frontend_state(XenbusStateClosed);
	settle();
	CHECK_EQ(be_state(), XenbusStateClosing); /* its ring still closes */

	fake_workers_hold(&d, false);
	settle();
	CHECK_EQ(be_state(), XenbusStateClosed);
	CHECK_EQ(fake_closing_rings(&d), 0);
	/* Online: the device stays, for the frontend to start over. */
	CHECK_EQ(d.nr_vbds, 1);
	clean_slate();
}

/*
 * The toolstack removes the backend directory under a connected guest:
 * the device is forgotten, its ring released and its image let go (a
 * second device can lock it writable).
 */
static void test_toolstack_removes(void)
{
	unsigned int disconnects = fake_calls(FAKE_DISCONNECT);

	test_normal_path();
	rm(BE);
	settle();
	CHECK_EQ(d.nr_vbds, 0);
	CHECK_EQ(fake_calls(FAKE_DISCONNECT), disconnects + 1);
	CHECK_EQ(fake_live_rings(&d), 0);
	CHECK_EQ(fake_closing_rings(&d), 0);
	/* The lock went with it: the same image opens again. */
	rm(FE);
	test_normal_path();
	clean_slate();
}

/*
 * An image that cannot be opened: the error node names the device and
 * the image, the backend goes Closing without a script (InitWait with
 * one, for the script to hand the error to xl), and nothing connects.
 */
static void test_open_fails(void)
{
	unsigned int connects = fake_calls(FAKE_CONNECT);
	const char *err;

	plug("/nonexistent/disk.img");
	settle();
	CHECK_EQ(be_state(), XenbusStateClosing);
	err = get(BE, "error");
	CHECK(err && strstr(err, "/nonexistent/disk.img") &&
	      strstr(err, "xvda of domain 5"));
	frontend_rings(XenbusStateInitialised);
	settle();
	CHECK_EQ(be_state(), XenbusStateClosing);
	CHECK_EQ(fake_calls(FAKE_CONNECT), connects);
	clean_slate();

	plug("/nonexistent/disk.img");
	rig_put(ts, BE, "script", "/etc/xen/scripts/block");
	settle();
	/* In dom0 with a script: InitWait, the error waiting for it. */
	CHECK_EQ(be_state(), XenbusStateInitWait);
	CHECK(has(BE, "error"));
	rig_put(ts, BE, "hotplug-status", "error");
	settle();
	CHECK_EQ(be_state(), XenbusStateClosing);
	CHECK_EQ(fake_calls(FAKE_CONNECT), connects);
	clean_slate();
}

/*
 * A frontend that jumps ahead: Connected, its ring published, before the
 * backend even offered the disk. It is offered and connected once.
 */
static void test_out_of_order(void)
{
	unsigned int connects = fake_calls(FAKE_CONNECT);

	plug(image);
	frontend_rings(XenbusStateConnected);
	settle();
	CHECK_EQ(be_state(), XenbusStateConnected);
	CHECK_EQ(fake_calls(FAKE_CONNECT), connects + 1);
	CHECK_EQ(fake_live_rings(&d), 1);

	/* A state no frontend can be in closes the device. */
	frontend_state(9);
	settle();
	CHECK_EQ(be_state(), XenbusStateClosed);
	CHECK_EQ(fake_live_rings(&d), 0);
	clean_slate();
}

/*
 * The frontend reconnects twice (a driver reload, kexec): each time its
 * old ring is released before the new one connects, and one ring is live
 * at the end; then twice within one batch of events, where only where it
 * ends matters.
 */
static void test_reconnects(void)
{
	unsigned int connects = fake_calls(FAKE_CONNECT);
	unsigned int disconnects = fake_calls(FAKE_DISCONNECT);

	test_normal_path();
	connects++;
	for (int i = 0; i < 2; i++) {
		frontend_state(XenbusStateClosing);
		settle();
		frontend_state(XenbusStateClosed);
		settle();
		CHECK_EQ(be_state(), XenbusStateClosed);
		CHECK_EQ(fake_live_rings(&d), 0);
		frontend_state(XenbusStateInitialising);
		settle();
		CHECK_EQ(be_state(), XenbusStateInitWait);
		frontend_rings(XenbusStateInitialised);
		settle();
		CHECK_EQ(be_state(), XenbusStateConnected);
		CHECK_EQ(fake_live_rings(&d), 1);
	}
	CHECK_EQ(fake_calls(FAKE_CONNECT), connects + 2);
	CHECK_EQ(fake_calls(FAKE_DISCONNECT), disconnects + 2);

	for (int i = 0; i < 2; i++) {
		frontend_state(XenbusStateClosing);
		frontend_state(XenbusStateClosed);
		frontend_state(XenbusStateInitialising);
		frontend_rings(XenbusStateInitialised);
	}
	settle();
	CHECK_EQ(be_state(), XenbusStateConnected);
	CHECK_EQ(fake_live_rings(&d), 1);
	CHECK_EQ(fake_closing_rings(&d), 0);
	CHECK(fake_calls(FAKE_CONNECT) - fake_calls(FAKE_DISCONNECT) ==
	      connects - disconnects);
	clean_slate();
}

/*
 * The image grows under a connected guest: the new size reaches the
 * ring's worker and the sectors node; an image that did not change
 * changes nothing.
 */
static void test_resize(void)
{
	unsigned int resizes;

	test_normal_path();
	resizes = fake_calls(FAKE_RESIZE);
	CHECK_EQ(vbd_resize_one(&d, DOMID, 51712), 0);
	CHECK_EQ(fake_calls(FAKE_RESIZE), resizes);

	REQUIRE(truncate(image, 2 * DISK_BYTES) == 0);
	CHECK_EQ(vbd_resize_one(&d, DOMID, 51712), 0);
	CHECK_EQ(fake_calls(FAKE_RESIZE), resizes + 1);
	CHECK_EQ(fake_last_resize(), 2 * DISK_BYTES / 512);
	CHECK_EQ(get_num(BE, "sectors"), 2 * DISK_BYTES / 512);
	CHECK_EQ(vbd_resize_one(&d, DOMID, 4242), -ENOENT);
	clean_slate();
	REQUIRE(truncate(image, DISK_BYTES) == 0);
}

/*
 * A malformed frontend node in the backend directory fails the device
 * once: the failure's own write fires the backend watch, which must not
 * fail it again, and again (settle() gives up on a device that never
 * settles).
 */
static void test_frontend_path_malformed(void)
{
	const char *err;

	plug(image);
	rig_put(ts, BE, "frontend", "relative/path");
	settle();
	CHECK_EQ(be_state(), XenbusStateClosing);
	err = get(BE, "error");
	CHECK(err && strstr(err, "frontend node"));
	CHECK_EQ(fake_calls(FAKE_CONNECT), fake_calls(FAKE_DISCONNECT));
	clean_slate();
}

/*
 * A device fails while its ring still closes (slow storage), and the
 * toolstack removes its directory (libxl does after 10 s) and plugs the
 * disk again: once the ring closed, the new directory is a new device,
 * offered without the old one's failure.
 */
static void test_replugged_while_closing(void)
{
	test_normal_path();
	fake_workers_hold(&d, true);
	vbd_ring_broken(&d, fake_ring_cookie(&d, 0));
	settle();
	CHECK_EQ(be_state(), XenbusStateClosing);
	CHECK(has(BE, "error"));
	unplug();
	settle();
	plug(image);
	settle();
	CHECK_EQ(fake_closing_rings(&d), 1);
	fake_workers_hold(&d, false);
	settle();
	CHECK_EQ(fake_closing_rings(&d), 0);
	CHECK_EQ(be_state(), XenbusStateInitWait);
	CHECK(!has(BE, "error"));
	frontend_rings(XenbusStateInitialised);
	settle();
	CHECK_EQ(be_state(), XenbusStateConnected);
	CHECK_EQ(fake_live_rings(&d), 1);
	clean_slate();
}

/* ---- the daemon around it ---- */

int main(void)
{
	const char *simdir = getenv("XENSIM_DIR");
	const char *dir;
	int fd;

	if (!getenv("XENSTORED_PATH") || !simdir) {
		fprintf(stderr, "test-vbd: run by tests/vbd-states.sh, which "
				"starts xenstored\n");
		return 99;
	}
	log_init(LOG_INFO);
	dir = check_make_dir("test-vbd");
	snprintf(image, sizeof(image), "%s/disk.img", dir);
	fd = open(image, O_CREAT | O_RDWR, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, DISK_BYTES) == 0);
	close(fd);

	ts = xs_open(0);
	REQUIRE(ts != NULL);
	REQUIRE(toolstack_domain_create(ts, simdir, DOMID, 64) == 0);
	d.xs = xs_open(0);
	REQUIRE(d.xs != NULL);
	rig_start(&d, d.xs, ROOT, 2);
	REQUIRE(xs_watch(d.xs, SYNC, SYNC_TOKEN));
	settle();

	test_normal_path();
	clean_slate();
	test_frontend_closes();
	test_toolstack_removes();
	test_open_fails();
	test_out_of_order();
	test_reconnects();
	test_resize();
	test_frontend_path_malformed();
	test_replugged_while_closing();

	rig_stop(&d);
	xs_close(d.xs);
	toolstack_domain_destroy(ts, simdir, DOMID, true);
	xs_close(ts);
	return check_done("test-vbd");
}

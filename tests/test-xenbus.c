// SPDX-License-Identifier: MIT
/*
 * The xenstore module's readers and parsers (libblk/xenbus.h) against the
 * real xenstored that tests/xenbus-nodes.sh starts: what a guest writes
 * into its frontend directory and what the toolstack writes into the
 * backend's, hostile values included. A refusal must name the node at
 * fault, since that name reaches the operator.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#include "libblk/xenbus.h"
#include "tests/check.h"

#define FE "/test/fe"
#define BE "/test/be"

static struct xs_handle *xs;

/* Write @dir/@key with @len bytes of @val (NUL bytes included). */
static void put_bytes(const char *dir, const char *key, const char *val,
		      unsigned int len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	REQUIRE(xs_write(xs, XBT_NULL, path, val, len));
}

static void put(const char *dir, const char *key, const char *val)
{
	put_bytes(dir, key, val, (unsigned int)strlen(val));
}

static void del(const char *dir, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	REQUIRE(xs_rm(xs, XBT_NULL, path));
}

struct node {
	const char *key, *val;
};

static void put_all(const char *dir, const struct node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(dir, nodes[i].key, nodes[i].val);
}

#define PUT_ALL(dir, nodes) \
	put_all(dir, nodes, sizeof(nodes) / sizeof(nodes[0]))

/* An empty directory @dir. */
static void reset(const char *dir)
{
	xs_rm(xs, XBT_NULL, dir);
	REQUIRE(xs_mkdir(xs, XBT_NULL, dir));
}

/* ---- the frontend's nodes ---- */

static const struct blk_backend_features offer = {
	.persistent = true,
	.max_indirect_segments = 256,
	.max_ring_order = 4,
	.max_queues = 4,
};

/* A valid one-queue, one-page frontend, as Linux blkfront writes it. */
static void frontend_valid(void)
{
	reset(FE);
	put(FE, "ring-ref", "8");
	put(FE, "event-channel", "9");
	put(FE, "protocol", "x86_64-abi");
	put(FE, "feature-persistent", "1");
}

static char what[256];

static int read_fe(struct blk_frontend *out)
{
	what[0] = '\0';
	return blk_xenbus_read_frontend(xs, FE, &offer, out, what,
					sizeof(what));
}

/* The read fails with @err and names @dir/@key. */
static void fe_refused(const char *key, int err, int line)
{
	struct blk_frontend f;
	char want[256];
	int ret = read_fe(&f);

	snprintf(want, sizeof(want), "%s/%s", FE, key);
	if (ret != err || strcmp(what, want) != 0) {
		fprintf(stderr,
			"%s:%d: FAIL: %s: got %d naming '%s', want %d "
			"naming '%s'\n",
			__FILE__, line, key, ret, what, err, want);
		check_failures++;
	}
}

#define FE_REFUSED(key, err) fe_refused(key, err, __LINE__)

/* Each of @vals written to @key in turn is refused as -EINVAL. */
static void fe_refuses_each(const char *key, const char *const *vals, size_t n,
			    int line)
{
	for (size_t i = 0; i < n; i++) {
		put(FE, key, vals[i]);
		fe_refused(key, -EINVAL, line);
	}
}

/* Without @key the read fails naming it; with @val there it succeeds. */
static void fe_needs(const char *key, const char *val, struct blk_frontend *f,
		     int line)
{
	fe_refused(key, -ENOENT, line);
	put(FE, key, val);
	REQUIRE_EQ(read_fe(f), 0);
}

#define FE_NEEDS(key, val, f) fe_needs(key, val, f, __LINE__)

#define FE_REFUSES_EACH(key, vals) \
	fe_refuses_each(key, vals, sizeof(vals) / sizeof(vals[0]), __LINE__)

static void test_frontend_valid(void)
{
	struct blk_frontend f;

	frontend_valid();
	REQUIRE_EQ(read_fe(&f), 0);
	CHECK_EQ(f.nr_queues, 1);
	CHECK_EQ(f.ring_order, 0);
	CHECK_EQ(f.abi, BLKIF_ABI_X86_64);
	CHECK(f.persistent);
	CHECK(!f.large_sectors);
	CHECK_EQ(f.queue[0].ring_refs[0], 8);
	CHECK_EQ(f.queue[0].event_channel, 9);

	/* No protocol node: the x86_32 layout, as Linux assumes. */
	del(FE, "protocol");
	REQUIRE_EQ(read_fe(&f), 0);
	CHECK_EQ(f.abi, BLKIF_ABI_X86_32);
}

static void test_frontend_ring_order(void)
{
	/* 5 is one beyond the offer; the last is 2^64 + 1. */
	static const char *const bad[] = { "99", "5", "18446744073709551617" };
	static const struct node order2[] = { { "ring-page-order", "2" },
					      { "ring-ref0", "10" },
					      { "ring-ref1", "11" },
					      { "ring-ref2", "12" } };
	struct blk_frontend f;

	frontend_valid();
	FE_REFUSES_EACH("ring-page-order", bad);

	/* Order 2 needs ring-ref0..3; the last one missing is named. */
	PUT_ALL(FE, order2);
	FE_NEEDS("ring-ref3", "13", &f);
	CHECK_EQ(f.ring_order, 2);
	CHECK_EQ(f.queue[0].ring_refs[0], 10);
	CHECK_EQ(f.queue[0].ring_refs[3], 13);
}

static void test_frontend_queues(void)
{
	/* 2^32 + 1, one beyond the offer, none. */
	static const char *const bad[] = { "4294967297", "5", "0" };
	static const struct node two_queues[] = {
		{ "multi-queue-num-queues", "2" },
		{ "queue-0/ring-ref", "20" },
		{ "queue-0/event-channel", "21" },
		{ "queue-1/ring-ref", "22" },
	};
	struct blk_frontend f;

	frontend_valid();
	FE_REFUSES_EACH("multi-queue-num-queues", bad);

	/* Two queues: each one's keys in its own directory. */
	PUT_ALL(FE, two_queues);
	FE_NEEDS("queue-1/event-channel", "23", &f);
	CHECK_EQ(f.nr_queues, 2);
	CHECK_EQ(f.queue[0].ring_refs[0], 20);
	CHECK_EQ(f.queue[1].ring_refs[0], 22);
	CHECK_EQ(f.queue[1].event_channel, 23);
}

static void test_frontend_numbers(void)
{
	static const char *const junk[] = { "-1",  "+8", " 8", "8 ",
					    "0x8", "",	 "8a", "4294967296" };
	struct blk_frontend f;

	frontend_valid();
	/*
	 * The largest 32-bit port is a number like any other here: no port
	 * that high exists, and binding it fails with its own message.
	 */
	put(FE, "event-channel", "4294967295");
	REQUIRE_EQ(read_fe(&f), 0);
	CHECK(f.queue[0].event_channel == UINT32_MAX);

	FE_REFUSES_EACH("event-channel", junk);
	put(FE, "event-channel", "9");

	/* A NUL byte hides the rest from a C-string parser. */
	put_bytes(FE, "ring-ref", "8\0junk", 6);
	FE_REFUSED("ring-ref", -EINVAL);
	del(FE, "ring-ref");
	FE_NEEDS("ring-ref", "8", &f);
}

static void test_frontend_protocol(void)
{
	static const char *const bad[] = { "x86_65-abi", "x86_64-abi ",
					   "X86_64-ABI", "", "arm-abi" };

	frontend_valid();
	FE_REFUSES_EACH("protocol", bad);
	put_bytes(FE, "protocol", "x86_64-abi\0", 11);
	FE_REFUSED("protocol", -EINVAL);
}

/* Features the backend did not offer, or junk, are not taken. */
static void test_frontend_features(void)
{
	struct blk_backend_features no_persistent = offer;
	struct blk_frontend f;

	frontend_valid();
	no_persistent.persistent = false;
	REQUIRE_EQ(blk_xenbus_read_frontend(xs, FE, &no_persistent, &f, what,
					    sizeof(what)),
		   0);
	CHECK(!f.persistent);
	put(FE, "feature-persistent", "2");
	put(FE, "feature-large-sector-size", "yes");
	REQUIRE_EQ(read_fe(&f), 0);
	CHECK(!f.persistent);
	CHECK(!f.large_sectors);
	put(FE, "feature-large-sector-size", "1");
	REQUIRE_EQ(read_fe(&f), 0);
	CHECK(f.large_sectors);
}

/* ---- the toolstack's nodes ---- */

static void backend_valid(void)
{
	reset(BE);
	put(BE, "params", "/srv/xen/vm1.img");
	put(BE, "mode", "w");
}

static void test_backend_config(void)
{
	struct blk_vbd_config c;
	const char *bad;

	backend_valid();
	REQUIRE_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), 0);
	CHECK(strcmp(c.path, "/srv/xen/vm1.img") == 0);
	CHECK(!c.readonly && !c.cdrom && !c.removable);
	CHECK(c.discard); /* discard-enable absent */
	blk_vbd_config_free(&c);

	put(BE, "params", "file:/srv/img");
	put(BE, "mode", "r");
	put(BE, "discard-enable", "0");
	REQUIRE_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), 0);
	CHECK(strcmp(c.params, "file:/srv/img") == 0);
	CHECK(strcmp(c.path, "/srv/img") == 0);
	CHECK(c.readonly);
	CHECK(!c.discard);
	blk_vbd_config_free(&c);

	/* A cdrom is read-only whatever the mode says. */
	put(BE, "mode", "w");
	put(BE, "device-type", "cdrom");
	put(BE, "removable", "1");
	REQUIRE_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), 0);
	CHECK(c.readonly && c.cdrom && c.removable);
	blk_vbd_config_free(&c);

	put(BE, "device-type", "disk");
	put(BE, "removable", "yes");
	REQUIRE_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), 0);
	CHECK(!c.readonly && !c.cdrom && !c.removable);
	blk_vbd_config_free(&c);
}

static void test_backend_config_refused(void)
{
	static const char *const bad_modes[] = { "x", "", "rw", "R" };
	struct blk_vbd_config c;
	const char *bad;

	backend_valid();
	for (size_t i = 0; i < sizeof(bad_modes) / sizeof(bad_modes[0]); i++) {
		put(BE, "mode", bad_modes[i]);
		bad = NULL;
		CHECK_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), -EINVAL);
		CHECK(bad && strcmp(bad, "mode") == 0);
	}
	put_bytes(BE, "mode", "r\0", 2);
	CHECK_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), -EINVAL);
	CHECK(bad && strcmp(bad, "mode") == 0);
	del(BE, "mode"); /* absent: writable */
	REQUIRE_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), 0);
	CHECK(!c.readonly);
	blk_vbd_config_free(&c);

	/* A VHD image is reported before anything else is read. */
	put(BE, "params", "vhd:/srv/xen/vm1.vhd");
	put(BE, "mode", "x");
	REQUIRE_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), 0);
	CHECK(c.vhd);
	CHECK(strcmp(c.path, "/srv/xen/vm1.vhd") == 0);
	blk_vbd_config_free(&c);
	put(BE, "params", "aio:/srv/xen/vm1.img");
	REQUIRE_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), -EINVAL);
	CHECK(!blk_xenbus_params_vhd("aio:/a.vhd"));

	del(BE, "params");
	bad = NULL;
	CHECK_EQ(blk_xenbus_read_vbd_config(xs, BE, &c, &bad), -ENOENT);
	CHECK(bad && strcmp(bad, "params") == 0);
}

static void test_image_path(void)
{
	CHECK(strcmp(blk_xenbus_image_path("aio:/a"), "/a") == 0);
	CHECK(strcmp(blk_xenbus_image_path("file:/a"), "/a") == 0);
	CHECK(strcmp(blk_xenbus_image_path("/a"), "/a") == 0);
	/* One prefix only; others are the target's own. */
	CHECK(strcmp(blk_xenbus_image_path("file:aio:/a"), "aio:/a") == 0);
	CHECK(strcmp(blk_xenbus_image_path("phy:/a"), "phy:/a") == 0);
	CHECK(strcmp(blk_xenbus_image_path("nbd://h/e"), "nbd://h/e") == 0);
}

static void test_hotplug(void)
{
	reset(BE);
	CHECK_EQ(blk_xenbus_hotplug_state(xs, BE), BLK_HOTPLUG_CONNECTED);
	put(BE, "script", "");
	CHECK(!blk_xenbus_has_script(xs, BE));
	CHECK_EQ(blk_xenbus_hotplug_state(xs, BE), BLK_HOTPLUG_CONNECTED);
	put(BE, "script", "/etc/xen/scripts/blkbackd");
	CHECK(blk_xenbus_has_script(xs, BE));
	CHECK_EQ(blk_xenbus_hotplug_state(xs, BE), BLK_HOTPLUG_PENDING);
	put(BE, "hotplug-status", "connected");
	CHECK_EQ(blk_xenbus_hotplug_state(xs, BE), BLK_HOTPLUG_CONNECTED);
	put(BE, "hotplug-status", "error");
	CHECK_EQ(blk_xenbus_hotplug_state(xs, BE), BLK_HOTPLUG_FAILED);
	put(BE, "hotplug-status", "connected!");
	CHECK_EQ(blk_xenbus_hotplug_state(xs, BE), BLK_HOTPLUG_PENDING);
}

static void test_frontend_path(void)
{
	char fe[32];

	reset(BE);
	CHECK_EQ(blk_xenbus_read_frontend_path(xs, BE, fe, sizeof(fe)),
		 -ENOENT);
	put(BE, "frontend", "/local/domain/5/device/vbd/768");
	REQUIRE_EQ(blk_xenbus_read_frontend_path(xs, BE, fe, sizeof(fe)), 0);
	CHECK(strcmp(fe, "/local/domain/5/device/vbd/768") == 0);
	put(BE, "frontend", "local/domain/5/device/vbd/768");
	CHECK_EQ(blk_xenbus_read_frontend_path(xs, BE, fe, sizeof(fe)),
		 -EINVAL);
	put(BE, "frontend", "/local/domain/5/device/vbd/51712"); /* 32 + NUL */
	CHECK_EQ(blk_xenbus_read_frontend_path(xs, BE, fe, sizeof(fe)),
		 -EINVAL);
}

/* The backend's own writes outside the handshake's transactions. */
static void test_backend_writes(void)
{
	char *s;

	reset(BE);
	REQUIRE_EQ(blk_xenbus_write_image_path(xs, BE, "/srv/xen/vm1.img"), 0);
	REQUIRE_EQ(xenbus_read_str(xs, BE, "physical-device-path", &s), 0);
	CHECK(strcmp(s, "/srv/xen/vm1.img") == 0);
	free(s);

	put(BE, "error", "an earlier failure");
	blk_xenbus_clear_error(xs, BE);
	CHECK_EQ(xenbus_read_str(xs, BE, "error", &s), -ENOENT);
	blk_xenbus_clear_error(xs, BE); /* absent: nothing happens */
	CHECK(xenbus_exists(xs, BE "/physical-device-path"));
}

static void test_online(void)
{
	reset(BE);
	CHECK(!blk_xenbus_online(xs, BE));
	put(BE, "online", "1");
	CHECK(blk_xenbus_online(xs, BE));
	put(BE, "online", "0");
	CHECK(!blk_xenbus_online(xs, BE));
	put(BE, "online", "2");
	CHECK(!blk_xenbus_online(xs, BE));
	put_bytes(BE, "online", "1\0", 2);
	CHECK(!blk_xenbus_online(xs, BE));
}

static void test_parse_id(void)
{
	const char *end;
	uint32_t id = 7;

	REQUIRE_EQ(blk_xenbus_parse_id("51712", &end, &id), 0);
	CHECK_EQ(id, 51712);
	CHECK_EQ(*end, '\0');
	REQUIRE_EQ(blk_xenbus_parse_id("5/51712", &end, &id), 0);
	CHECK_EQ(id, 5);
	CHECK(strcmp(end, "/51712") == 0);
	REQUIRE_EQ(blk_xenbus_parse_id("4294967295", &end, &id), 0);
	CHECK(id == UINT32_MAX);
	id = 7;
	CHECK_EQ(blk_xenbus_parse_id("4294967296", &end, &id), -EINVAL);
	CHECK_EQ(blk_xenbus_parse_id("51712x", &end, &id), -EINVAL);
	CHECK_EQ(blk_xenbus_parse_id("", &end, &id), -EINVAL);
	CHECK_EQ(blk_xenbus_parse_id("-1", &end, &id), -EINVAL);
	CHECK_EQ(blk_xenbus_parse_id("/5", &end, &id), -EINVAL);
	CHECK_EQ(id, 7);
}

int main(void)
{
	if (!getenv("XENSTORED_PATH")) {
		fprintf(stderr, "test-xenbus: run by tests/xenbus-nodes.sh, "
				"which starts xenstored\n");
		return 99;
	}
	xs = xs_open(0);
	REQUIRE(xs != NULL);

	test_frontend_valid();
	test_frontend_ring_order();
	test_frontend_queues();
	test_frontend_numbers();
	test_frontend_protocol();
	test_frontend_features();
	test_backend_config();
	test_backend_config_refused();
	test_image_path();
	test_hotplug();
	test_frontend_path();
	test_online();
	test_backend_writes();
	test_parse_id();

	xs_close(xs);
	return check_done("test-xenbus");
}

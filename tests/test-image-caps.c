// SPDX-License-Identifier: MIT
/*
 * What each kind of store declares it can do (libblk/backend.h's enum
 * blk_cap), which the daemon decides by: before an open
 * (blk_image_caps_of()) and on an open image (img->caps), which a closed
 * or failed image no longer has.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "libblk/backend-null.h"
#include "libblk/image.h"
#include "tests/check.h"

static void test_kinds(void)
{
	unsigned int nbd = blk_image_caps_of("nbd://localhost/export");
	unsigned int rbd = blk_image_caps_of("rbd:pool/image");
	unsigned int null = blk_image_caps_of("null:1M");
	unsigned int file = blk_image_caps_of("/var/lib/xen/images/a.img");

	/* An export: remote, reconnecting, kept apart by the daemon. */
	CHECK(nbd & BLK_CAP_REMOTE_OPEN);
	CHECK(nbd & BLK_CAP_RECONNECT);
	CHECK(nbd & BLK_CAP_STORES);
	CHECK(!(nbd & (BLK_CAP_LOCK | BLK_CAP_MOVE | BLK_CAP_LOCAL)));
	/* RBD: remote and locked, its rings free to move. */
	CHECK(rbd & BLK_CAP_REMOTE_OPEN);
	CHECK(rbd & BLK_CAP_LOCK);
	CHECK(rbd & BLK_CAP_MOVE);
	CHECK(rbd & BLK_CAP_RESIZE);
	CHECK(!(rbd & (BLK_CAP_RECONNECT | BLK_CAP_LOCAL)));
	/* null: keeps nothing, moves anywhere. */
	CHECK_EQ(null, BLK_CAP_MOVE);
	/* A file: local, locked, resizable, opened without waiting. */
	CHECK(file & BLK_CAP_LOCAL);
	CHECK(file & BLK_CAP_LOCK);
	CHECK(file & BLK_CAP_RESIZE);
	CHECK(file & BLK_CAP_MOVE);
	CHECK(!(file & (BLK_CAP_REMOTE_OPEN | BLK_CAP_RECONNECT)));
}

static void test_open_image(const char *dir)
{
	struct blk_image img;
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/disk.img", dir);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, 1 << 20) == 0);
	close(fd);

	REQUIRE(blk_image_open(&img, path, false, BLK_CACHE_WRITEBACK, NULL) ==
		0);
	CHECK_EQ(img.caps, BLK_FILE_CAPS);
	blk_image_close(&img);
	CHECK_EQ(img.caps, 0);

	REQUIRE(blk_image_open(&img, "null:1M", false, BLK_CACHE_NONE, NULL) ==
		0);
	CHECK_EQ(img.caps, BLK_NULL_CAPS);
	blk_image_close(&img);

	/* A failed open has nothing to offer. */
	snprintf(path, sizeof(path), "%s/missing.img", dir);
	CHECK(blk_image_open(&img, path, false, BLK_CACHE_NONE, NULL) < 0);
	CHECK_EQ(img.caps, 0);
}

int main(void)
{
	const char *dir = check_make_dir("test-image-caps");

	test_kinds();
	test_open_image(dir);
	return check_done("test-image-caps");
}

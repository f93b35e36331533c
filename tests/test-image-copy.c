// SPDX-License-Identifier: MIT
/*
 * Copying an image into a new one (libblk/image-copy.h), on files in a
 * directory of a real filesystem (/var/tmp, or $BLKBACKD_XATTR_DIR: the
 * moved-to mark is a user extended attribute, which some filesystems do
 * not keep):
 *
 *  - the target is made with the source's size and mode, holding no data,
 *    and opened locked; a second one of that name is -EEXIST, a relative
 *    path -EINVAL, an NBD or null source -EOPNOTSUPP;
 *  - ranges copied in pieces give the source's bytes, and its holes stay
 *    holes; a range written into the target before and a hole in the
 *    source now reads as zeros after another copy; misaligned or too long
 *    ranges are refused;
 *  - flush, then the mark: its attribute names the target, and opening the
 *    source again, writable or not, is -ESTALE with the message that
 *    names the target and the fix; removing the mark lets it open again;
 *  - the mark set by path, as a restarted daemon does, while the image's
 *    lock is held; a mark already there is left as it is;
 *  - the target is removed, and a second removal is -ENOENT;
 *  - a move in miniature: a writer thread writes and discards a source
 *    as a guest would, marking a dirty map (libblk/dirty.h) after each,
 *    while passes copy what the map holds; after the writer stops and a
 *    last pass, the target is the source, byte for byte.
 *
 * With the arguments `rbd CEPH_CONF` (tests/image-copy-rbd.sh, which
 * starts a cluster), the same for RBD images in its pool "rbd": a file
 * copied into a new image, that image into another (then marked, and
 * refused with the rbd command that removes the mark), and that one into
 * a file again, its unwritten ranges holes there.
 *
 * With `blockdev DEVICE` (tests/image-copy-blockdev.sh, which makes a loop
 * device of IMAGE_BYTES with data where make_source() puts it): the device
 * copied into a file byte for byte, its zeros holes there, and the mark
 * refused (a device node keeps no user attribute).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "libblk/backend-rbd.h"
#include "libblk/dirty.h"
#include "libblk/image-copy.h"
#include "libblk/image.h"
#include "tests/check.h"

#define KIB 1024ull
#define MIB (1024 * KIB)
/* Not a whole number of copy pieces, nor of pages: the last is short. */
#define IMAGE_BYTES (9 * MIB + 3 * 512)

static char src_path[300], dst_path[300];

/* Where user attributes work; NULL (and why) where they do not. */
static const char *xattr_dir(void)
{
	const char *base = getenv("BLKBACKD_XATTR_DIR");
	char probe[300];
	int fd, ret;

	snprintf(check_dir, sizeof(check_dir), "%s/test-image-copy.XXXXXX",
		 base ? base : "/var/tmp");
	if (!mkdtemp(check_dir)) {
		printf("test-image-copy: cannot make a directory in %s: %s: "
		       "skipped\n",
		       base ? base : "/var/tmp", strerror(errno));
		return NULL;
	}
	atexit(check_remove_dir);
	snprintf(probe, sizeof(probe), "%s/probe", check_dir);
	fd = open(probe, O_RDWR | O_CREAT | O_EXCL, 0600);
	REQUIRE(fd >= 0);
	ret = fsetxattr(fd, "user.probe", "1", 1, 0);
	close(fd);
	unlink(probe);
	if (ret < 0) {
		printf("test-image-copy: %s keeps no user extended attributes "
		       "(%s): skipped; set BLKBACKD_XATTR_DIR to a directory "
		       "on ext4 or XFS\n",
		       check_dir, strerror(errno));
		return NULL;
	}
	return check_dir;
}

/* The byte at @off of the test's pattern (0 is never a data byte). */
static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(1 + (off / 512 * 7 + off) % 251);
}

static void write_pattern(int fd, uint64_t off, uint64_t len)
{
	uint8_t *buf = malloc(len);

	REQUIRE(buf != NULL);
	for (uint64_t i = 0; i < len; i++)
		buf[i] = pattern(off + i);
	REQUIRE_EQ(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	free(buf);
}

/*
 * The source: data at the start, across the first 4 MiB boundary and in
 * the short last piece; holes elsewhere.
 */
static void make_source(void)
{
	int fd = open(src_path, O_RDWR | O_CREAT | O_EXCL, 0640);

	REQUIRE(fd >= 0);
	REQUIRE_EQ(fchmod(fd, 0640), 0);
	REQUIRE_EQ(ftruncate(fd, (off_t)IMAGE_BYTES), 0);
	write_pattern(fd, 0, 64 * KIB);
	write_pattern(fd, 4 * MIB - 8 * KIB, 16 * KIB);
	write_pattern(fd, IMAGE_BYTES - 1536, 1536);
	REQUIRE_EQ(fsync(fd), 0);
	close(fd);
}

/* Bytes the file at @path holds on disk (its holes hold none). */
static uint64_t allocated(const char *path)
{
	struct stat st;

	REQUIRE_EQ(stat(path, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

/* Whether [@off, +@len) of @path is all a hole. */
static bool hole_at(const char *path, uint64_t off, uint64_t len)
{
	int fd = open(path, O_RDONLY);
	off_t data;

	REQUIRE(fd >= 0);
	data = lseek(fd, (off_t)off, SEEK_DATA);
	close(fd);
	return (data < 0 && errno == ENXIO) ||
	       (data >= 0 && (uint64_t)data >= off + len);
}

/* The two files hold the same bytes. */
static void check_same(const char *a, const char *b)
{
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	static uint8_t ba[64 * KIB], bb[64 * KIB];
	uint64_t diff = 0;
	ssize_t na, nb;

	REQUIRE(fa >= 0 && fb >= 0);
	for (off_t off = 0;; off += na) {
		na = pread(fa, ba, sizeof(ba), off);
		nb = pread(fb, bb, sizeof(bb), off);
		REQUIRE_EQ(na, nb);
		if (na <= 0)
			break;
		if (memcmp(ba, bb, (size_t)na))
			diff++;
	}
	CHECK_EQ(diff, 0);
	close(fa);
	close(fb);
}

static void copy_all(struct blk_image *src, struct blk_image *dst, void *buf)
{
	for (uint64_t off = 0; off < IMAGE_BYTES; off += BLK_COPY_MAX) {
		uint64_t len = IMAGE_BYTES - off < BLK_COPY_MAX
				       ? IMAGE_BYTES - off
				       : BLK_COPY_MAX;

		CHECK_EQ(blk_image_copy_range(src, dst, off, len, buf), 0);
	}
}

static void create_refusals(struct blk_image *src)
{
	struct blk_image other, null;
	char why[512] = "";

	CHECK_EQ(blk_image_create_copy(src, dst_path, BLK_CACHE_NONE, "vm",
				       &other, why, sizeof(why)),
		 -EEXIST);
	CHECK(strstr(why, dst_path) != NULL);
	CHECK_EQ(blk_image_create_copy(src, "relative/copy", BLK_CACHE_NONE,
				       "vm", &other, why, sizeof(why)),
		 -EINVAL);
	REQUIRE_EQ(blk_image_open(&null, "null:1M", false, BLK_CACHE_NONE,
				  NULL),
		   0);
	CHECK_EQ(blk_image_create_copy(&null, "/nonexistent/copy",
				       BLK_CACHE_NONE, "vm", &other, why,
				       sizeof(why)),
		 -EOPNOTSUPP);
	CHECK(strstr(why, "null") != NULL);
	CHECK_EQ(blk_image_mark_moved(&null, dst_path, why, sizeof(why)),
		 -EOPNOTSUPP);
	blk_image_close(&null);
}

static void create(struct blk_image *src, struct blk_image *dst)
{
	struct blk_image again;
	char why[512] = "";
	struct stat st;

	REQUIRE_EQ(blk_image_create_copy(src, dst_path, BLK_CACHE_NONE, "vm",
					 dst, why, sizeof(why)),
		   0);
	REQUIRE_EQ(stat(dst_path, &st), 0);
	CHECK_EQ(st.st_size, IMAGE_BYTES);
	CHECK_EQ(st.st_mode & 07777, 0640);
	CHECK_EQ(allocated(dst_path), 0);
	CHECK_EQ(dst->sectors, IMAGE_BYTES / 512);
	CHECK(!dst->readonly);
	/* Locked as a writable disk's image: a second open is refused. */
	CHECK_EQ(blk_image_open(&again, dst_path, true, BLK_CACHE_NONE, NULL),
		 -EBUSY);
}

static void copy(struct blk_image *src, struct blk_image *dst, uint8_t *buf)
{
	copy_all(src, dst, buf);
	check_same(src_path, dst_path);
	/* The source's holes are the target's. */
	CHECK(hole_at(dst_path, 1 * MIB, 2 * MIB));
	CHECK(hole_at(dst_path, 5 * MIB, 3 * MIB));
	CHECK(allocated(dst_path) <= allocated(src_path));

	/* The guest discards what was copied: copied again, it is a hole. */
	CHECK_EQ(fallocate(src->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			   0, 64 * KIB),
		 0);
	CHECK(!hole_at(dst_path, 0, 64 * KIB));
	CHECK_EQ(blk_image_copy_range(src, dst, 0, BLK_COPY_MAX, buf), 0);
	CHECK(hole_at(dst_path, 0, 64 * KIB));
	check_same(src_path, dst_path);

	CHECK_EQ(blk_image_copy_range(src, dst, 100, 4096, buf), -EINVAL);
	CHECK_EQ(blk_image_copy_range(src, dst, 0, BLK_COPY_MAX + 4096, buf),
		 -EINVAL);
	CHECK_EQ(blk_image_copy_range(src, dst, IMAGE_BYTES - 512, 4096, buf),
		 -EINVAL);
	CHECK_EQ(blk_image_flush(dst), 0);
}

static void mark(struct blk_image *src)
{
	char why[512] = "", value[300] = "", want[2048];
	struct blk_image again;
	ssize_t n;

	REQUIRE_EQ(blk_image_mark_moved(src, dst_path, why, sizeof(why)), 0);
	n = getxattr(src_path, BLK_MOVED_TO_XATTR, value, sizeof(value) - 1);
	REQUIRE(n > 0);
	value[n] = '\0';
	CHECK(strcmp(value, dst_path) == 0);
	blk_image_close(src);

	snprintf(want, sizeof(want),
		 "%s was moved to %s by blkbackd; point the disk at %s (and "
		 "the domain's configuration), or, if %s is meant to be used "
		 "again, remove the mark: setfattr -x user.blkbackd.moved-to "
		 "%s",
		 src_path, dst_path, dst_path, src_path, src_path);
	CHECK_EQ(blk_image_open(&again, src_path, false, BLK_CACHE_NONE, "vm"),
		 -ESTALE);
	CHECK(strcmp(again.detail, want) == 0);
	if (strcmp(again.detail, want))
		fprintf(stderr, "detail: %s\nwanted: %s\n", again.detail, want);
	CHECK_EQ(blk_image_open(&again, src_path, true, BLK_CACHE_NONE, NULL),
		 -ESTALE);
	/* The fix it names works. */
	REQUIRE_EQ(removexattr(src_path, BLK_MOVED_TO_XATTR), 0);
	CHECK_EQ(blk_image_open(&again, src_path, false, BLK_CACHE_NONE, "vm"),
		 0);
	blk_image_close(&again);
}

/*
 * A restarted daemon marks a switched move's source by its path while the
 * killed one's I/O may still hold the image's lock: the lock does not
 * keep the mark off, and a mark already there is left as it is.
 */
static void mark_path(void)
{
	char why[512] = "", value[300] = "", gone[320];
	struct blk_image holder;
	ssize_t n;

	REQUIRE_EQ(blk_image_open(&holder, src_path, false, BLK_CACHE_NONE,
				  "vm"),
		   0);
	CHECK_EQ(blk_image_mark_moved_path(src_path, dst_path, why,
					   sizeof(why)),
		 0);
	n = getxattr(src_path, BLK_MOVED_TO_XATTR, value, sizeof(value) - 1);
	REQUIRE(n > 0);
	value[n] = '\0';
	CHECK(strcmp(value, dst_path) == 0);
	CHECK_EQ(blk_image_mark_moved_path(src_path, "/elsewhere", why,
					   sizeof(why)),
		 -EALREADY);
	n = getxattr(src_path, BLK_MOVED_TO_XATTR, value, sizeof(value) - 1);
	CHECK(n > 0 && (size_t)n == strlen(dst_path));
	blk_image_close(&holder);
	REQUIRE_EQ(removexattr(src_path, BLK_MOVED_TO_XATTR), 0);
	snprintf(gone, sizeof(gone), "%s.gone", src_path);
	CHECK_EQ(blk_image_mark_moved_path(gone, dst_path, why, sizeof(why)),
		 -ENOENT);
}

static void remove_target(struct blk_image *dst)
{
	char why[512] = "";

	blk_image_close(dst);
	CHECK_EQ(blk_image_remove(dst_path, why, sizeof(why)), 0);
	CHECK(access(dst_path, F_OK) < 0 && errno == ENOENT);
	CHECK_EQ(blk_image_remove(dst_path, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, dst_path) != NULL);
}

/* ---- a move in miniature ---- */

struct live {
	struct blk_image *src;
	struct blk_dirty *dm;
	atomic_bool stop;
	uint64_t writes, discards;
};

/* As a guest through the engine: each write or discard, then its mark. */
static void *live_writer(void *arg)
{
	struct live *l = arg;
	const uint64_t blocks = IMAGE_BYTES / 4096 - 16;
	unsigned int seed = 11;
	void *buf = NULL;

	REQUIRE_EQ(posix_memalign(&buf, 4096, 16 * 4096), 0);
	while (!atomic_load(&l->stop)) {
		uint64_t off = (uint64_t)rand_r(&seed) % blocks * 4096;
		uint64_t len = (1 + (uint64_t)rand_r(&seed) % 16) * 4096;

		if (rand_r(&seed) % 8 == 0) {
			REQUIRE_EQ(fallocate(l->src->fd,
					     FALLOC_FL_PUNCH_HOLE |
						     FALLOC_FL_KEEP_SIZE,
					     (off_t)off, (off_t)len),
				   0);
			l->discards++;
		} else {
			memset(buf, 1 + (int)(l->writes % 250), len);
			REQUIRE_EQ(pwrite(l->src->fd, buf, len, (off_t)off),
				   (ssize_t)len);
			l->writes++;
		}
		blk_dirty_mark(l->dm, off, len);
	}
	free(buf);
	return NULL;
}

/* Copy [@first, +@n) chunks of @dm's. */
static void copy_chunks(struct live *l, struct blk_image *dst, uint64_t first,
			uint64_t n, void *buf)
{
	uint64_t chunk = blk_dirty_chunk(l->dm), off = first * chunk;
	uint64_t end = (first + n) * chunk;

	if (end > IMAGE_BYTES)
		end = IMAGE_BYTES;
	CHECK_EQ(blk_image_copy_range(l->src, dst, off, end - off, buf), 0);
}

/* One pass over the map, in runs of up to BLK_COPY_MAX; chunks copied. */
static uint64_t copy_pass(struct live *l, struct blk_image *dst, void *buf)
{
	const uint64_t most = BLK_COPY_MAX / blk_dirty_chunk(l->dm);
	int64_t c = blk_dirty_take(l->dm, 0);
	uint64_t copied = 0;

	while (c >= 0) {
		uint64_t first = (uint64_t)c, n = 1;

		while (n < most && (c = blk_dirty_take(l->dm, first + n)) ==
					   (int64_t)(first + n))
			n++;
		if (n == most)
			c = blk_dirty_take(l->dm, first + n);
		copy_chunks(l, dst, first, n, buf);
		copied += n;
	}
	return copied;
}

static uint64_t elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - since->tv_sec) * 1000 +
	       (uint64_t)(now.tv_nsec - since->tv_nsec) / 1000000;
}

static void live_copy(const char *dir, void *buf)
{
	static struct live l;
	struct blk_image src, dst;
	char why[512] = "";
	struct timespec start;
	uint64_t passes = 0, again = 0;
	pthread_t writer;

	snprintf(src_path, sizeof(src_path), "%s/live-source", dir);
	snprintf(dst_path, sizeof(dst_path), "%s/live-target", dir);
	make_source();
	REQUIRE_EQ(blk_image_open(&src, src_path, false, BLK_CACHE_NONE, "vm"),
		   0);
	REQUIRE_EQ(blk_image_create_copy(&src, dst_path, BLK_CACHE_NONE, "vm",
					 &dst, why, sizeof(why)),
		   0);
	l.src = &src;
	REQUIRE_EQ(blk_dirty_new(IMAGE_BYTES, 64 * KIB, &l.dm), 0);
	blk_dirty_mark_all(l.dm);
	REQUIRE_EQ(pthread_create(&writer, NULL, live_writer, &l), 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	/* Passes while it writes: the first copies all, the rest again. */
	while (passes < 3 || elapsed_ms(&start) < 300) {
		uint64_t n = copy_pass(&l, &dst, buf);

		if (passes++)
			again += n;
	}
	atomic_store(&l.stop, true);
	pthread_join(writer, NULL);
	copy_pass(&l, &dst, buf);
	CHECK_EQ(blk_dirty_count(l.dm), 0);
	check_same(src_path, dst_path);
	/* Or it proved nothing: the writer raced the passes. */
	CHECK(l.writes > 0 && l.discards > 0 && again > 0);
	printf("live copy: %llu writes and %llu discards, %llu passes copied "
	       "%llu chunks again\n",
	       (unsigned long long)l.writes, (unsigned long long)l.discards,
	       (unsigned long long)passes, (unsigned long long)again);
	blk_dirty_free(l.dm);
	blk_image_close(&src);
	blk_image_close(&dst);
}

/* ---- RBD ---- */

static char conf[300];

static void rbd_target(char *out, size_t len, const char *image)
{
	snprintf(out, len, "rbd:rbd/%s:conf=%s", image, conf);
}

/* The RBD image @img holds what the file at @path does. */
static void check_rbd_same(struct blk_image *img, const char *path,
			   uint8_t *buf)
{
	static uint8_t want[BLK_COPY_MAX];
	int fd = open(path, O_RDONLY);
	uint64_t diff = 0;

	REQUIRE(fd >= 0);
	for (uint64_t off = 0; off < IMAGE_BYTES; off += BLK_COPY_MAX) {
		uint64_t len = IMAGE_BYTES - off < BLK_COPY_MAX
				       ? IMAGE_BYTES - off
				       : BLK_COPY_MAX;

		REQUIRE_EQ(pread(fd, want, len, (off_t)off), (ssize_t)len);
		REQUIRE_EQ(blk_rbd_read(img->rbd, off, len, buf), 0);
		if (memcmp(want, buf, len))
			diff++;
	}
	CHECK_EQ(diff, 0);
	close(fd);
}

/* @src copied into the new RBD image @name, opened in @dst. */
static void copy_into_rbd(struct blk_image *src, const char *name,
			  struct blk_image *dst, uint8_t *buf)
{
	char target[400], why[512] = "";
	struct blk_image other;

	rbd_target(target, sizeof(target), name);
	REQUIRE_EQ(blk_image_create_copy(src, target, BLK_CACHE_NONE, "vm", dst,
					 why, sizeof(why)),
		   0);
	CHECK_EQ(dst->sectors, IMAGE_BYTES / 512);
	/* Created with exclusive-lock, which the open took. */
	CHECK(blk_rbd_single_writer(dst->rbd));
	CHECK_EQ(blk_image_create_copy(src, target, BLK_CACHE_NONE, "vm",
				       &other, why, sizeof(why)),
		 -EEXIST);
	copy_all(src, dst, buf);
	CHECK_EQ(blk_image_flush(dst), 0);
}

static void rbd_mark(struct blk_image *src, const char *name, const char *dest)
{
	char target[400], why[512] = "", fix[200];
	struct blk_image again;

	rbd_target(target, sizeof(target), name);
	REQUIRE_EQ(blk_image_mark_moved(src, dest, why, sizeof(why)), 0);
	blk_image_close(src);
	CHECK_EQ(blk_image_open(&again, target, true, BLK_CACHE_NONE, NULL),
		 -ESTALE);
	snprintf(fix, sizeof(fix),
		 "remove the mark: rbd image-meta remove rbd/%s "
		 "blkbackd.moved-to",
		 name);
	CHECK(strstr(again.detail, fix) != NULL);
	CHECK(strstr(again.detail, dest) != NULL);
	if (!strstr(again.detail, fix))
		fprintf(stderr, "detail: %s\n", again.detail);
}

static int rbd_main(uint8_t *buf)
{
	struct blk_image file, a, b, back;
	char why[512] = "", b_target[400];
	const char *dir = check_make_dir("test-image-copy");

	snprintf(src_path, sizeof(src_path), "%s/source", dir);
	snprintf(dst_path, sizeof(dst_path), "%s/back", dir);
	make_source();
	REQUIRE_EQ(blk_image_open(&file, src_path, false, BLK_CACHE_NONE, "vm"),
		   0);
	copy_into_rbd(&file, "moved-a", &a, buf);
	check_rbd_same(&a, src_path, buf);

	copy_into_rbd(&a, "moved-b", &b, buf);
	check_rbd_same(&b, src_path, buf);
	rbd_target(b_target, sizeof(b_target), "moved-b");
	rbd_mark(&a, "moved-a", b_target);

	/* Back into a file: what the image never held stays a hole. */
	REQUIRE_EQ(blk_image_create_copy(&b, dst_path, BLK_CACHE_NONE, "vm",
					 &back, why, sizeof(why)),
		   0);
	copy_all(&b, &back, buf);
	CHECK_EQ(blk_image_flush(&back), 0);
	check_same(src_path, dst_path);
	CHECK(hole_at(dst_path, 1 * MIB, 2 * MIB));
	CHECK(allocated(dst_path) <= allocated(src_path));
	blk_image_close(&back);

	/* Open, it cannot be removed; closed, it can, once. */
	CHECK_EQ(blk_image_remove(b_target, why, sizeof(why)), -EBUSY);
	blk_image_close(&b);
	CHECK_EQ(blk_image_remove(b_target, why, sizeof(why)), 0);
	CHECK_EQ(blk_image_remove(b_target, why, sizeof(why)), -ENOENT);
	blk_image_close(&file);
	return check_done("test-image-copy (rbd)");
}

/* ---- a block device ---- */

static int blockdev_main(const char *dev, uint8_t *buf)
{
	struct blk_image src, dst;
	char why[512] = "";
	const char *dir = check_make_dir("test-image-copy");
	struct stat st, made;

	snprintf(dst_path, sizeof(dst_path), "%s/copy", dir);
	REQUIRE_EQ(blk_image_open(&src, dev, false, BLK_CACHE_NONE, "vm"), 0);
	REQUIRE(src.blockdev);
	REQUIRE_EQ(src.sectors, IMAGE_BYTES / 512);
	REQUIRE_EQ(blk_image_create_copy(&src, dst_path, BLK_CACHE_NONE, "vm",
					 &dst, why, sizeof(why)),
		   0);
	/* A file, with the device node's permissions. */
	REQUIRE_EQ(stat(dev, &st), 0);
	REQUIRE_EQ(stat(dst_path, &made), 0);
	CHECK(S_ISREG(made.st_mode));
	CHECK_EQ(made.st_mode & 07777, st.st_mode & 07777);
	CHECK_EQ(allocated(dst_path), 0);
	copy_all(&src, &dst, buf);
	CHECK_EQ(blk_image_flush(&dst), 0);
	check_same(dev, dst_path);
	CHECK(hole_at(dst_path, 1 * MIB, 2 * MIB));
	CHECK(allocated(dst_path) < 1 * MIB);
	CHECK_EQ(blk_image_mark_moved(&src, dst_path, why, sizeof(why)),
		 -EOPNOTSUPP);
	CHECK(strstr(why, "block device keeps no mark") != NULL);
	blk_image_close(&dst);
	blk_image_close(&src);
	return check_done("test-image-copy (block device)");
}

/* The files' cases, in a directory that keeps user attributes. */
static int files_main(void *buf)
{
	struct blk_image src, dst;
	const char *dir = xattr_dir();

	if (!dir)
		return 77;
	snprintf(src_path, sizeof(src_path), "%s/source", dir);
	snprintf(dst_path, sizeof(dst_path), "%s/target", dir);
	make_source();
	REQUIRE_EQ(blk_image_open(&src, src_path, false, BLK_CACHE_NONE, "vm"),
		   0);

	create(&src, &dst);
	create_refusals(&src);
	copy(&src, &dst, buf);
	mark(&src);
	mark_path();
	remove_target(&dst);
	live_copy(dir, buf);
	return check_done("test-image-copy");
}

int main(int argc, char **argv)
{
	void *buf = NULL;
	int ret;

	REQUIRE_EQ(posix_memalign(&buf, 4096, BLK_COPY_MAX), 0);
	if (argc == 3 && strcmp(argv[1], "rbd") == 0) {
		snprintf(conf, sizeof(conf), "%s", argv[2]);
		ret = rbd_main(buf);
	} else if (argc == 3 && strcmp(argv[1], "blockdev") == 0) {
		ret = blockdev_main(argv[2], buf);
	} else {
		ret = files_main(buf);
	}
	free(buf);
	return ret;
}

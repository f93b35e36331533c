// SPDX-License-Identifier: MIT
/*
 * e2e-check: the disk checker of the real-Xen end-to-end test.
 *
 * Built static on the host and run inside the PV guests (busybox dd cannot
 * do O_DIRECT) and in dom0 (to verify the images the guests wrote).
 *
 *   e2e-check write  PATH OFFSET LENGTH SEED [-d] [-b BS] [-s SHIFT]
 *   e2e-check verify PATH OFFSET LENGTH SEED [-d] [-b BS] [-s SHIFT]
 *   e2e-check bench  PATH OFFSET LENGTH SECONDS
 *   e2e-check coldbench PATH OFFSET LENGTH SECONDS
 *   e2e-check qd1    PATH OFFSET LENGTH SECONDS read|write
 *   e2e-check handoff
 *   e2e-check writeloop PATH OFFSET LENGTH
 *   e2e-check extents FILE
 *   e2e-check holes  PATH OFFSET LENGTH
 *   e2e-check mixjob PATH SEED SIZE
 *   e2e-check mixverify PATH SEED SIZE RUNS
 *
 * Every 512-byte sector of a pattern names its seed and its own byte
 * offset, then carries pseudo-random bytes derived from both, so data that
 * lands in the wrong place, stale data and torn writes all fail to verify.
 * -d uses O_DIRECT; -b sets the request size (default 64 KiB); -s starts
 * the I/O buffer SHIFT bytes into a page, so that the guest's segments do
 * not begin on a page boundary.  Sizes take K, M and G suffixes.
 *
 * mixjob is the guest side of the concurrent-guests comparison
 * (concurrency.sh): a build-like job run on dom0's command, see there.
 * mixverify checks in dom0 that an image holds what RUNS runs of it wrote.
 * coldbench reads only, data dom0 wrote before the guest started and
 * dropped from its page cache: the bench figures of a guest whose reads
 * dom0 has not cached (with bench's order, writes then reads of the same
 * blocks, loop serves the reads from dom0's page cache).
 * qd1 times every 4 KiB O_DIRECT request of a depth-1 random run, for the
 * stage-timing pass (dom0-test.sh) and its raw floor in dom0.
 * handoff prints what a wake-up between two threads costs on one CPU and
 * across two (blkback-bench's probe, tools/bench/handoff.h).
 */
#ifndef _GNU_SOURCE
/* O_DIRECT, SEEK_DATA; config.h sets it in the automake build. */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/handoff.h"

#define SECTOR 512u
#define PAGE 4096u
#define PATTERN_MAGIC 0x45324550u /* "PE2E" */

struct io_opts {
	const char *path;
	uint64_t offset;
	uint64_t length;
	uint64_t seed;
	size_t bs;
	size_t shift;
	bool direct;
};

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'G':
		v <<= 10;
		/* fall through */
	case 'M':
		v <<= 10;
		/* fall through */
	case 'K':
		v <<= 10;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Fill one sector that lives at byte offset @where of the disk. */
static void fill_sector(uint8_t *p, uint64_t seed, uint64_t where)
{
	uint64_t state = mix(seed ^ mix(where));
	uint32_t hdr[4] = { PATTERN_MAGIC, (uint32_t)seed, (uint32_t)where,
			    (uint32_t)(where >> 32) };

	memcpy(p, hdr, sizeof(hdr));
	for (size_t i = sizeof(hdr); i < SECTOR; i += 8) {
		state = mix(state + 0x9e3779b97f4a7c15ULL);
		memcpy(p + i, &state, 8);
	}
}

static void *alloc_buffer(size_t bs, size_t shift, void **base)
{
	if (posix_memalign(base, PAGE, bs + shift + PAGE))
		return NULL;
	return (uint8_t *)*base + shift;
}

static int open_target(const struct io_opts *o, int flags)
{
	int fd = open(o->path, flags | (o->direct ? O_DIRECT : 0), 0644);

	if (fd < 0)
		fprintf(stderr, "e2e-check: open %s: %s\n", o->path,
			strerror(errno));
	return fd;
}

static int pattern_write(const struct io_opts *o)
{
	void *base;
	uint8_t *buf = alloc_buffer(o->bs, o->shift, &base);
	int fd = open_target(o, O_WRONLY | O_CREAT);
	int ret = 0;

	if (!buf || fd < 0)
		return 1;
	for (uint64_t done = 0; done < o->length && !ret;) {
		size_t n = o->length - done < o->bs ? o->length - done : o->bs;
		uint64_t at = o->offset + done;
		ssize_t w;

		for (size_t i = 0; i < n; i += SECTOR)
			fill_sector(buf + i, o->seed, at + i);
		w = pwrite(fd, buf, n, (off_t)at);
		if (w != (ssize_t)n) {
			fprintf(stderr,
				"e2e-check: write %zu at %" PRIu64 ": %s\n", n,
				at, w < 0 ? strerror(errno) : "short write");
			ret = 1;
		}
		done += n;
	}
	if (!ret && fsync(fd)) {
		fprintf(stderr, "e2e-check: fsync %s: %s\n", o->path,
			strerror(errno));
		ret = 1;
	}
	close(fd);
	free(base);
	return ret;
}

static int compare_chunk(const uint8_t *buf, size_t n, const struct io_opts *o,
			 uint64_t at)
{
	uint8_t want[SECTOR];

	for (size_t i = 0; i < n; i += SECTOR) {
		fill_sector(want, o->seed, at + i);
		if (memcmp(buf + i, want, SECTOR)) {
			uint32_t hdr[4];

			memcpy(hdr, buf + i, sizeof(hdr));
			fprintf(stderr,
				"e2e-check: %s: sector at byte %" PRIu64
				" differs (found magic %08x seed %08x "
				"offset %" PRIu64 ")\n",
				o->path, at + i, hdr[0], hdr[1],
				(uint64_t)hdr[2] | (uint64_t)hdr[3] << 32);
			return 1;
		}
	}
	return 0;
}

static int pattern_verify(const struct io_opts *o)
{
	void *base;
	uint8_t *buf = alloc_buffer(o->bs, o->shift, &base);
	int fd = open_target(o, O_RDONLY);
	int ret = 0;

	if (!buf || fd < 0)
		return 1;
	for (uint64_t done = 0; done < o->length && !ret;) {
		size_t n = o->length - done < o->bs ? o->length - done : o->bs;
		uint64_t at = o->offset + done;
		ssize_t r = pread(fd, buf, n, (off_t)at);

		if (r != (ssize_t)n) {
			fprintf(stderr,
				"e2e-check: read %zu at %" PRIu64 ": %s\n", n,
				at, r < 0 ? strerror(errno) : "short read");
			ret = 1;
		} else {
			ret = compare_chunk(buf, n, o, at);
		}
		done += n;
	}
	close(fd);
	free(base);
	return ret;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sequential pass over [offset, offset+length) in 1 MiB requests: MB/s. */
static double bench_sequential(int fd, uint8_t *buf, uint64_t offset,
			       uint64_t length, bool write_pass)
{
	const size_t bs = 1u << 20;
	double t0 = now();

	for (uint64_t done = 0; done + bs <= length; done += bs) {
		ssize_t n =
			write_pass ? pwrite(fd, buf, bs, (off_t)(offset + done))
				   : pread(fd, buf, bs, (off_t)(offset + done));
		if (n != (ssize_t)bs)
			return -1;
	}
	if (write_pass && fdatasync(fd))
		return -1;
	return (double)length / 1e6 / (now() - t0);
}

/* 4 KiB requests at random offsets, one at a time, for @secs: IOPS. */
static double bench_random(int fd, uint8_t *buf, uint64_t offset,
			   uint64_t length, double secs, bool write_pass)
{
	uint64_t blocks = length / PAGE, state = 12345, ios = 0;
	double t0 = now(), t;

	do {
		for (int i = 0; i < 16; i++, ios++) {
			off_t at;
			ssize_t n;

			state = mix(state + 1);
			at = (off_t)(offset + state % blocks * PAGE);
			n = write_pass ? pwrite(fd, buf, PAGE, at)
				       : pread(fd, buf, PAGE, at);
			if (n != PAGE)
				return -1;
		}
		t = now() - t0;
	} while (t < secs);
	return (double)ios / t;
}

/* @path opened O_DIRECT and a 1 MiB buffer for the bench passes. */
static int bench_open(const char *path, void **buf)
{
	int fd = open(path, O_RDWR | O_DIRECT);

	if (fd < 0 || posix_memalign(buf, PAGE, 1u << 20)) {
		fprintf(stderr, "e2e-check: bench %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memset(*buf, 0x5a, 1u << 20);
	return fd;
}

static int bench(const char *path, uint64_t offset, uint64_t length,
		 double secs)
{
	double sw, sr, rr, rw;
	void *buf;
	int fd = bench_open(path, &buf);

	if (fd < 0)
		return 1;
	sw = bench_sequential(fd, buf, offset, length, true);
	sr = bench_sequential(fd, buf, offset, length, false);
	rr = bench_random(fd, buf, offset, length, secs, false);
	rw = bench_random(fd, buf, offset, length, secs, true);
	close(fd);
	free(buf);
	if (sw < 0 || sr < 0 || rr < 0 || rw < 0) {
		fprintf(stderr, "e2e-check: bench %s: I/O failed\n", path);
		return 1;
	}
	printf("BENCH seq_write_MBps=%.1f seq_read_MBps=%.1f "
	       "randread_iops=%.0f randwrite_iops=%.0f\n",
	       sw, sr, rr, rw);
	return 0;
}

/*
 * Reads of blocks nobody has read since dom0 dropped its caches: one
 * sequential pass over the first quarter of the region, then 4 KiB random
 * reads for @secs in the rest (with 48 MiB there, few of them hit a block
 * twice at the rates of an emulated host).
 */
static int coldbench(const char *path, uint64_t offset, uint64_t length,
		     double secs)
{
	uint64_t quarter = length / 4 / PAGE * PAGE;
	double sr, rr;
	void *buf;
	int fd = bench_open(path, &buf);

	if (fd < 0)
		return 1;
	sr = bench_sequential(fd, buf, offset, quarter, false);
	rr = bench_random(fd, buf, offset + quarter, length - quarter, secs,
			  false);
	close(fd);
	free(buf);
	if (sr < 0 || rr < 0) {
		fprintf(stderr, "e2e-check: coldbench %s: I/O failed\n", path);
		return 1;
	}
	printf("COLDBENCH seq_read_MBps=%.1f randread_iops=%.0f\n", sr, rr);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The @q quantile (0..1) of @n sorted samples: the nearest rank. */
static double quantile(const double *sorted, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999);

	return sorted[rank ? rank - 1 : 0];
}

/*
 * 4 KiB requests at random offsets, one at a time, for @secs, each timed:
 * the request count, IOPS and per-request p50/p99/mean in microseconds.
 */
static int qd1(const char *path, uint64_t offset, uint64_t length, double secs,
	       bool write_pass)
{
	uint64_t blocks = length / PAGE, state = 54321;
	size_t n = 0, cap = 1u << 16;
	double *lat = malloc(cap * sizeof(*lat)), t0, t, sum = 0;
	int fd = open(path, (write_pass ? O_WRONLY : O_RDONLY) | O_DIRECT);
	void *buf = NULL;

	if (fd < 0 || !lat || !blocks || posix_memalign(&buf, PAGE, PAGE)) {
		fprintf(stderr, "e2e-check: qd1 %s: %s\n", path,
			fd < 0 ? strerror(errno) : "no memory or empty region");
		return 1;
	}
	memset(buf, 0x5a, PAGE);
	t0 = now();
	do {
		off_t at;
		double s;
		ssize_t r;

		state = mix(state + 1);
		at = (off_t)(offset + state % blocks * PAGE);
		s = now();
		r = write_pass ? pwrite(fd, buf, PAGE, at)
			       : pread(fd, buf, PAGE, at);
		t = now();
		if (r != PAGE) {
			fprintf(stderr, "e2e-check: qd1 %s: I/O failed\n",
				path);
			return 1;
		}
		if (n == cap) {
			double *more = realloc(lat, 2 * cap * sizeof(*lat));

			if (!more)
				return 1;
			lat = more;
			cap *= 2;
		}
		lat[n++] = (t - s) * 1e6;
		sum += (t - s) * 1e6;
	} while (t - t0 < secs);
	close(fd);
	free(buf);
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("QD1 op=%s ios=%zu iops=%.0f p50_us=%.1f p99_us=%.1f "
	       "mean_us=%.1f\n",
	       write_pass ? "write" : "read", n, (double)n / (t - t0),
	       quantile(lat, n, 0.50), quantile(lat, n, 0.99), sum / (double)n);
	free(lat);
	return 0;
}

/* Write without end (until killed, or the domain is destroyed). */
static int writeloop(const char *path, uint64_t offset, uint64_t length)
{
	int fd = open(path, O_WRONLY | O_DIRECT);
	const size_t bs = 64u << 10;
	uint64_t pass = 0;
	void *buf;

	if (fd < 0 || posix_memalign(&buf, PAGE, bs))
		return 1;
	for (;; pass++) {
		for (uint64_t done = 0; done + bs <= length; done += bs) {
			for (size_t i = 0; i < bs; i += SECTOR)
				fill_sector((uint8_t *)buf + i, pass,
					    offset + done + i);
			if (pwrite(fd, buf, bs, (off_t)(offset + done)) !=
			    (ssize_t)bs) {
				fprintf(stderr, "e2e-check: writeloop: %s\n",
					strerror(errno));
				return 1;
			}
		}
		printf("writeloop pass %" PRIu64 " done\n", pass);
		fflush(stdout);
	}
}

/* Print the physical extents of a file: "OFFSET LENGTH" in bytes. */
static int extents(const char *path)
{
	size_t size =
		sizeof(struct fiemap) + 256 * sizeof(struct fiemap_extent);
	struct fiemap *fm = calloc(1, size);
	int fd = open(path, O_RDONLY);

	if (!fm || fd < 0)
		return 1;
	fm->fm_length = FIEMAP_MAX_OFFSET;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = 256;
	if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
		fprintf(stderr, "e2e-check: FIEMAP %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	for (unsigned int i = 0; i < fm->fm_mapped_extents; i++)
		printf("%llu %llu\n",
		       (unsigned long long)fm->fm_extents[i].fe_physical,
		       (unsigned long long)fm->fm_extents[i].fe_length);
	close(fd);
	free(fm);
	return 0;
}

/*
 * Exit 0 when the whole 4 KiB blocks of [offset, offset+length) of a file
 * hold no data: a punched hole cannot free a partly covered block.
 */
static int holes(const char *path, uint64_t offset, uint64_t length)
{
	uint64_t end = (offset + length) / PAGE * PAGE;
	off_t data;
	int fd;

	offset = (offset + PAGE - 1) / PAGE * PAGE;
	if (end <= offset) {
		printf("no whole block inside the range\n");
		return 1;
	}
	length = end - offset;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 2;
	data = lseek(fd, (off_t)offset, SEEK_DATA);
	close(fd);
	if (data < 0 && errno == ENXIO)
		return 0;
	if (data < 0)
		return 2;
	if ((uint64_t)data >= offset + length)
		return 0;
	printf("data at byte %lld inside [%" PRIu64 ", %" PRIu64 ")\n",
	       (long long)data, offset, offset + length);
	return 1;
}

/*
 * The build-like job of the concurrent-guests comparison (concurrency.sh).
 *
 * A run moves SIZE bytes through the region [MIX_REGION, +SIZE) of the
 * disk, one request at a time (depth 1, O_DIRECT): streaks of 1 to 8
 * neighbouring requests of 4 to 64 KiB, 70 % of the streaks reads and
 * 30 % writes, a flush (fdatasync: FLUSH_DISKCACHE) after every 8th write
 * and at the end of the run, as a compiler reading sources and writing
 * objects does.  The sequence depends only on SEED and the run's number,
 * so dom0 can replay it (mixverify) to know what the image must hold.
 *
 * Every 4 KiB block of the region carries the pattern of the run that
 * last wrote it (tag SEED + run; SEED for the initial fill).  Timed reads
 * check each sector's header (magic, tag, offset); the whole content is
 * compared after the runs, outside the timing.
 */
#define MIX_REGION (1u << 20)
#define MIX_MAX_BLOCKS 16u
#define MIX_FLUSH_EVERY 8u

struct mix_op {
	uint64_t block;
	unsigned int nblocks;
	bool write;
	bool flush;
};

/* The request sequence of one run; see mix_gen_next(). */
struct mix_gen {
	uint64_t state;
	uint64_t nblocks;
	uint64_t left;
	uint64_t cur;
	unsigned int streak;
	unsigned int writes;
	bool write;
};

static uint64_t mix_rand(struct mix_gen *g)
{
	g->state = mix(g->state + 0x9e3779b97f4a7c15ULL);
	return g->state;
}

static void mix_gen_init(struct mix_gen *g, uint64_t seed, uint32_t run,
			 uint64_t size)
{
	*g = (struct mix_gen){ .state = mix(seed ^ mix(run)),
			       .nblocks = size / PAGE,
			       .left = size / PAGE };
}

/* The next request of the run; false once the run's bytes are used up. */
static bool mix_gen_next(struct mix_gen *g, struct mix_op *op)
{
	uint64_t n;

	if (!g->left)
		return false;
	if (!g->streak) {
		uint64_t r = mix_rand(g);

		g->write = r % 10 < 3;
		g->streak = 1 + (unsigned int)(r >> 8) % 8;
		g->cur = (r >> 16) % g->nblocks;
	}
	n = 1 + mix_rand(g) % MIX_MAX_BLOCKS;
	if (n > g->left)
		n = g->left;
	if (g->cur + n > g->nblocks)
		g->cur = 0;
	*op = (struct mix_op){ .block = g->cur,
			       .nblocks = (unsigned int)n,
			       .write = g->write,
			       .flush = g->write &&
					++g->writes % MIX_FLUSH_EVERY == 0 };
	g->cur += n;
	g->streak--;
	g->left -= n;
	return true;
}

static uint32_t mix_tag(uint64_t seed, uint32_t run)
{
	return (uint32_t)(seed + run);
}

/* What the region holds after runs 1..@runs: the tag of every block. */
static void mix_replay(uint32_t *map, uint64_t seed, uint64_t size,
		       uint32_t runs)
{
	struct mix_gen g;
	struct mix_op op;

	for (uint64_t b = 0; b < size / PAGE; b++)
		map[b] = mix_tag(seed, 0);
	for (uint32_t run = 1; run <= runs; run++) {
		mix_gen_init(&g, seed, run, size);
		while (mix_gen_next(&g, &op))
			for (unsigned int i = 0; i < op.nblocks; i++)
				if (op.write)
					map[op.block + i] = mix_tag(seed, run);
	}
}

/* Headers only: the right pattern, from the right run, at the right place. */
static int mix_check_headers(const uint8_t *buf, const struct mix_op *op,
			     const uint32_t *map)
{
	for (size_t i = 0; i < (size_t)op->nblocks * PAGE; i += SECTOR) {
		uint64_t at = MIX_REGION + op->block * PAGE + i;
		uint32_t hdr[4];

		memcpy(hdr, buf + i, sizeof(hdr));
		if (hdr[0] != PATTERN_MAGIC ||
		    hdr[1] != map[op->block + i / PAGE] ||
		    hdr[2] != (uint32_t)at || hdr[3] != (uint32_t)(at >> 32)) {
			fprintf(stderr,
				"sector at byte %" PRIu64 ": magic %08x tag %u"
				" (expected %u) offset %" PRIu64 "\n",
				at, hdr[0], hdr[1], map[op->block + i / PAGE],
				(uint64_t)hdr[2] | (uint64_t)hdr[3] << 32);
			return -EIO;
		}
	}
	return 0;
}

static int mix_do(int fd, uint8_t *buf, const struct mix_op *op, uint32_t *map,
		  uint32_t tag)
{
	size_t len = (size_t)op->nblocks * PAGE;
	off_t at = (off_t)(MIX_REGION + op->block * PAGE);
	ssize_t n;

	if (!op->write) {
		n = pread(fd, buf, len, at);
		if (n != (ssize_t)len)
			return n < 0 ? -errno : -EIO;
		return mix_check_headers(buf, op, map);
	}
	for (size_t i = 0; i < len; i += SECTOR)
		fill_sector(buf + i, tag, (uint64_t)at + i);
	n = pwrite(fd, buf, len, at);
	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	for (unsigned int i = 0; i < op->nblocks; i++)
		map[op->block + i] = tag;
	if (op->flush && fdatasync(fd))
		return -errno;
	return 0;
}

/* One timed run; prints "MIX-RUN seq=S run=R secs=T bytes=B ... ok=0|1". */
static int mix_run(int fd, uint8_t *buf, uint32_t *map, uint64_t seed,
		   uint64_t size, uint32_t seq, uint32_t run)
{
	unsigned int ops = 0, flushes = 0;
	struct timespec wall;
	struct mix_gen g;
	struct mix_op op;
	double t0, secs;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &wall);
	t0 = now();
	mix_gen_init(&g, seed, run, size);
	while (!ret && mix_gen_next(&g, &op)) {
		ret = mix_do(fd, buf, &op, map, mix_tag(seed, run));
		ops++;
		flushes += op.flush;
	}
	if (!ret && fdatasync(fd))
		ret = -errno;
	secs = now() - t0;
	printf("MIX-RUN seq=%u run=%u secs=%.3f bytes=%" PRIu64 " ops=%u "
	       "flushes=%u "
	       "start=%lld.%"
	       "03ld "
	       "ok=%d%s%s\n",
	       seq, run, secs, size, ops, flushes + 1, (long long)wall.tv_sec,
	       wall.tv_nsec / 1000000, !ret, ret ? " error=" : "",
	       ret ? strerror(-ret) : "");
	fflush(stdout);
	return ret;
}

/* The whole region against @map, sector by sector. */
static int mix_verify_all(int fd, uint8_t *buf, const uint32_t *map,
			  uint64_t size)
{
	const size_t chunk = 1u << 20;
	uint8_t want[SECTOR];

	for (uint64_t done = 0; done < size; done += chunk) {
		size_t n = size - done < chunk ? size - done : chunk;
		uint64_t at = MIX_REGION + done;

		if (pread(fd, buf, n, (off_t)at) != (ssize_t)n) {
			printf("read of %zu bytes at %" PRIu64 " failed\n", n,
			       at);
			return -EIO;
		}
		for (size_t i = 0; i < n; i += SECTOR) {
			fill_sector(want, map[(done + i) / PAGE], at + i);
			if (memcmp(buf + i, want, SECTOR)) {
				printf("sector at byte %" PRIu64 " differs "
				       "from the "
				       "pattern of "
				       "tag %u\n",
				       at + i, map[(done + i) / PAGE]);
				return -EIO;
			}
		}
	}
	return 0;
}

/*
 * dom0's command, in the first 4 KiB of the disk: "E2EMIX SEQ RUNS".
 * Polled every 50 ms with O_DIRECT reads, so that it comes from the image
 * and not from the guest's page cache.
 */
static int mix_wait_command(int fd, uint8_t *buf, uint32_t want_seq,
			    uint32_t *runs)
{
	const struct timespec pause = { 0, 50 * 1000 * 1000 };
	unsigned int seq;

	for (;;) {
		if (pread(fd, buf, PAGE, 0) != PAGE)
			return -EIO;
		buf[PAGE - 1] = 0;
		if (sscanf((const char *)buf, "E2EMIX %u %u", &seq, runs) ==
			    2 &&
		    seq == want_seq)
			return 0;
		nanosleep(&pause, NULL);
	}
}

static int mix_fill(int fd, uint8_t *buf, uint64_t seed, uint64_t size)
{
	const size_t chunk = 1u << 20;

	for (uint64_t done = 0; done < size; done += chunk) {
		size_t n = size - done < chunk ? size - done : chunk;

		for (size_t i = 0; i < n; i += SECTOR)
			fill_sector(buf + i, mix_tag(seed, 0),
				    MIX_REGION + done + i);
		if (pwrite(fd, buf, n, (off_t)(MIX_REGION + done)) !=
		    (ssize_t)n)
			return -EIO;
	}
	return fdatasync(fd) ? -errno : 0;
}

/*
 * The guest disk's cache mode, spaces made dashes: "write-back" while
 * blkfront sends flushes; it turns them off for good ("write-through")
 * when the backend fails an empty flush, and fsync then succeeds without
 * reaching the backend.
 */
static void mix_cache_mode(const char *path, char *out, size_t len)
{
	const char *dev = strrchr(path, '/');
	char sys[128];
	FILE *f;

	snprintf(sys, sizeof(sys), "/sys/block/%s/queue/write_cache",
		 dev ? dev + 1 : path);
	snprintf(out, len, "unknown");
	f = fopen(sys, "r");
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = 0;
		fclose(f);
	}
	for (char *c = out; *c; c++)
		if (*c == ' ')
			*c = '-';
}

/*
 * Guest side: fill the region, say MIX-READY, then for each command of
 * dom0 (sequence numbers 1, 2, ...) do its runs and verify the region:
 *   MIX-RUN ...                       one line per run (mix_run)
 *   MIX-DONE seq=S runs=TOTAL PASS|FAIL cache=MODE (mix_cache_mode)
 * Runs forever; dom0 destroys the guest.
 */
static int mixjob(const char *path, uint64_t seed, uint64_t size)
{
	uint32_t *map = calloc(size / PAGE, sizeof(*map));
	int fd = open(path, O_RDWR | O_DIRECT);
	uint32_t total = 0, runs;
	char cache[32];
	void *buf;

	if (!map || fd < 0 || posix_memalign(&buf, PAGE, 1u << 20) ||
	    mix_fill(fd, buf, seed, size)) {
		printf("MIX-FAILED setup of %s: %s\n", path, strerror(errno));
		return 1;
	}
	mix_replay(map, seed, size, 0);
	printf("MIX-READY size=%" PRIu64 "\n", size);
	fflush(stdout);
	for (uint32_t seq = 1;; seq++) {
		int ret = mix_wait_command(fd, buf, seq, &runs);

		for (uint32_t r = 0; !ret && r < runs; r++)
			ret = mix_run(fd, buf, map, seed, size, seq, ++total);
		if (!ret)
			ret = mix_verify_all(fd, buf, map, size);
		mix_cache_mode(path, cache, sizeof(cache));
		printf("MIX-DONE seq=%u runs=%u %s cache=%s\n", seq, total,
		       ret ? "FAIL" : "PASS", cache);
		fflush(stdout);
		if (ret)
			return 1;
	}
}

/* dom0 side: the image holds what runs 1..@runs of the job wrote. */
static int mixverify(const char *path, uint64_t seed, uint64_t size,
		     uint64_t runs)
{
	uint32_t *map = calloc(size / PAGE, sizeof(*map));
	int fd = open(path, O_RDONLY);
	void *buf;
	int ret;

	if (!map || fd < 0 || posix_memalign(&buf, PAGE, 1u << 20)) {
		fprintf(stderr, "e2e-check: mixverify %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	mix_replay(map, seed, size, (uint32_t)runs);
	ret = mix_verify_all(fd, buf, map, size);
	close(fd);
	free(buf);
	free(map);
	return ret ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: e2e-check write|verify PATH OFFSET LENGTH SEED "
			"[-d] [-b BS] [-s SHIFT]\n"
			"       e2e-check bench PATH OFFSET LENGTH SECONDS\n"
			"       e2e-check coldbench PATH OFFSET LENGTH "
			"SECONDS\n"
			"       e2e-check qd1 PATH OFFSET LENGTH SECONDS "
			"read|write\n"
			"       e2e-check writeloop PATH OFFSET LENGTH\n"
			"       e2e-check extents FILE\n"
			"       e2e-check holes PATH OFFSET LENGTH\n"
			"       e2e-check mixjob PATH SEED SIZE\n"
			"       e2e-check mixverify PATH SEED SIZE RUNS\n"
			"       e2e-check handoff\n");
	return 2;
}

/*
 * The host's hand-off cost (tools/bench/handoff.h), here a domain's: a
 * wake-up's round trip between two threads on one vCPU and on two. In
 * dom0 it is what the worker's wake-up costs when a guest's event lands
 * on another vCPU than the worker's. Exit 1 when a figure is missing.
 */
static int handoff(void)
{
	struct handoff_figures h;

	handoff_measure(&h);
	printf("E2E-BENCH handoff round-trip-us same-cpu %.1f cross-cpu %.1f "
	       "cpus %d %d%s%s\n",
	       h.same_measured ? h.same_cpu_us : -1.0,
	       h.cross_measured ? h.cross_cpu_us : -1.0, h.cpu_a, h.cpu_b,
	       h.note[0] ? " note " : "", h.note);
	return h.same_measured && h.cross_measured ? 0 : 1;
}

static int parse_io(int argc, char **argv, struct io_opts *o)
{
	uint64_t v;

	*o = (struct io_opts){ .path = argv[2], .bs = 64u << 10 };
	if (argc < 6 || parse_size(argv[3], &o->offset) ||
	    parse_size(argv[4], &o->length) || parse_size(argv[5], &o->seed))
		return -EINVAL;
	for (int i = 6; i < argc; i++) {
		if (strcmp(argv[i], "-d") == 0) {
			o->direct = true;
		} else if (i + 1 < argc && strcmp(argv[i], "-b") == 0 &&
			   !parse_size(argv[i + 1], &v) && v >= SECTOR &&
			   v % SECTOR == 0 && v <= (64u << 20)) {
			o->bs = v;
			i++;
		} else if (i + 1 < argc && strcmp(argv[i], "-s") == 0 &&
			   !parse_size(argv[i + 1], &v) && v < PAGE &&
			   v % SECTOR == 0) {
			o->shift = v;
			i++;
		} else {
			return -EINVAL;
		}
	}
	if (o->offset % SECTOR || o->length % SECTOR)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t a, b, c;
	struct io_opts o;

	if (argc == 2 && !strcmp(argv[1], "handoff"))
		return handoff();
	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "write") || !strcmp(argv[1], "verify")) {
		if (parse_io(argc, argv, &o))
			return usage();
		return argv[1][0] == 'w' ? pattern_write(&o)
					 : pattern_verify(&o);
	}
	if (!strcmp(argv[1], "bench") && argc == 6 &&
	    !parse_size(argv[3], &a) && !parse_size(argv[4], &b) &&
	    !parse_size(argv[5], &c) && b >= (1u << 20) && c > 0)
		return bench(argv[2], a, b, (double)c);
	if (!strcmp(argv[1], "coldbench") && argc == 6 &&
	    !parse_size(argv[3], &a) && !parse_size(argv[4], &b) &&
	    !parse_size(argv[5], &c) && b >= (4u << 20) && c > 0)
		return coldbench(argv[2], a, b, (double)c);
	if (!strcmp(argv[1], "qd1") && argc == 7 && !parse_size(argv[3], &a) &&
	    !parse_size(argv[4], &b) && !parse_size(argv[5], &c) && c > 0 &&
	    (!strcmp(argv[6], "read") || !strcmp(argv[6], "write")))
		return qd1(argv[2], a, b, (double)c, argv[6][0] == 'w');
	if (!strcmp(argv[1], "writeloop") && argc == 5 &&
	    !parse_size(argv[3], &a) && !parse_size(argv[4], &b) && b > 0)
		return writeloop(argv[2], a, b);
	if (!strcmp(argv[1], "extents") && argc == 3)
		return extents(argv[2]);
	if (!strcmp(argv[1], "holes") && argc == 5 &&
	    !parse_size(argv[3], &a) && !parse_size(argv[4], &b))
		return holes(argv[2], a, b);
	if (!strcmp(argv[1], "mixjob") && argc == 5 &&
	    !parse_size(argv[3], &a) && !parse_size(argv[4], &b) && b >= PAGE &&
	    b % PAGE == 0)
		return mixjob(argv[2], a, b);
	if (!strcmp(argv[1], "mixverify") && argc == 6 &&
	    !parse_size(argv[3], &a) && !parse_size(argv[4], &b) && b >= PAGE &&
	    b % PAGE == 0 && !parse_size(argv[5], &c))
		return mixverify(argv[2], a, b, c);
	return usage();
}

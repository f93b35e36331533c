// SPDX-License-Identifier: MIT
#include "tools/bench/images.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"
#include "tools/bench/progress.h"

#define FILL_CHUNK (1024u * 1024u)

static int fill_image(const char *path, uint64_t bytes, void *buf)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC,
		      0600);
	int ret = 0;

	if (fd < 0)
		return -errno;
	for (uint64_t off = 0; off < bytes && !ret; off += FILL_CHUNK) {
		size_t len = bytes - off < FILL_CHUNK ? bytes - off
						      : FILL_CHUNK;
		ssize_t w = pwrite(fd, buf, len, (off_t)off);

		if (w < 0)
			ret = -errno;
		else if ((size_t)w != len)
			ret = -EIO;
	}
	if (!ret && fdatasync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int check_space(const char *dir, uint64_t need, char *why,
		       size_t why_len)
{
	struct statvfs sv;

	if (statvfs(dir, &sv) < 0)
		return 0; /* let the writes tell */
	if ((uint64_t)sv.f_bavail * sv.f_frsize < need + need / 10) {
		snprintf(why, why_len,
			 "%s has %.1f MB free, the images need %.1f MB "
			 "(use --dir, or a smaller --size)",
			 dir, (double)sv.f_bavail * (double)sv.f_frsize / 1e6,
			 (double)need / 1e6);
		return -ENOSPC;
	}
	return 0;
}

int images_create(struct bench_images *im, const char *dir, unsigned int n,
		  uint64_t bytes, char *why, size_t why_len)
{
	void *buf;
	int ret;

	*im = (struct bench_images){ .n = 0, .bytes = bytes };
	ret = check_space(dir, bytes * n, why, why_len);
	if (ret < 0)
		return ret;
	im->paths = calloc(n, sizeof(*im->paths));
	if (!im->paths || posix_memalign(&buf, 4096, FILL_CHUNK)) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	memset(buf, 0x5a, FILL_CHUNK);
	for (unsigned int i = 0; i < n; i++) {
		if (asprintf(&im->paths[i], "%s/guest%u.img", dir, i) < 0) {
			ret = -ENOMEM;
			break;
		}
		im->n = i + 1;
		ret = cleanup_add_file(im->paths[i]);
		if (!ret)
			ret = fill_image(im->paths[i], bytes, buf);
		if (ret < 0) {
			snprintf(why, why_len, "cannot write %s: %s",
				 im->paths[i], strerror(-ret));
			break;
		}
		progress_update("blkback-bench: writing images %u/%u", i + 1,
				n);
	}
	progress_clear();
	if (!ret)
		fprintf(stderr, "blkback-bench: wrote %u image%s of %.1f MB\n",
			n, n == 1 ? "" : "s", (double)bytes / 1e6);
	free(buf);
	return ret;
}

/* Bytes of @path in the page cache, by mincore on a mapping of it. */
static int resident_bytes(const char *path, uint64_t *out)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	unsigned char *vec = NULL;
	void *map = MAP_FAILED;
	size_t pages;
	int ret = 0;

	*out = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !st.st_size) {
		ret = st.st_size ? -errno : 0;
		goto out;
	}
	pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
	vec = malloc(pages);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (!vec || map == MAP_FAILED) {
		ret = vec ? -errno : -ENOMEM;
		goto out;
	}
	if (mincore(map, (size_t)st.st_size, vec) < 0) {
		ret = -errno;
		goto out;
	}
	for (size_t i = 0; i < pages; i++)
		*out += vec[i] & 1 ? (uint64_t)page : 0;
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	free(vec);
	close(fd);
	return ret;
}

static uint64_t resident_total(const struct bench_images *im, unsigned int n)
{
	uint64_t sum = 0, one;

	for (unsigned int i = 0; i < n && i < im->n; i++)
		if (resident_bytes(im->paths[i], &one) == 0)
			sum += one;
	return sum;
}

/* Only root may; without it the caller reports what stayed cached. */
static int drop_page_cache(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	sync();
	ret = write(fd, "1", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

int images_evict(const struct bench_images *im, unsigned int n,
		 uint64_t *before, uint64_t *after)
{
	int first = 0;

	*before = resident_total(im, n);
	for (unsigned int i = 0; i < n && i < im->n; i++) {
		int fd = open(im->paths[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			first = first ? first : -errno;
			continue;
		}
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	*after = resident_total(im, n);
	if (*after && drop_page_cache() == 0)
		*after = resident_total(im, n);
	return first;
}

void images_free(struct bench_images *im)
{
	for (unsigned int i = 0; i < im->n; i++)
		free(im->paths[i]);
	free(im->paths);
	im->paths = NULL;
	im->n = 0;
}

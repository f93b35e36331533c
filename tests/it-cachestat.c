// SPDX-License-Identifier: MIT
/*
 * it-cachestat FILE: print the page-cache state of FILE as
 * "cache=N dirty=N writeback=N" using cachestat(2) (Linux 6.5+).
 * Exits 77 when the kernel lacks the call, so tests can skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct it_cachestat_range {
	uint64_t off;
	uint64_t len; /* 0: to the end of the file */
};

struct it_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

int main(int argc, char **argv)
{
	struct it_cachestat_range range = { 0, 0 };
	struct it_cachestat cs;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: it-cachestat FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "it-cachestat: %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	if (syscall(__NR_cachestat, fd, &range, &cs, 0) < 0) {
		int e = errno;

		fprintf(stderr, "it-cachestat: cachestat: %s\n", strerror(e));
		return e == ENOSYS ? 77 : 1;
	}
	printf("cache=%llu dirty=%llu writeback=%llu\n",
	       (unsigned long long)cs.nr_cache, (unsigned long long)cs.nr_dirty,
	       (unsigned long long)cs.nr_writeback);
	close(fd);
	return 0;
}

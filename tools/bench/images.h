/* SPDX-License-Identifier: MIT */
/*
 * The guests' disk images: one file per guest in the work directory,
 * written through once so that reads hit allocated blocks (a sparse image
 * would read holes and flatter every arm), and evicted from the page cache
 * before each run so that every arm starts cold: none of the images' pages
 * in the host's page cache, checked with mincore(2).
 */
#ifndef BENCH_IMAGES_H
#define BENCH_IMAGES_H

#include <stddef.h>
#include <stdint.h>

struct bench_images {
	unsigned int n;
	uint64_t bytes;
	char **paths;
};

/* Create and fill @n images of @bytes in @dir, showing progress. */
int images_create(struct bench_images *im, const char *dir, unsigned int n,
		  uint64_t bytes, char *why, size_t why_len);
/*
 * Flush and drop the first @n images from the page cache, and say how many
 * bytes of them were cached before and still are after. posix_fadvise
 * leaves pages that someone maps or that are being written back; if any
 * stay, and we may, the whole page cache is dropped (vm.drop_caches=1).
 */
int images_evict(const struct bench_images *im, unsigned int n,
		 uint64_t *before, uint64_t *after);
void images_free(struct bench_images *im);

#endif /* BENCH_IMAGES_H */

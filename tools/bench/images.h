/* SPDX-License-Identifier: MIT */
/*
 * The guests' disk images: one file per guest in the work directory,
 * written through once so that reads hit allocated blocks (a sparse image
 * would read holes and flatter every arm), and evicted from the page cache
 * before each run so that every arm starts cold.
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
/* Flush and drop the first @n images from the page cache. */
int images_evict(const struct bench_images *im, unsigned int n);
void images_free(struct bench_images *im);

#endif /* BENCH_IMAGES_H */

/* SPDX-License-Identifier: MIT */
/*
 * What image.c, image-snapshot.c and image-copy.c share, and nothing
 * outside them uses.
 */
#ifndef LIBBLK_IMAGE_INTERNAL_H
#define LIBBLK_IMAGE_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

/* Say why in @why (printf-style) and return @err (a -errno). */
int image_refuse(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A new file @dest (O_EXCL, never through a symbolic link) with @mode,
 * opened for writing: its fd, or -errno with why in @why, which for one
 * that exists says that @what (a snapshot, a move) never replaces a file.
 */
int image_create_excl(const char *dest, mode_t mode, const char *what,
		      char *why, size_t len);

#endif /* LIBBLK_IMAGE_INTERNAL_H */

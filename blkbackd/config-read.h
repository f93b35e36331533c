/* SPDX-License-Identifier: MIT */
/*
 * Reading the configuration file's bytes for config_load(), bounded in
 * what is read (a regular file of at most CONFIG_MAX_BYTES: a FIFO, a
 * device or a larger file is refused at once, naming the path and the
 * fix) and in time: the read runs on a thread of its own, and the caller
 * waits for it at most CONFIG_READ_DEADLINE_MS. A reader still stuck past
 * that (a network filesystem that stopped answering) is left to finish
 * on its own, and until it has every further read is refused at once.
 *
 * Main thread (any one thread at a time): at startup and at each reload.
 */
#ifndef BLKBACKD_CONFIG_READ_H
#define BLKBACKD_CONFIG_READ_H

#include <stdbool.h>
#include <stddef.h>

/* How long the main loop may wait for the file; a local one takes µs. */
#define CONFIG_READ_DEADLINE_MS 1000

/*
 * The whole file at @path in *@text (NUL-terminated; the caller frees it,
 * and it is NULL for an empty one) and its length in *@len. Returns 0,
 * CONFIG_ABSENT when it does not exist and @must_exist is false (nothing
 * to free), or -errno after logging why: -EISDIR, -EINVAL (no regular
 * file), -EFBIG (too large), -ETIMEDOUT (not read in time), -EBUSY (an
 * earlier read still stuck), or what stat(), open() or read() said.
 */
int config_read(const char *path, bool must_exist, char **text, size_t *len);

#endif /* BLKBACKD_CONFIG_READ_H */

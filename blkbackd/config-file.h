/* SPDX-License-Identifier: MIT */
/*
 * The configuration file, blkbackd.conf(5): "name = value" lines whose
 * names are the daemon's long options, read with inih.
 *
 * Main thread, at startup and at each reload: the file is read only when
 * it is a regular file of at most CONFIG_MAX_BYTES, so that a FIFO, a
 * device (/dev/zero) or a huge file named as the configuration is refused
 * at once instead of stalling the daemon, and it is read on a thread the
 * main thread waits for at most CONFIG_READ_DEADLINE_MS
 * (blkbackd/config-read.h).
 */
#ifndef BLKBACKD_CONFIG_FILE_H
#define BLKBACKD_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "blkbackd/options.h"

/* config_load() found no file where one is allowed to be missing. */
#define CONFIG_ABSENT 1

/* The largest configuration file read: many times what every setting takes. */
#define CONFIG_MAX_BYTES (64 * 1024)

/*
 * Apply the settings in @path to @opts, over what is there. Every error
 * is logged with log_err() as "PATH:LINE: ..." naming the key and the fix,
 * and the whole file is read so that one run shows them all.
 *
 * Returns 0 when the file was read without error, CONFIG_ABSENT when it
 * does not exist and @must_exist is false, and -EINVAL (bad contents) or
 * another -errno (cannot be read, config_read()) otherwise.
 */
int config_load(struct options *opts, const char *path, bool must_exist);

/*
 * Apply the settings in @text (@len bytes, which need not end in a NUL;
 * @path names it in the errors), as config_load() does once it has read
 * the file: 0, or -EINVAL after logging every error.
 */
int config_parse(struct options *opts, const char *path, const char *text,
		 size_t len);

#endif /* BLKBACKD_CONFIG_FILE_H */

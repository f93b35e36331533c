/* SPDX-License-Identifier: MIT */
/*
 * The configuration file, blkbackd.conf(5): "name = value" lines whose
 * names are the daemon's long options, read with inih.
 *
 * Main thread, at startup only.
 */
#ifndef BLKBACKD_CONFIG_FILE_H
#define BLKBACKD_CONFIG_FILE_H

#include <stdbool.h>

#include "blkbackd/options.h"

/* config_load() found no file where one is allowed to be missing. */
#define CONFIG_ABSENT 1

/*
 * Apply the settings in @path to @opts, over what is there. Every error
 * is logged with log_err() as "PATH:LINE: ..." naming the key and the fix,
 * and the whole file is read so that one run shows them all.
 *
 * Returns 0 when the file was read without error, CONFIG_ABSENT when it
 * does not exist and @must_exist is false, and -EINVAL (bad contents) or
 * another -errno (cannot be read) otherwise.
 */
int config_load(struct options *opts, const char *path, bool must_exist);

#endif /* BLKBACKD_CONFIG_FILE_H */

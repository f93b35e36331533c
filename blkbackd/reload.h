/* SPDX-License-Identifier: MIT */
/*
 * Reloading the configuration (SIGHUP, blkbackctl reload): blkbackd.conf
 * is read again, with the command line still winning, and the settings
 * that can change under running guests take effect at once: log-level,
 * error-log-interval, rebalance-ms, the default I/O limits (limit-iops,
 * limit-bandwidth-mib, for every disk whose xenstore sets none) and
 * rbd-allow-no-exclusive-lock (for the disks attached after it). The others
 * (workers, memory, grant and ring limits...) shape rings and threads that
 * already exist: a changed one is logged as waiting for the next restart. A
 * reload never touches an image: resizing is asked for on its own (blkbackctl
 * resize).
 *
 * Main thread.
 */
#ifndef BLKBACKD_RELOAD_H
#define BLKBACKD_RELOAD_H

#include <stdbool.h>

struct daemon;

/*
 * Told of each setting the reload found changed, by its name (static):
 * @applied when it took effect, else it waits for a restart.
 */
typedef void reload_note_fn(const char *setting, bool applied, void *arg);

/*
 * Returns 0, or -EINVAL when the configuration has errors (logged, with
 * the file and line): then nothing changes. @note, unless NULL, is called
 * for every changed setting, so that a caller can say what the reload did
 * (blkbackctl reload); each is logged either way.
 */
int daemon_reload(struct daemon *d, reload_note_fn *note, void *arg);

#endif /* BLKBACKD_RELOAD_H */

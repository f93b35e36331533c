/* SPDX-License-Identifier: MIT */
/*
 * blkbackctl snapshot DISK DEST: what it sends and what it prints. DEST is
 * a file's path (made absolute here: the daemon has its own working
 * directory) or @NAME, an RBD image's snapshot, sent as typed.
 */
#ifndef BLKBACKCTL_SNAPSHOT_H
#define BLKBACKCTL_SNAPSHOT_H

#include <json-c/json.h>
#include <stddef.h>

/*
 * @typed as the daemon takes it, in @out; -ENAMETOOLONG, or -EINVAL for
 * a blank or control character (the request line is words), else.
 */
int snapshot_dest(const char *typed, char *out, size_t len);

/* "vbd 5/51712 (xvda): snapshot DEST taken; the guest paused 3.2 ms". */
void show_snapshot(json_object *reply);

/*
 * A device's line in stats, once it had a snapshot: "snapshots 3 (1
 * failed), the guest paused 20.1 ms in all, 6.2 the last, 8.0 the most".
 */
void show_snapshots(json_object *device);

#endif /* BLKBACKCTL_SNAPSHOT_H */

/* SPDX-License-Identifier: MIT */
/*
 * blkbackctl move: what a disk's live move is doing, as list, stats and
 * move --wait print it, from the "move" object of the daemon's JSON
 * (blkbackd/control.h).
 */
#ifndef BLKBACKCTL_MOVE_H
#define BLKBACKCTL_MOVE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * @typed as the daemon takes it, in @out: an RBD target as typed, a path
 * made absolute (the daemon has its own working directory). -EINVAL for a
 * blank or control character, -ENAMETOOLONG.
 */
int move_dest(const char *typed, char *out, size_t len);

/* Whether the move @move (a device's "move") has ended, and switched. */
bool move_ended(json_object *move);
bool move_switched(json_object *move);

/*
 * "moving to DEST: copying, 45% copied (1.2 of 2.0 GiB), pass 3, 12.0 MiB
 * dirty, 30.1 MiB/s (at most 64.0)", "moved to DEST: the guest paused
 * 3.2 ms for the switch (...)", "move to DEST failed: WHY" into @out.
 */
void move_text(json_object *move, char *out, size_t len);

/* A device's line under stats, when it has a move: "  move: ...". */
void show_move(json_object *device);

/* After list's table: a line for each disk that moves or moved. */
void show_moves(json_object *devices);

#endif /* BLKBACKCTL_MOVE_H */

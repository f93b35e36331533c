/* SPDX-License-Identifier: MIT */
/*
 * A live move's record: which image of a device is authoritative, kept in
 * STATE_DIR/moves/DOMID-DEVID (STATE_DIR is --state-dir) so that a daemon
 * that was killed during a move resumes the device on the right one
 * (vbd-move-resume.c; docs/snapshots.md, "Live moves"). Before the switch
 * the source is (the copy is abandoned); after it the destination is.
 *
 * Each call does its own blocking file I/O (a few small writes and
 * fsyncs): call it from the main thread only where that is acceptable (a
 * move's start and end, a device's resume), or from a blocking thread.
 * The functions share no state; two calls for one device at once are the
 * caller's bug.
 */
#ifndef BLKBACKD_MOVE_RECORD_H
#define BLKBACKD_MOVE_RECORD_H

#include <stdint.h>

#include "blkbackd/vbd-internal.h"

enum move_phase {
	MOVE_COPYING, /* the source is authoritative */
	MOVE_SWITCHED, /* the destination is, and the source is marked */
};

struct move_record {
	uint32_t domid, devid;
	enum move_phase phase;
	char source[VBD_PATH_MAX]; /* as the backend's params names it */
	char dest[VBD_PATH_MAX];
};

/*
 * Durably (write a temporary file, fsync, rename, fsync the directory): it
 * survives a SIGKILL or a power cut at any instant, and is then either the
 * old record or the new one. Creates STATE_DIR/moves if it is missing.
 * 0 or -errno; -EINVAL for a path that a record cannot hold (a newline in
 * it, or empty).
 */
int move_record_save(const char *state_dir, const struct move_record *r);

/*
 * 0 and *r; -ENOENT when there is none; -EINVAL for a damaged one (cut
 * short, a line missing or out of place, a value that is not one, or a
 * record of another device): the caller logs it with the file's name,
 * move_record_path().
 */
int move_record_load(const char *state_dir, uint32_t domid, uint32_t devid,
		     struct move_record *r);

/* Durably gone (unlink, fsync the directory); 0 also when there was none. */
int move_record_remove(const char *state_dir, uint32_t domid, uint32_t devid);

/* The record's file name, for messages; @buf of @len bytes. */
void move_record_path(const char *state_dir, uint32_t domid, uint32_t devid,
		      char *buf, size_t len);

/*
 * Call @fn for each record in STATE_DIR/moves (those of any device,
 * damaged ones too), in no particular order; temporary files a killed
 * save left are removed. Stops at the first @fn that returns nonzero and
 * returns that; 0 when all were called, or there is no such directory;
 * -errno when it cannot be read. @fn may remove the record it is given.
 */
int move_record_foreach(const char *state_dir,
			int (*fn)(void *arg, uint32_t domid, uint32_t devid),
			void *arg);

#endif /* BLKBACKD_MOVE_RECORD_H */

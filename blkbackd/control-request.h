/* SPDX-License-Identifier: MIT */
/*
 * The control protocol's request line, parsed (control.h lists the
 * requests). Pure: no daemon state, no I/O, any thread; the fuzz harness
 * tests/fuzz/control.c drives it with arbitrary bytes.
 *
 * Grammar: words separated by blanks (spaces or tabs), blanks at either
 * end ignored; no other control byte and no NUL anywhere. DOMID/DEVID are
 * two decimal numbers (libblk/parse.h: digits only) of at most 2^32-1
 * around one '/'; a limit is decimal digits, or "-" for unchanged.
 *
 *   list | reload
 *   stats [DOMID/DEVID] | resize [DOMID/DEVID]
 *   log-level [LEVEL]         LEVEL: a word of 1 to 31 bytes, checked by
 *                             the daemon against its option table
 *   limit DOMID/DEVID [IOPS BPS]
 *   snapshot DOMID/DEVID DEST DEST: a word of 1 to CONTROL_DEST_MAX - 1
 *                             bytes (every other word has at most 31)
 *   move DOMID/DEVID DEST [BPS]
 *                             BPS: a number, bytes a second (0: the
 *                             default rate)
 *   move-cancel DOMID/DEVID
 *   snapshot-copy DOMID/DEVID DEST [BPS]
 *                             as move's: a copy that does not switch
 */
#ifndef BLKBACKD_CONTROL_REQUEST_H
#define BLKBACKD_CONTROL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A snapshot's or a move's DEST (a path, an RBD snapshot's name or RBD
 * target), its NUL included.
 */
#define CONTROL_DEST_MAX 512
/*
 * A request line's bytes, its newline included: longer ones are refused.
 * The longest request: "snapshot", a device, a DEST.
 */
#define CONTROL_REQUEST_MAX 576

enum control_op {
	CONTROL_LIST,
	CONTROL_STATS,
	CONTROL_LOG_LEVEL,
	CONTROL_RESIZE,
	CONTROL_RELOAD,
	CONTROL_LIMIT,
	CONTROL_SNAPSHOT,
	CONTROL_MOVE,
	CONTROL_MOVE_CANCEL,
	CONTROL_SNAPSHOT_COPY,
};

/* One limit of "limit D/V IOPS BPS": a number, or keep the one in force. */
struct control_limit_arg {
	bool keep;
	uint64_t value; /* when !keep; 0: no limit */
};

struct control_request {
	enum control_op op;
	bool one; /* stats, resize: one device; limit: always */
	uint32_t domid, devid;
	char level[32]; /* log-level: the one asked for; "" asks which */
	bool set_limits; /* limit: iops and bps given */
	struct control_limit_arg iops, bps;
	char dest[CONTROL_DEST_MAX]; /* snapshot, move: where the copy goes */
	uint64_t bw; /* move, snapshot-copy: its rate limit; 0: the default */
};

/*
 * Parse the @len bytes at @line (no newline). 0, or -EINVAL with the
 * reason, for the client, in @why (@why_len bytes, always terminated).
 */
int control_request_parse(const char *line, size_t len,
			  struct control_request *req, char *why,
			  size_t why_len);

#endif /* BLKBACKD_CONTROL_REQUEST_H */

/* SPDX-License-Identifier: MIT */
/*
 * The control socket: a unix stream socket on which each connection sends
 * one request line and gets one JSON document back (blkbackctl(8)).
 *
 *   list                 every device: domain, vdev, image, state and what
 *                        was negotiated; its size (sectors, sector_size)
 *                        null until its guest first connected
 *   stats [DOMID/DEVID]  per-device counters and stage times
 *   log-level [LEVEL]    set the least severe priority logged; answers
 *                        the one in force
 *   resize [DOMID/DEVID] re-read image sizes and publish the changed ones;
 *                        answers each device's old_sectors and sectors
 *   reload               read blkbackd.conf again (blkbackd/reload.h);
 *                        answers the settings "applied" and those whose
 *                        change waits for a restart ("restart_needed")
 *   limit DOMID/DEVID [IOPS BPS]
 *                        set a disk's I/O limits (0: none, -: unchanged;
 *                        kept in its xenstore directory), answer them
 *   snapshot DOMID/DEVID DEST
 *                        a point-in-time copy of the disk at DEST (vbd.h,
 *                        vbd_snapshot()), answered once taken: DEST and
 *                        the guest's pause (pause_ms, of it draining_ms,
 *                        copying_ms, resuming_ms, and its steps'
 *                        CLOCK_MONOTONIC times in ns, monotonic_ns)
 *   move DOMID/DEVID DEST [BPS]
 *                        move the running disk to a new image DEST at up
 *                        to BPS bytes a second (vbd-move.h), answered
 *                        {"started": true} once DEST exists and the
 *                        guest's writes are tracked; its progress is the
 *                        device's "move" in list and stats
 *   move-cancel DOMID/DEVID
 *                        stop it before it switched: DEST is removed
 *                        (a snapshot-copy's too, before it finished)
 *   snapshot-copy DOMID/DEVID DEST [BPS]
 *                        a copy of the running disk at DEST as a move
 *                        makes it, without the switch (vbd_move_copy()),
 *                        answered once finished as snapshot is, with
 *                        copied_bytes too; meanwhile it is the device's
 *                        "move" (copy: true)
 *
 * DOMID and DEVID are numbers: blkbackctl turns names into them. An error
 * is {"error": "..."}, with "bad_request": true when the request itself
 * is wrong (unknown, or an argument no value of which exists).
 *
 * control-request.h parses the line; control-server.h serves the socket.
 */
#ifndef BLKBACKD_CONTROL_H
#define BLKBACKD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct daemon;
struct control_server;

/*
 * The client that asked: where a reply that comes later goes
 * (control_server_answer(@s, @client)), and whether it is root or the
 * daemon's own user, who alone may have the daemon write files where they
 * say (a snapshot: its content is a guest's, and a control-group member
 * could otherwise plant it as root anywhere on the image's filesystem).
 */
struct control_later {
	struct control_server *s;
	uint64_t client;
	bool privileged;
	bool deferred; /* set by control_reply() */
};

/*
 * The answer to the request line @line (@len bytes, no newline): a JSON
 * document and a newline, @reply_len bytes, malloc()ed; NULL when out of
 * memory, or with @later->deferred set when it comes later, through
 * @later. Main thread only: it reads and changes the daemon's state.
 */
char *control_reply(struct daemon *d, const char *line, size_t len,
		    size_t *reply_len, struct control_later *later);

#endif /* BLKBACKD_CONTROL_H */

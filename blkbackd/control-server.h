/* SPDX-License-Identifier: MIT */
/*
 * The control socket's server: a unix stream socket on which each client
 * sends one request line and gets one reply (control.h), every client
 * non-blocking on the main loop.
 *
 * Why on the main loop and not on a thread: every answer reads or changes
 * state that only the main thread touches (daemon.h: the devices, the
 * settings, xenstore), so a thread would have to take that state's locks
 * and could then hold the daemon while it waits on a client. Here nothing
 * waits on a client: the loop reads the bytes that are there, writes what
 * the socket takes, keeps the rest buffered, and drops a client at its
 * deadline. The answer itself is the daemon's own work (it builds a JSON
 * document), not a wait.
 *
 * Bounds, per client: a request line of CONTROL_REQUEST_MAX bytes
 * (control-request.h), complete within CONTROL_REQUEST_MS of connecting;
 * its reply taken within CONTROL_REPLY_MS of being ready. A request whose
 * work runs off the main thread (a snapshot) is answered once that work
 * ended (control_server_answer()), within CONTROL_LATER_MS; meanwhile the
 * client is only watched for hanging up, which drops it. A client that
 * misses either is sent an error if the socket has room, logged, and
 * closed. At most CONTROL_MAX_CLIENTS clients at once: a new one past
 * that takes the slot of the client nearest its deadline, which is sent
 * {"error": "busy ..."} (unless its reply has begun) and closed. A flood
 * of idle clients thus never turns a new one away nor holds memory, and
 * costs a client that waits at most the flood's pace.
 *
 * Peers (SO_PEERCRED, SO_PEERGROUPS): root, the daemon's own user, or a
 * member of the group given to control_server_open() (the control-group
 * setting), whose members the socket's mode 0660 lets in; without one the
 * socket is 0600. Anyone else who reaches the socket (a mode loosened by
 * hand) is answered an error, logged with its uid and pid, and closed.
 *
 * Main thread only, like everything it answers.
 */
#ifndef BLKBACKD_CONTROL_SERVER_H
#define BLKBACKD_CONTROL_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTROL_MAX_CLIENTS 32
#define CONTROL_REQUEST_MS 1000
#define CONTROL_REPLY_MS 5000
/* How long a request answered later (a snapshot) may take. */
#define CONTROL_LATER_MS (10 * 60 * 1000)

struct daemon;
struct control_server;

/*
 * Listen on @path, for root, this user and the members of group @gid
 * ((gid_t)-1: none). A socket nobody answers on (a crashed daemon's) is
 * replaced; one a live process listens on is not: -EADDRINUSE, with that
 * process's pid in *@holder (0 if it cannot be told). 0 or -errno.
 */
int control_server_open(const char *path, gid_t gid,
			struct control_server **out, pid_t *holder);

/* The fd to poll for POLLIN; then call control_server_run(). */
int control_server_fd(const struct control_server *s);

/* Serve what is ready (new clients, requests, replies) and drop clients
 * past their deadlines; never waits. */
void control_server_run(struct control_server *s, struct daemon *d);

/*
 * The reply (@len bytes, malloc()ed, taken) to the request of client
 * @client, which control_reply() deferred (struct control_later): sent
 * if that client still waits, else freed.
 */
void control_server_answer(struct control_server *s, uint64_t client,
			   char *reply, size_t len);

/* Milliseconds until the next client deadline, -1 with no client. */
int control_server_timeout_ms(const struct control_server *s);

/* Close every client and the socket (its path stays, as stale). */
void control_server_close(struct control_server *s);

#endif /* BLKBACKD_CONTROL_SERVER_H */

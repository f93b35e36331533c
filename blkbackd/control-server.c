// SPDX-License-Identifier: MIT
/*
 * The control socket's server (control-server.h): clients in a table,
 * each a small state machine driven by epoll, never a blocking call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "blkbackd/control-request.h"
#include "blkbackd/control-server.h"
#include "blkbackd/control.h"
#include "blkbackd/log.h"

/* New clients taken per turn of the loop, so that a flood yields to it. */
#define ACCEPTS_PER_RUN 64
#define LISTEN_INDEX UINT32_MAX /* the epoll tag of the listening socket */

struct client {
	int fd; /* -1: a free slot */
	pid_t pid;
	uid_t uid;
	int64_t deadline_ms; /* for the request, then for the reply */
	uint64_t serial; /* names it to control_server_answer() */
	bool waiting; /* its reply comes later (control_server_answer()) */
	size_t got; /* bytes of the request line so far */
	char line[CONTROL_REQUEST_MAX];
	char *reply; /* non-NULL: the reply is being written */
	size_t reply_len, sent;
};

/*
 * What a client can make happen at will is logged once a second at most,
 * with the count of lines held back since: no client floods the journal.
 */
struct log_gate {
	int64_t open_ms; /* the last line logged */
	unsigned int held; /* lines not logged since */
};

struct control_server {
	int epoll_fd, listen_fd;
	int lock_fd; /* PATH.lock, write-locked while the daemon lives */
	gid_t gid; /* members may talk to the daemon; -1: none */
	uid_t own_uid;
	unsigned int nr_clients;
	uint64_t next_serial;
	struct client clients[CONTROL_MAX_CLIENTS];
	struct log_gate refused, evicted;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the socket ---- */

/*
 * Someone listens on @sa: a daemon serving it (connect() succeeds at once
 * on a unix socket, or says its backlog is full). Its pid in *@holder.
 */
static bool held_by_another(const struct sockaddr_un *sa, pid_t *holder)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	bool held = false;

	if (fd < 0)
		return false;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ||
	    errno == EAGAIN) {
		held = true;
		*holder = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred,
				     &len) == 0
				  ? cred.pid
				  : 0;
	}
	close(fd);
	return held;
}

/*
 * The socket's group: inherited from a setgid directory (the way under
 * the shipped unit, whose sandbox forbids chown()), else given by chown(),
 * which needs CAP_CHOWN unless the daemon is itself in the group.
 */
static int give_to_group(const char *path, gid_t gid)
{
	struct stat st;

	if (stat(path, &st) == 0 && st.st_gid == gid)
		return 0;
	return chown(path, (uid_t)-1, gid);
}

/*
 * The socket's lock, PATH.lock: a POSIX write lock on it, held until the
 * daemon exits, makes "nobody answers, so replace the socket" safe when
 * two daemons start at the same moment (each would otherwise find no
 * listener, and the second would unlink the first one's fresh socket).
 * A POSIX lock, not an OFD one, so that F_GETLK names the holder's pid.
 * The file stays when the daemon exits: removing it would let a daemon
 * that opened it just before lock an unlinked file while a third locks
 * a new one. Returns the locked fd, or -EADDRINUSE with the holder's pid
 * in *@holder, or -errno.
 */
static int lock_socket(const char *path, pid_t *holder)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char lock_path[PATH_MAX];
	int fd, ret;

	if (snprintf(lock_path, sizeof(lock_path), "%s.lock", path) >=
	    (int)sizeof(lock_path))
		return -ENAMETOOLONG;
	fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETLK, &fl) == 0)
		return fd;
	ret = errno == EACCES || errno == EAGAIN ? -EADDRINUSE : -errno;
	if (ret == -EADDRINUSE && fcntl(fd, F_GETLK, &fl) == 0 &&
	    fl.l_type != F_UNLCK)
		*holder = fl.l_pid;
	close(fd);
	return ret;
}

static int listen_on(const char *path, gid_t gid, pid_t *holder)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old_mask;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	/* A daemon that holds no lock (an older one) still listens. */
	if (held_by_another(&sa, holder))
		return -EADDRINUSE;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A socket left by a crashed daemon: nobody answered on it. */
	if (unlink(path) < 0 && errno != ENOENT) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/* 0600, or 0660 for the control group; never a moment wider. */
	old_mask = umask(gid == (gid_t)-1 ? 0177 : 0117);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (ret == 0 && gid != (gid_t)-1)
		ret = give_to_group(path, gid);
	/* A burst of connects waits to be accepted rather than fail. */
	if (ret == 0)
		ret = listen(fd, SOMAXCONN);
	if (ret < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static int watch(int epoll_fd, int fd, uint32_t events, uint32_t tag, int op)
{
	struct epoll_event ev = { .events = events, .data.u32 = tag };

	return epoll_ctl(epoll_fd, op, fd, &ev) < 0 ? -errno : 0;
}

int control_server_open(const char *path, gid_t gid,
			struct control_server **out, pid_t *holder)
{
	struct control_server *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->gid = gid;
	s->own_uid = geteuid();
	for (unsigned int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	s->lock_fd = lock_socket(path, holder);
	s->listen_fd = s->lock_fd < 0 ? s->lock_fd
				      : listen_on(path, gid, holder);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	ret = s->listen_fd < 0	? s->listen_fd
	      : s->epoll_fd < 0 ? -errno
				: watch(s->epoll_fd, s->listen_fd, EPOLLIN,
					LISTEN_INDEX, EPOLL_CTL_ADD);
	if (ret < 0) {
		if (s->listen_fd >= 0)
			close(s->listen_fd);
		if (s->epoll_fd >= 0)
			close(s->epoll_fd);
		if (s->lock_fd >= 0)
			close(s->lock_fd);
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int control_server_fd(const struct control_server *s)
{
	return s->epoll_fd;
}

/* ---- who may talk to the daemon ---- */

static bool in_peer_groups(int fd, gid_t gid)
{
	gid_t some[64], *groups = some;
	socklen_t len = sizeof(some);
	bool found = false;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE || !(groups = malloc(len)))
			return false;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
			len = 0;
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		found |= groups[i] == gid;
	if (groups != some)
		free(groups);
	return found;
}

static bool peer_allowed(const struct control_server *s, int fd,
			 const struct ucred *cred)
{
	if (cred->uid == 0 || cred->uid == s->own_uid)
		return true;
	if (s->gid == (gid_t)-1)
		return false;
	return cred->gid == s->gid || in_peer_groups(fd, s->gid);
}

/*
 * An error line to a client that is leaving anyway: sent if its socket has
 * room, else not (never waited for).
 */
static void say(int fd, const char *error, bool bad_request)
{
	char text[256];
	int n = snprintf(text, sizeof(text), "{\"error\":\"%s\"%s}\n", error,
			 bad_request ? ",\"bad_request\":true" : "");

	(void)send(fd, text, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The number held back before this line, or -1: not logged now. */
static long log_gate_pass(struct log_gate *g)
{
	int64_t now = now_ms();
	long held = g->held;

	if (g->open_ms && now - g->open_ms < 1000) {
		g->held++;
		return -1;
	}
	g->open_ms = now;
	g->held = 0;
	return held;
}

static void log_refusal(struct control_server *s, const struct ucred *cred)
{
	long held = log_gate_pass(&s->refused);

	if (held >= 0)
		log_warn("control socket: refused uid %u (pid %d): not root, "
			 "not blkbackd's user%s; allow a group with "
			 "control-group in blkbackd.conf, and make the socket "
			 "unreachable to others (%ld more refused since the "
			 "last such line)",
			 (unsigned int)cred->uid, (int)cred->pid,
			 s->gid == (gid_t)-1 ? ", no control-group set"
					     : ", not in control-group",
			 held);
}

/* ---- clients ---- */

/*
 * Close without a reset. A Unix socket closed with bytes still unread
 * makes the peer's next read fail with ECONNRESET, and the client loses
 * the answer it was just sent ("busy", a refusal). What it sent and no
 * one read is read and dropped first; a client still sending after 4 KiB
 * gets the reset it asked for.
 */
static void hang_up(int fd)
{
	char scrap[1024];

	for (unsigned int n = 0; n < 4; n++)
		if (recv(fd, scrap, sizeof(scrap), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}

static void drop(struct control_server *s, struct client *c)
{
	hang_up(c->fd);
	free(c->reply);
	*c = (struct client){ .fd = -1 };
	s->nr_clients--;
}

/*
 * A slot for a new client. With every slot taken, the client nearest its
 * deadline (the one that has waited longest for its request or left its
 * reply longest untaken) is told and closed to make room: a flood of idle
 * clients then costs each new one nothing, and never turns one away.
 */
static struct client *free_slot(struct control_server *s, pid_t pid)
{
	struct client *oldest = &s->clients[0];
	long held;

	for (unsigned int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		if (s->clients[i].fd < 0)
			return &s->clients[i];
		if (s->clients[i].deadline_ms < oldest->deadline_ms)
			oldest = &s->clients[i];
	}
	held = log_gate_pass(&s->evicted);
	if (held >= 0)
		log_warn("control socket: %u clients at once; closed pid %d, "
			 "the one nearest its deadline, for pid %d (%ld more "
			 "since the last such line)",
			 CONTROL_MAX_CLIENTS, (int)oldest->pid, (int)pid, held);
	/* A reply under way would end in garbage: only closed. */
	if (!oldest->reply)
		say(oldest->fd, "busy: closed for a newer client", false);
	drop(s, oldest);
	return oldest;
}

/* A client just accepted: let it in, or answer why not and close it. */
static void admit(struct control_server *s, int fd)
{
	struct ucred cred = { .pid = 0 };
	socklen_t len = sizeof(cred);
	struct client *c;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    !peer_allowed(s, fd, &cred)) {
		say(fd,
		    "permission denied: blkbackd answers root and the members "
		    "of its control-group (blkbackd.conf)",
		    false);
		log_refusal(s, &cred);
		hang_up(fd);
		return;
	}
	c = free_slot(s, cred.pid);
	*c = (struct client){ .fd = fd,
			      .pid = cred.pid,
			      .uid = cred.uid,
			      .serial = ++s->next_serial,
			      .deadline_ms = now_ms() + CONTROL_REQUEST_MS };
	if (watch(s->epoll_fd, fd, EPOLLIN, (uint32_t)(c - s->clients),
		  EPOLL_CTL_ADD) < 0) {
		close(fd);
		c->fd = -1;
		return;
	}
	s->nr_clients++;
}

static void accept_clients(struct control_server *s)
{
	for (unsigned int n = 0; n < ACCEPTS_PER_RUN; n++) {
		int fd = accept4(s->listen_fd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		admit(s, fd);
	}
}

/* Write what the socket takes; the client goes once it has it all. */
static void write_reply(struct control_server *s, struct client *c)
{
	while (c->sent < c->reply_len) {
		ssize_t n = send(c->fd, c->reply + c->sent,
				 c->reply_len - c->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0)
			break;
		c->sent += (size_t)n;
	}
	drop(s, c);
}

/* The reply to @len bytes of request line: kept until the client took it. */
static void respond(struct control_server *s, struct daemon *d,
		    struct client *c, size_t len)
{
	/* A line ending "\r\n" is the same request. */
	struct control_later later = {
		.s = s,
		.client = c->serial,
		.privileged = c->uid == 0 || c->uid == s->own_uid,
	};

	if (len && c->line[len - 1] == '\r')
		len--;
	c->reply = control_reply(d, c->line, len, &c->reply_len, &later);
	/*
	 * Nothing to read from it meanwhile; a hang-up (EPOLLHUP, always
	 * reported) ends its wait.
	 */
	if (!c->reply && later.deferred) {
		c->waiting = true;
		c->deadline_ms = now_ms() + CONTROL_LATER_MS;
		if (watch(s->epoll_fd, c->fd, 0, (uint32_t)(c - s->clients),
			  EPOLL_CTL_MOD) < 0)
			drop(s, c);
		return;
	}
	if (!c->reply || watch(s->epoll_fd, c->fd, EPOLLOUT,
			       (uint32_t)(c - s->clients), EPOLL_CTL_MOD) < 0) {
		drop(s, c);
		return;
	}
	c->deadline_ms = now_ms() + CONTROL_REPLY_MS;
	write_reply(s, c);
}

static void read_request(struct control_server *s, struct daemon *d,
			 struct client *c)
{
	size_t room = sizeof(c->line) - c->got;
	ssize_t n = recv(c->fd, c->line + c->got, room, MSG_DONTWAIT);
	char *nl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Gone, or gone before a word (a daemon checking for a live one). */
	if (n < 0 || (n == 0 && c->got == 0)) {
		drop(s, c);
		return;
	}
	/* The end of its stream ends a request without a newline. */
	if (n == 0) {
		respond(s, d, c, c->got);
		return;
	}
	nl = memchr(c->line + c->got, '\n', (size_t)n);
	c->got += (size_t)n;
	if (nl) {
		respond(s, d, c, (size_t)(nl - c->line));
	} else if (c->got == sizeof(c->line)) {
		_Static_assert(CONTROL_REQUEST_MAX == 576, "said below");
		say(c->fd, "a request line is at most 575 bytes", true);
		drop(s, c);
	}
}

/* A client past its deadline: told if there is room, logged, closed. */
static void expire(struct control_server *s, struct client *c)
{
	if (c->waiting) {
		say(c->fd, "no answer within the time allowed", false);
		log_warn("control socket: pid %d (uid %u) got no answer "
			 "within %d ms: closed",
			 (int)c->pid, (unsigned int)c->uid, CONTROL_LATER_MS);
	} else if (c->reply) {
		log_warn("control socket: pid %d (uid %u) did not read its "
			 "reply (%zu of %zu bytes taken) within %d ms: closed",
			 (int)c->pid, (unsigned int)c->uid, c->sent,
			 c->reply_len, CONTROL_REPLY_MS);
	} else {
		say(c->fd, "no complete request line in time", false);
		log_warn("control socket: pid %d (uid %u) sent no complete "
			 "request within %d ms (%zu bytes): closed",
			 (int)c->pid, (unsigned int)c->uid, CONTROL_REQUEST_MS,
			 c->got);
	}
	drop(s, c);
}

void control_server_run(struct control_server *s, struct daemon *d)
{
	struct epoll_event evs[CONTROL_MAX_CLIENTS + 1];
	int n = epoll_wait(s->epoll_fd, evs, CONTROL_MAX_CLIENTS + 1, 0);
	int64_t now;

	for (int i = 0; i < n; i++) {
		struct client *c;

		if (evs[i].data.u32 == LISTEN_INDEX) {
			accept_clients(s);
			continue;
		}
		c = &s->clients[evs[i].data.u32];
		/* Dropped earlier in this batch (its slot may be new). */
		if (c->fd < 0)
			continue;
		/* It hung up before its answer came: nobody to tell. */
		if (c->waiting)
			drop(s, c);
		else if (c->reply)
			write_reply(s, c);
		else
			read_request(s, d, c);
	}
	now = now_ms();
	for (unsigned int i = 0; s->nr_clients && i < CONTROL_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0 && s->clients[i].deadline_ms <= now)
			expire(s, &s->clients[i]);
}

void control_server_answer(struct control_server *s, uint64_t client,
			   char *reply, size_t len)
{
	for (unsigned int i = 0; reply && i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = &s->clients[i];

		if (c->fd < 0 || !c->waiting || c->serial != client)
			continue;
		c->waiting = false;
		c->reply = reply;
		c->reply_len = len;
		c->deadline_ms = now_ms() + CONTROL_REPLY_MS;
		if (watch(s->epoll_fd, c->fd, EPOLLOUT, i, EPOLL_CTL_MOD) < 0)
			drop(s, c);
		else
			write_reply(s, c);
		return;
	}
	free(reply);
}

int control_server_timeout_ms(const struct control_server *s)
{
	int64_t soonest = INT64_MAX, now;

	if (!s->nr_clients)
		return -1;
	for (unsigned int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0 &&
		    s->clients[i].deadline_ms < soonest)
			soonest = s->clients[i].deadline_ms;
	now = now_ms();
	return soonest <= now ? 0 : (int)(soonest - now);
}

void control_server_close(struct control_server *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0)
			drop(s, &s->clients[i]);
	close(s->listen_fd);
	close(s->epoll_fd);
	close(s->lock_fd);
	free(s);
}

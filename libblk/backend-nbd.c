// SPDX-License-Identifier: MIT
/*
 * The NBD backend. Each I/O is a small sequence of NBD commands, one at a
 * time: a durable write is a flush, the write (with FUA, or followed by a
 * flush when the server has no FUA), because NBD servers may reorder the
 * commands in flight. libnbd's completion callbacks only record the
 * outcome; the steps advance and the engine hears of it after libnbd has
 * returned, from the watch events, so no engine code ever runs inside
 * libnbd.
 *
 * A dropped connection (libnbd's handle dead) is not the guest's error:
 * the commands it took down are held, a new handle connects with libnbd's
 * asynchronous connect on the same worker (a timerfd paces the attempts
 * and ends the wait), and the held commands start again from their first
 * step on it. Reads and writes of a block range are idempotent, and a
 * flush sent again covers at least what the lost one did.
 */
#include "libblk/backend-nbd.h"

#include <errno.h>
#include <inttypes.h>
#include <libnbd.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libblk/backend.h"
#include "libblk/dynlib.h"
#include "libblk/poll.h"

/*
 * libnbd, opened on first use (libblk/dynlib.h). The table is written
 * once, by load_libnbd() under pthread_once(), and only read after.
 */
/* clang-format off */
#define LIBNBD_FUNCTIONS(X) \
	X(nbd_create) \
	X(nbd_close) \
	X(nbd_set_uri_allow_local_file) \
	X(nbd_aio_connect_uri) \
	X(nbd_aio_is_ready) \
	X(nbd_aio_is_dead) \
	X(nbd_aio_is_closed) \
	X(nbd_get_error) \
	X(nbd_get_errno) \
	X(nbd_get_size) \
	X(nbd_is_read_only) \
	X(nbd_can_flush) \
	X(nbd_can_fua) \
	X(nbd_can_trim) \
	X(nbd_can_multi_conn) \
	X(nbd_aio_pread) \
	X(nbd_aio_pwrite) \
	X(nbd_aio_flush) \
	X(nbd_aio_trim) \
	X(nbd_aio_get_fd) \
	X(nbd_aio_get_direction) \
	X(nbd_aio_notify_read) \
	X(nbd_aio_notify_write) \
	X(nbd_aio_disconnect)
/* clang-format on */

static struct {
#define LIBNBD_SLOT(f) __typeof__(f) *f;
	LIBNBD_FUNCTIONS(LIBNBD_SLOT)
#undef LIBNBD_SLOT
} lib;
#define LIBNBD_NAME(f) #f,
static const char *const lib_names[] = { LIBNBD_FUNCTIONS(LIBNBD_NAME) };
#undef LIBNBD_NAME
_Static_assert(sizeof(lib) == sizeof(lib_names) / sizeof(lib_names[0]) *
				      sizeof(void *),
	       "lib is read as one void * slot a name");
static struct blk_dynlib libnbd = BLK_DYNLIB(
	"libnbd.so.0", "libnbd0", "NBD disks need libnbd", lib_names, &lib);

/*
 * The engine's watches. WAKE is a kick (fd -1: the next pass) when
 * commands finished outside an event, or else, while the server is away,
 * the timerfd of the next attempt or of the end of the wait.
 */
enum { WATCH_IN, WATCH_OUT, WATCH_WAKE, NR_WATCH };
_Static_assert(NR_WATCH <= BLK_BACKEND_MAX_WATCH, "the engine's watches");

/*
 * Between reconnection attempts: 100 ms, doubling up to 1 s while
 * requests wait (a server back within the wait is found within about a
 * second, however long it was away), and up to 5 s once the wait is over.
 */
#define RETRY_FIRST_MS 100u
#define RETRY_WAITING_MAX_MS 1000u
#define RETRY_MAX_MS 5000u
/* An attempt still connecting after this long is dropped and retried. */
#define ATTEMPT_MAX_MS 5000u
/* blk_nbd_connect() gives up after this long: an open's attempt. */
#define CONNECT_MAX_MS ATTEMPT_MAX_MS

enum link_state {
	LINK_UP, /* nb->h serves */
	LINK_WAITING, /* away: the next attempt at retry_ns */
	LINK_CONNECTING, /* away: nb->h connects, until attempt_end_ns */
};

enum cmd_step {
	STEP_PREFLUSH, /* durable write: what came before, on disk first */
	STEP_MAIN, /* the read, write, flush or trim itself */
	STEP_POSTFLUSH, /* durable write on a server without FUA */
	STEP_DONE,
};

struct nbd_backend;

struct nbd_cmd {
	struct nbd_backend *nb;
	struct nbd_cmd *next; /* on the finished or the held list */
	void *cookie;
	struct blk_backend_io io;
	enum cmd_step step;
	void *buf; /* contiguous data: io.iov[0], or a copy when scattered */
	bool copied;
	int error; /* errno of the first failed command, 0 while none */
	unsigned int gen; /* the handle its last step went to */
};

struct nbd_backend {
	struct blk_backend base; /* first: the engine needs it 16-aligned */
	struct nbd_handle *h; /* NULL between attempts */
	struct blk_nbd_export exp;
	struct nbd_cmd *finished; /* commands whose current step ended */
	bool watching[NR_WATCH];
	bool cancelling[NR_WATCH];
	unsigned int watch_gen[NR_WATCH]; /* the handle a watch was for */
	bool wake_is_timer; /* WATCH_WAKE waits on timer_fd */
	bool detached;

	/* Reconnection; see struct blk_nbd_link. Worker thread only. */
	struct blk_nbd_link *link;
	enum link_state state;
	unsigned int gen; /* counts handles, so old watches are told apart */
	struct nbd_cmd *held, **held_tail; /* waiting for a server, in order */
	unsigned int nr_held;
	int timer_fd;
	uint64_t down_ns; /* when the connection dropped; 0: never made */
	bool counted_down; /* counted in link->stats.down */
	uint64_t retry_ns; /* LINK_WAITING: the next attempt */
	uint64_t attempt_end_ns; /* LINK_CONNECTING: give the attempt up */
	unsigned int retry_ms;
	bool gave_up; /* the wait is over: requests fail at once */
	bool leaving; /* LINK_UP, but the server said it shuts down */
	uint64_t unflushed; /* writes completed since a flush completed */
};

static struct nbd_backend *to_nbd(struct blk_backend *b)
{
	return (struct nbd_backend *)b;
}

bool blk_nbd_is_uri(const char *target)
{
	static const char *const schemes[] = {
		"nbd://",	"nbds://",	"nbd+unix://",
		"nbds+unix://", "nbd+vsock://", "nbds+vsock://"
	};

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (strncmp(target, schemes[i], strlen(schemes[i])) == 0)
			return true;
	return false;
}

static int nbd_err(void)
{
	int err = lib.nbd_get_errno();

	return err ? -err : -EIO;
}

static void read_export(struct nbd_handle *h, struct blk_nbd_export *exp)
{
	int64_t size = lib.nbd_get_size(h);

	exp->size = size > 0 ? (uint64_t)size : 0;
	exp->readonly = lib.nbd_is_read_only(h) == 1;
	exp->can_flush = lib.nbd_can_flush(h) == 1;
	exp->can_fua = lib.nbd_can_fua(h) == 1;
	exp->can_trim = lib.nbd_can_trim(h) == 1;
	exp->multi_conn = lib.nbd_can_multi_conn(h) == 1;
}

/*
 * libnbd's synchronous connect waits for ever on a server that accepts
 * and never answers; this one gives up after @max_ms (-ETIMEDOUT). It
 * drives libnbd's asynchronous connect with poll(2) on the caller's
 * thread. A host name is still looked up synchronously, by libnbd.
 */
static int connect_within(struct nbd_handle *h, const char *uri,
			  unsigned int max_ms, char *why, size_t why_len)
{
	uint64_t end_ns = blk_now_ns() + (uint64_t)max_ms * 1000000u;

	if (lib.nbd_aio_connect_uri(h, uri) < 0)
		goto failed;
	while (lib.nbd_aio_is_ready(h) != 1) {
		uint64_t now = blk_now_ns();
		struct pollfd p = { .fd = -1 };
		unsigned int dir;
		int n;

		/* Before anything else asks libnbd: its error is the reason. */
		if (lib.nbd_aio_is_dead(h) == 1 ||
		    lib.nbd_aio_is_closed(h) == 1)
			goto failed;
		dir = lib.nbd_aio_get_direction(h);
		p.fd = lib.nbd_aio_get_fd(h);
		if (now >= end_ns) {
			snprintf(why, why_len,
				 "the server did not complete the NBD "
				 "handshake within %u s",
				 max_ms / 1000);
			return -ETIMEDOUT;
		}
		if (dir & LIBNBD_AIO_DIRECTION_READ)
			p.events |= POLLIN;
		if (dir & LIBNBD_AIO_DIRECTION_WRITE)
			p.events |= POLLOUT;
		n = poll(&p, 1, (int)((end_ns - now + 999999) / 1000000));
		if (n < 0 && errno != EINTR) {
			snprintf(why, why_len, "poll: %s", strerror(errno));
			return -errno;
		}
		if (n <= 0)
			continue;
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			lib.nbd_aio_notify_read(h);
		else if (p.revents & POLLOUT)
			lib.nbd_aio_notify_write(h);
	}
	return 0;
failed:
	snprintf(why, why_len, "%s", lib.nbd_get_error());
	/* A handshake the server cut short leaves libnbd no errno. */
	return lib.nbd_get_errno() ? nbd_err() : -ECONNRESET;
}

int blk_nbd_connect(const char *uri, bool readonly, struct nbd_handle **out,
		    struct blk_nbd_export *exp, char *why, size_t why_len)
{
	struct nbd_handle *h;
	int ret = blk_dynlib_ready(&libnbd, why, why_len);

	if (ret < 0)
		return ret;
	h = lib.nbd_create();
	if (!h) {
		snprintf(why, why_len, "%s", lib.nbd_get_error());
		return nbd_err();
	}
	/* A guest's disk line must not make us read local key files. */
	lib.nbd_set_uri_allow_local_file(h, false);
	ret = connect_within(h, uri, CONNECT_MAX_MS, why, why_len);
	if (ret < 0) {
		lib.nbd_close(h);
		return ret;
	}
	read_export(h, exp);
	if (exp->readonly && !readonly) {
		snprintf(why, why_len,
			 "the server exports it read-only; give the disk "
			 "access=ro, or export it writable");
		lib.nbd_close(h);
		return -EROFS;
	}
	*out = h;
	return 0;
}

/* ---- steps ---- */

/* libnbd's completion callback: note the outcome, nothing more. */
static int step_ended(void *user_data, int *error)
{
	struct nbd_cmd *cmd = user_data;

	if (*error && !cmd->error)
		cmd->error = *error;
	cmd->next = cmd->nb->finished;
	cmd->nb->finished = cmd;
	return 1; /* retire the command */
}

static bool scattered(const struct blk_backend_io *io)
{
	for (unsigned int i = 1; i < io->iovcnt; i++)
		if ((char *)io->iov[i - 1].iov_base + io->iov[i - 1].iov_len !=
		    io->iov[i].iov_base)
			return true;
	return false;
}

static void copy_iov(const struct blk_backend_io *io, void *buf, bool to_buf)
{
	char *p = buf;

	for (unsigned int i = 0; i < io->iovcnt; i++) {
		if (to_buf)
			memcpy(p, io->iov[i].iov_base, io->iov[i].iov_len);
		else
			memcpy(io->iov[i].iov_base, p, io->iov[i].iov_len);
		p += io->iov[i].iov_len;
	}
}

/* The data as one buffer, as NBD commands take it. */
static int gather_data(struct nbd_cmd *cmd)
{
	const struct blk_backend_io *io = &cmd->io;

	if (!scattered(io)) {
		cmd->buf = io->iov[0].iov_base;
		return 0;
	}
	cmd->buf = malloc(io->length);
	if (!cmd->buf)
		return -ENOMEM;
	cmd->copied = true;
	if (io->op == BLK_BACKEND_WRITE)
		copy_iov(io, cmd->buf, true);
	return 0;
}

static bool step_needed(const struct nbd_cmd *cmd, enum cmd_step step)
{
	const struct blk_nbd_export *exp = &cmd->nb->exp;
	bool durable = cmd->io.op == BLK_BACKEND_WRITE && cmd->io.durable;

	switch (step) {
	case STEP_PREFLUSH:
		return durable && exp->can_flush;
	case STEP_MAIN:
		/* A server that cannot flush has no cache to flush. */
		return cmd->io.op != BLK_BACKEND_FLUSH || exp->can_flush;
	case STEP_POSTFLUSH:
		return durable && exp->can_flush && !exp->can_fua;
	case STEP_DONE:
		break;
	}
	return false;
}

/* Issue the command of cmd->step; -errno when libnbd refuses it. */
static int issue_step(struct nbd_cmd *cmd)
{
	struct nbd_backend *nb = cmd->nb;
	nbd_completion_callback cb = { .callback = step_ended,
				       .user_data = cmd };
	const struct blk_backend_io *io = &cmd->io;
	uint32_t fua = nb->exp.can_fua && io->durable ? LIBNBD_CMD_FLAG_FUA : 0;
	int64_t r;

	cmd->gen = nb->gen;
	if (cmd->step != STEP_MAIN) {
		r = lib.nbd_aio_flush(nb->h, cb, 0);
	} else {
		switch (io->op) {
		case BLK_BACKEND_READ:
			r = lib.nbd_aio_pread(nb->h, cmd->buf, io->length,
					      io->offset, cb, 0);
			break;
		case BLK_BACKEND_WRITE:
			r = lib.nbd_aio_pwrite(nb->h, cmd->buf, io->length,
					       io->offset, cb, fua);
			break;
		case BLK_BACKEND_FLUSH:
			r = lib.nbd_aio_flush(nb->h, cb, 0);
			break;
		case BLK_BACKEND_DISCARD:
			if (!nb->exp.can_trim)
				return -EOPNOTSUPP;
			r = lib.nbd_aio_trim(nb->h, io->length, io->offset, cb,
					     0);
			break;
		default:
			return -EINVAL;
		}
	}
	return r < 0 ? nbd_err() : 0;
}

/*
 * Move @cmd to its next needed step and issue it. Returns true when there
 * is none left (or it failed): the command is over.
 */
static bool advance(struct nbd_cmd *cmd)
{
	while (!cmd->error && cmd->step != STEP_DONE) {
		int ret;

		cmd->step++;
		if (cmd->step == STEP_DONE || !step_needed(cmd, cmd->step))
			continue;
		ret = issue_step(cmd);
		if (ret == 0)
			return false;
		cmd->error = -ret;
	}
	return true;
}

static void free_cmd(struct nbd_cmd *cmd)
{
	if (cmd->copied)
		free(cmd->buf);
	free(cmd);
}

/* ---- what the operator hears ---- */

static void say(struct nbd_backend *nb, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(struct nbd_backend *nb, int priority, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!nb->link->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	nb->link->log(nb->link->log_arg, priority, msg);
}

/* Add @n to @counter; returns what it held before. */
static uint64_t count(atomic_uint_fast64_t *counter, long n)
{
	return atomic_fetch_add_explicit(counter, (uint_fast64_t)n,
					 memory_order_relaxed);
}

/* True for the first caller since the flag was cleared. */
static bool first_to_tell(atomic_bool *told)
{
	return !atomic_exchange_explicit(told, true, memory_order_relaxed);
}

static double seconds_since(uint64_t ns)
{
	return (double)(blk_now_ns() - ns) / 1e9;
}

/* ---- answers ---- */

/* What a completed command tells of the server's volatile cache. */
static void note_unflushed(struct nbd_backend *nb, const struct nbd_cmd *cmd)
{
	if (!nb->exp.can_flush)
		return;
	if (cmd->io.op == BLK_BACKEND_FLUSH ||
	    (cmd->io.op == BLK_BACKEND_WRITE && cmd->io.durable))
		nb->unflushed = 0;
	else if (cmd->io.op != BLK_BACKEND_READ)
		nb->unflushed++;
}

/* @cmd is over: its data out, its result to the engine. */
static void deliver(struct nbd_cmd *cmd)
{
	struct nbd_backend *nb = cmd->nb;
	int res = cmd->error ? -cmd->error : 0;

	if (!res && cmd->io.iov)
		res = (int)cmd->io.length;
	if (!cmd->error && cmd->copied && cmd->io.op == BLK_BACKEND_READ)
		copy_iov(&cmd->io, cmd->buf, false);
	if (!cmd->error)
		note_unflushed(nb, cmd);
	blk_backend_complete(nb->base.e, cmd->cookie, res);
	free_cmd(cmd);
}

/* ---- the connection's life ---- */

/* The handle can carry no more commands: the server went away. */
static bool link_lost(const struct nbd_backend *nb)
{
	return !nb->h || nb->state != LINK_UP ||
	       lib.nbd_aio_is_dead(nb->h) == 1 ||
	       lib.nbd_aio_is_closed(nb->h) == 1;
}

static void hold(struct nbd_backend *nb, struct nbd_cmd *cmd)
{
	cmd->next = NULL;
	*nb->held_tail = cmd;
	nb->held_tail = &cmd->next;
	nb->nr_held++;
}

static struct nbd_cmd *take_held(struct nbd_backend *nb)
{
	struct nbd_cmd *list = nb->held;

	nb->held = NULL;
	nb->held_tail = &nb->held;
	nb->nr_held = 0;
	return list;
}

/*
 * The connection dropped: from now on commands wait for the next one. The
 * disk's first connection to drop tells of the outage.
 */
static void link_down(struct nbd_backend *nb, int err)
{
	struct blk_nbd_outage *o = &nb->link->outage;

	if (nb->state != LINK_UP)
		return;
	nb->state = LINK_WAITING;
	nb->down_ns = blk_now_ns();
	nb->retry_ns = nb->down_ns;
	nb->retry_ms = RETRY_FIRST_MS;
	nb->gave_up = nb->link->timeout_ms == 0;
	count(&o->unflushed, (long)nb->unflushed);
	nb->unflushed = 0;
	nb->counted_down = true;
	if (count(&nb->link->stats.down, 1) != 0)
		return;
	atomic_store_explicit(&o->told_wait_over, false, memory_order_relaxed);
	atomic_store_explicit(&o->told_refusal, false, memory_order_relaxed);
	count(&nb->link->stats.lost, 1);
	if (nb->gave_up)
		say(nb, LOG_ERR,
		    "the NBD server went away (%s); requests fail with EIO "
		    "until blkbackd has reconnected to %s",
		    strerror(err), nb->link->uri);
	else
		say(nb, LOG_WARNING,
		    "the NBD server went away (%s); requests wait up to %u s "
		    "while blkbackd reconnects to %s",
		    strerror(err), nb->link->timeout_ms / 1000, nb->link->uri);
}

/* Fail what waits: the server stayed away too long. */
static void give_up(struct nbd_backend *nb)
{
	unsigned int n = nb->nr_held;
	struct nbd_cmd *cmd = take_held(nb);

	nb->gave_up = true;
	count(&nb->link->stats.timed_out, n);
	if (first_to_tell(&nb->link->outage.told_wait_over))
		say(nb, LOG_ERR,
		    "the NBD server is still away after %.1f s: the "
		    "waiting requests fail with EIO, and new ones until it "
		    "is back; still trying %s",
		    seconds_since(nb->down_ns), nb->link->uri);
	while (cmd) {
		struct nbd_cmd *next = cmd->next;

		cmd->error = EIO;
		deliver(cmd);
		cmd = next;
	}
}

static void close_handle(struct nbd_backend *nb)
{
	if (!nb->h)
		return;
	lib.nbd_close(nb->h);
	nb->h = NULL;
}

/*
 * This attempt failed (@why): the next one later, each wait twice the
 * last up to the cap.
 */
static void attempt_failed(struct nbd_backend *nb, const char *why)
{
	unsigned int cap = nb->gave_up ? RETRY_MAX_MS : RETRY_WAITING_MAX_MS;
	unsigned int wait_ms = nb->retry_ms < cap ? nb->retry_ms : cap;

	say(nb, LOG_DEBUG, "reconnecting to %s failed (%s); next try in %u ms",
	    nb->link->uri, why, wait_ms);
	close_handle(nb);
	nb->state = LINK_WAITING;
	nb->retry_ns = blk_now_ns() + (uint64_t)wait_ms * 1000000u;
	nb->retry_ms = nb->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS
						       : nb->retry_ms * 2;
}

static void try_connect(struct nbd_backend *nb)
{
	close_handle(nb);
	nb->gen++;
	nb->h = lib.nbd_create();
	if (!nb->h) {
		attempt_failed(nb, lib.nbd_get_error());
		return;
	}
	lib.nbd_set_uri_allow_local_file(nb->h, false);
	if (lib.nbd_aio_connect_uri(nb->h, nb->link->uri) < 0) {
		attempt_failed(nb, lib.nbd_get_error());
		return;
	}
	nb->state = LINK_CONNECTING;
	nb->attempt_end_ns = blk_now_ns() + ATTEMPT_MAX_MS * 1000000ull;
}

/* Why the export that answered is not the disk's, or NULL. */
static const char *export_unfit(const struct nbd_backend *nb,
				const struct blk_nbd_export *exp)
{
	if (exp->size < nb->link->size)
		return "its export is smaller than the disk the guest has";
	if (exp->readonly && !nb->link->readonly)
		return "its export is read-only now";
	if (nb->link->multi_conn && !exp->multi_conn)
		return "its export no longer allows a connection per queue";
	return NULL;
}

static bool begin(struct nbd_cmd *cmd);
static void send_or_hold(struct nbd_cmd *cmd);

/* The disk's last connection is back: tell the outage's end, once. */
static void outage_over(struct nbd_backend *nb)
{
	struct blk_nbd_outage *o = &nb->link->outage;
	uint64_t resent =
		atomic_exchange_explicit(&o->resent, 0, memory_order_relaxed);
	uint64_t unflushed = atomic_exchange_explicit(&o->unflushed, 0,
						      memory_order_relaxed);

	count(&nb->link->stats.restored, 1);
	say(nb, LOG_NOTICE,
	    "the NBD server is back after %.1f s; "
	    "%" PRIu64 " requests sent again",
	    seconds_since(nb->down_ns), resent);
	if (unflushed)
		say(nb, LOG_WARNING,
		    "%" PRIu64 " writes the server had acknowledged but not "
		    "flushed before it went away are durable only if it kept "
		    "its cache",
		    unflushed);
}

/* The new handle is in transmission: check it, then send what waited. */
static void link_up(struct nbd_backend *nb)
{
	struct blk_nbd_export exp;
	const char *unfit;
	struct nbd_cmd *cmd;

	read_export(nb->h, &exp);
	unfit = export_unfit(nb, &exp);
	if (unfit) {
		if (first_to_tell(&nb->link->outage.told_refusal))
			say(nb, LOG_ERR,
			    "the NBD server at %s is back but refused: %s "
			    "(%" PRIu64 " bytes, the disk has %" PRIu64 "); "
			    "still trying",
			    nb->link->uri, unfit, exp.size, nb->link->size);
		attempt_failed(nb, unfit);
		return;
	}
	nb->exp = exp;
	nb->state = LINK_UP;
	nb->leaving = false;
	nb->gave_up = false;
	if (nb->counted_down) {
		nb->counted_down = false;
		count(&nb->link->stats.resent, nb->nr_held);
		count(&nb->link->outage.resent, nb->nr_held);
		if (count(&nb->link->stats.down, -1) == 1)
			outage_over(nb);
	}
	cmd = take_held(nb);
	while (cmd) {
		struct nbd_cmd *next = cmd->next;

		cmd->error = 0;
		cmd->step = STEP_PREFLUSH;
		send_or_hold(cmd);
		cmd = next;
	}
}

/* LINK_CONNECTING: how far libnbd got. */
static void check_attempt(struct nbd_backend *nb)
{
	if (lib.nbd_aio_is_ready(nb->h) == 1)
		link_up(nb);
	else if (lib.nbd_aio_is_dead(nb->h) == 1 ||
		 lib.nbd_aio_is_closed(nb->h) == 1)
		attempt_failed(nb, lib.nbd_get_error());
	else if (blk_now_ns() >= nb->attempt_end_ns)
		attempt_failed(nb, "the handshake took too long");
}

/*
 * When requests stop waiting for the server: the disk's timeout after a
 * connection was lost; a first connection (the backend was made without
 * one) gets at least what blk_nbd_connect() would have given it.
 */
static uint64_t wait_end_ns(const struct nbd_backend *nb)
{
	unsigned int ms = nb->link->timeout_ms;

	if (!nb->counted_down && ms < CONNECT_MAX_MS)
		ms = CONNECT_MAX_MS;
	return nb->down_ns + (uint64_t)ms * 1000000u;
}

/* Whatever time brought: an attempt due, or the end of the wait. */
static void check_clock(struct nbd_backend *nb)
{
	uint64_t now = blk_now_ns();

	if (nb->state == LINK_UP)
		return;
	if (!nb->gave_up && now >= wait_end_ns(nb))
		give_up(nb);
	if (nb->state == LINK_WAITING && now >= nb->retry_ns) {
		try_connect(nb);
		if (nb->state == LINK_CONNECTING)
			check_attempt(nb);
	}
}

/* When the timer must next wake us while the server is away. */
static uint64_t next_deadline(const struct nbd_backend *nb)
{
	uint64_t t = nb->state == LINK_WAITING ? nb->retry_ns
					       : nb->attempt_end_ns;
	uint64_t wait_end = wait_end_ns(nb);

	if (!nb->gave_up && wait_end < t)
		t = wait_end;
	return t;
}

static void set_timer(struct nbd_backend *nb, uint64_t at_ns)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(at_ns / 1000000000u),
			      .tv_nsec = (long)(at_ns % 1000000000u) },
	};

	/* 0 would disarm it: a deadline past is due at once. */
	if (!at_ns)
		its.it_value.tv_nsec = 1;
	timerfd_settime(nb->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* ---- steps, on the current handle ---- */

/*
 * The server answered NBD_ESHUTDOWN: it is stopping (a restart, an
 * upgrade), and asks us to go. What it refuses, and what comes meanwhile,
 * waits as for a drop; the commands it still answers are answered. Our
 * NBD_CMD_DISC lets it close the connection, and the drop that follows
 * starts the reconnection.
 */
static void server_leaving(struct nbd_backend *nb)
{
	if (nb->leaving)
		return;
	nb->leaving = true;
	say(nb, LOG_DEBUG, "the NBD server at %s is shutting down",
	    nb->link->uri);
	lib.nbd_aio_disconnect(nb->h, 0);
}

/* A command over: answered, or held when the connection took it down. */
static void finish_cmd(struct nbd_cmd *cmd)
{
	struct nbd_backend *nb = cmd->nb;

	if (cmd->error == ESHUTDOWN && nb->state == LINK_UP) {
		server_leaving(nb);
		hold(nb, cmd);
		return;
	}
	if (cmd->error && (link_lost(nb) || cmd->gen != nb->gen)) {
		link_down(nb, cmd->error);
		if (!nb->gave_up) {
			hold(nb, cmd);
			return;
		}
		count(&nb->link->stats.timed_out, 1);
		cmd->error = EIO;
	}
	deliver(cmd);
}

/* Start @cmd on the handle, or keep it for the next one. */
static void send_or_hold(struct nbd_cmd *cmd)
{
	struct nbd_backend *nb = cmd->nb;

	if (nb->state != LINK_UP || nb->leaving) {
		hold(nb, cmd);
		return;
	}
	if (begin(cmd)) {
		/* Refused at once, or nothing to send: answered next. */
		cmd->next = nb->finished;
		nb->finished = cmd;
	}
}

/* Every command whose step ended: on to the next step, or answered. */
static void run_finished(struct nbd_backend *nb)
{
	while (nb->finished) {
		struct nbd_cmd *cmd = nb->finished;

		nb->finished = cmd->next;
		if (advance(cmd))
			finish_cmd(cmd);
	}
}

/* ---- watching the connection ---- */

static void watch(struct nbd_backend *nb, unsigned int which, int fd,
		  unsigned int events)
{
	if (nb->watching[which])
		return;
	if (blk_backend_watch(&nb->base, fd, events, which) == 0) {
		nb->watching[which] = true;
		nb->watch_gen[which] = nb->gen;
	}
}

static void unwatch(struct nbd_backend *nb, unsigned int which)
{
	if (nb->watching[which] && !nb->cancelling[which] &&
	    blk_backend_unwatch(&nb->base, which) == 0)
		nb->cancelling[which] = true;
}

/* WAKE: now, for callbacks that ran outside an event; else the timer. */
static void rearm_wake(struct nbd_backend *nb)
{
	if (nb->finished) {
		if (nb->wake_is_timer)
			unwatch(nb, WATCH_WAKE); /* its event is the kick */
		else
			watch(nb, WATCH_WAKE, -1, 0);
		return;
	}
	if (nb->state == LINK_UP) {
		if (nb->wake_is_timer)
			unwatch(nb, WATCH_WAKE);
		return;
	}
	set_timer(nb, next_deadline(nb));
	if (!nb->watching[WATCH_WAKE]) {
		watch(nb, WATCH_WAKE, nb->timer_fd, POLLIN);
		nb->wake_is_timer = nb->watching[WATCH_WAKE];
	}
}

/*
 * Watch what libnbd waits for. A watch still armed for an older handle
 * is cancelled; its event frees the slot for this one.
 */
static void rearm_socket(struct nbd_backend *nb)
{
	unsigned int dir;
	int fd;

	for (unsigned int w = WATCH_IN; w <= WATCH_OUT; w++)
		if (nb->watching[w] && nb->watch_gen[w] != nb->gen)
			unwatch(nb, w);
	if (nb->state == LINK_WAITING || !nb->h)
		return;
	fd = lib.nbd_aio_get_fd(nb->h);
	if (fd < 0)
		return; /* dead: the event that said so is being handled */
	dir = lib.nbd_aio_get_direction(nb->h);
	if (dir & LIBNBD_AIO_DIRECTION_READ)
		watch(nb, WATCH_IN, fd, POLLIN);
	if (dir & LIBNBD_AIO_DIRECTION_WRITE)
		watch(nb, WATCH_OUT, fd, POLLOUT);
}

static void rearm(struct nbd_backend *nb)
{
	if (nb->detached)
		return;
	rearm_socket(nb);
	rearm_wake(nb);
}

/* The handle died with nothing in flight: nobody else will notice. */
static void check_idle_handle(struct nbd_backend *nb)
{
	if (nb->state == LINK_UP && link_lost(nb))
		link_down(nb, ENOTCONN);
}

/*
 * The socket can be read now, or has hung up. A poll's completion may be
 * stale by the time it is handled: libnbd also reads by itself (during
 * its handshake, and while a send waits for room), and may have taken
 * what the poll saw. Told of a read with nothing to read, libnbd waits in
 * REPLY.START for a reply, and a command queued meanwhile is not sent
 * until a reply comes: with nothing in flight, never (a guest's flush
 * then hung for good).
 */
static bool still_readable(const struct nbd_backend *nb)
{
	struct pollfd p = { .fd = lib.nbd_aio_get_fd(nb->h), .events = POLLIN };

	return p.fd >= 0 && poll(&p, 1, 0) > 0;
}

static void nbd_event(struct blk_backend *b, unsigned int which, int res)
{
	struct nbd_backend *nb = to_nbd(b);
	uint64_t expirations;
	bool current = nb->watch_gen[which] == nb->gen && nb->h;

	nb->watching[which] = false;
	nb->cancelling[which] = false;
	if (which == WATCH_WAKE && nb->wake_is_timer) {
		nb->wake_is_timer = false;
		if (read(nb->timer_fd, &expirations, sizeof(expirations)) < 0)
			expirations = 0; /* not due yet: EAGAIN */
	} else if (res > 0 && current && which == WATCH_IN &&
		   still_readable(nb)) {
		lib.nbd_aio_notify_read(nb->h);
	} else if (res > 0 && current && which == WATCH_OUT) {
		lib.nbd_aio_notify_write(nb->h);
	}
	/* Closing, with no I/O left: no more reconnecting, nothing to say. */
	if (nb->detached)
		return;
	if (nb->state == LINK_CONNECTING)
		check_attempt(nb);
	/*
	 * Twice: first what the connection finished, answered before a dead
	 * link holds the rest for resending; then what the clock ended (the
	 * wait given up: held requests fail).
	 */
	run_finished(nb);
	check_idle_handle(nb);
	check_clock(nb);
	run_finished(nb);
	rearm(nb);
}

/* ---- the backend ---- */

/* Issue @cmd's first needed step. True when it is over already. */
static bool begin(struct nbd_cmd *cmd)
{
	int ret;

	if (!step_needed(cmd, STEP_PREFLUSH))
		return advance(cmd);
	ret = issue_step(cmd);
	if (ret < 0)
		cmd->error = -ret;
	return ret < 0;
}

static int nbd_submit(struct blk_backend *b, const struct blk_backend_io *io,
		      void *cookie)
{
	struct nbd_backend *nb = to_nbd(b);
	struct nbd_cmd *cmd;
	int ret;

	if (nb->state != LINK_UP && nb->gave_up)
		return -EIO; /* the server stays away; nothing queued */
	if (!nb->down_ns && nb->state == LINK_WAITING) {
		/* The first request of a backend made without a connection. */
		nb->down_ns = blk_now_ns();
		nb->retry_ns = nb->down_ns;
	}
	cmd = calloc(1, sizeof(*cmd));
	if (!cmd)
		return -ENOMEM;
	*cmd = (struct nbd_cmd){
		.nb = nb, .cookie = cookie, .io = *io, .step = STEP_PREFLUSH
	};
	ret = io->iov ? gather_data(cmd) : 0;
	if (ret < 0) {
		free(cmd);
		return ret;
	}
	send_or_hold(cmd);
	rearm(nb);
	return 1;
}

static void nbd_detach(struct blk_backend *b)
{
	struct nbd_backend *nb = to_nbd(b);

	nb->detached = true;
	unwatch(nb, WATCH_IN);
	unwatch(nb, WATCH_OUT);
	if (nb->wake_is_timer)
		unwatch(nb, WATCH_WAKE);
}

static void nbd_destroy(struct blk_backend *b)
{
	struct nbd_backend *nb = to_nbd(b);

	if (nb->counted_down)
		count(&nb->link->stats.down, -1);
	close_handle(nb);
	close(nb->timer_fd);
	free(nb);
}

static const struct blk_backend_ops nbd_ops = {
	.submit = nbd_submit,
	.event = nbd_event,
	.detach = nbd_detach,
	.destroy = nbd_destroy,
};

int blk_backend_nbd_new(struct nbd_handle *h, const struct blk_nbd_export *exp,
			struct blk_nbd_link *link, struct blk_backend **out)
{
	struct nbd_backend *nb = calloc(1, sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	nb->timer_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (nb->timer_fd < 0) {
		free(nb);
		return -errno;
	}
	nb->base.ops = &nbd_ops;
	nb->h = h;
	if (!h) {
		nb->state = LINK_WAITING;
		nb->retry_ms = RETRY_FIRST_MS;
	}
	nb->exp = *exp;
	nb->link = link;
	nb->held_tail = &nb->held;
	*out = &nb->base;
	return 0;
}

void blk_nbd_link_read(struct blk_nbd_link_stats *s,
		       struct blk_nbd_link_counts *out)
{
	*out = (struct blk_nbd_link_counts){
		.lost = atomic_load_explicit(&s->lost, memory_order_relaxed),
		.restored = atomic_load_explicit(&s->restored,
						 memory_order_relaxed),
		.resent =
			atomic_load_explicit(&s->resent, memory_order_relaxed),
		.timed_out = atomic_load_explicit(&s->timed_out,
						  memory_order_relaxed),
		.down = atomic_load_explicit(&s->down, memory_order_relaxed),
	};
}

void blk_nbd_close(struct nbd_handle *h)
{
	if (h)
		lib.nbd_close(h);
}

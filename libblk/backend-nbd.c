// SPDX-License-Identifier: MIT
/*
 * The NBD backend. Each I/O is a small sequence of NBD commands, one at a
 * time: a durable write is a flush, the write (with FUA, or followed by a
 * flush when the server has no FUA), because NBD servers may reorder the
 * commands in flight. libnbd's completion callbacks only record the
 * outcome; the steps advance and the engine hears of it after libnbd has
 * returned, from the watch events, so no engine code ever runs inside
 * libnbd.
 */
#include "libblk/backend-nbd.h"

#include <errno.h>
#include <libnbd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/backend.h"
#include "libblk/dynlib.h"

/*
 * libnbd, opened on first use (libblk/dynlib.h). The table is written
 * once, by load_libnbd() under pthread_once(), and only read after.
 */
/* clang-format off */
#define LIBNBD_FUNCTIONS(X) \
	X(nbd_create) \
	X(nbd_close) \
	X(nbd_set_uri_allow_local_file) \
	X(nbd_connect_uri) \
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
	X(nbd_aio_notify_write)
/* clang-format on */

#define LIBNBD_SONAME "libnbd.so.0"

static struct {
#define LIBNBD_SLOT(f) __typeof__(f) *f;
	LIBNBD_FUNCTIONS(LIBNBD_SLOT)
#undef LIBNBD_SLOT
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_error;
static char lib_why[256];

static void load_libnbd(void)
{
	void *h = blk_dynlib_open(LIBNBD_SONAME, "libnbd0", lib_why,
				  sizeof(lib_why));

	if (!h) {
		lib_error = -ENOENT;
		return;
	}
#define LIBNBD_RESOLVE(f)                                            \
	if (!lib_error)                                              \
		lib_error = blk_dynlib_sym(h, LIBNBD_SONAME, #f,     \
					   (void **)&lib.f, lib_why, \
					   sizeof(lib_why));
	LIBNBD_FUNCTIONS(LIBNBD_RESOLVE)
#undef LIBNBD_RESOLVE
}

/* libnbd is there to use; otherwise -errno and why. */
static int libnbd_ready(char *why, size_t why_len)
{
	pthread_once(&lib_once, load_libnbd);
	if (lib_error)
		snprintf(why, why_len, "NBD disks need libnbd: %s", lib_why);
	return lib_error;
}

enum { WATCH_IN, WATCH_OUT, WATCH_KICK };

enum cmd_step {
	STEP_PREFLUSH, /* durable write: what came before, on disk first */
	STEP_MAIN, /* the read, write, flush or trim itself */
	STEP_POSTFLUSH, /* durable write on a server without FUA */
	STEP_DONE,
};

struct nbd_backend;

struct nbd_cmd {
	struct nbd_backend *nb;
	struct nbd_cmd *next; /* on the finished list */
	void *cookie;
	struct blk_backend_io io;
	enum cmd_step step;
	void *buf; /* contiguous data: io.iov[0], or a copy when scattered */
	bool copied;
	int error; /* errno of the first failed command, 0 while none */
};

struct nbd_backend {
	struct blk_backend base; /* first: the engine needs it 16-aligned */
	struct nbd_handle *h;
	struct blk_nbd_export exp;
	struct nbd_cmd *finished; /* commands whose current step ended */
	bool watching[3];
	bool detached;
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

int blk_nbd_connect(const char *uri, bool readonly, struct nbd_handle **out,
		    struct blk_nbd_export *exp, char *why, size_t why_len)
{
	struct nbd_handle *h;
	int ret = libnbd_ready(why, why_len);

	if (ret < 0)
		return ret;
	h = lib.nbd_create();
	if (!h) {
		snprintf(why, why_len, "%s", lib.nbd_get_error());
		return nbd_err();
	}
	/* A guest's disk line must not make us read local key files. */
	lib.nbd_set_uri_allow_local_file(h, false);
	if (lib.nbd_connect_uri(h, uri) < 0) {
		ret = nbd_err();
		snprintf(why, why_len, "%s", lib.nbd_get_error());
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

/* @cmd is over: its data out, its result to the engine. */
static void deliver(struct nbd_cmd *cmd)
{
	struct nbd_backend *nb = cmd->nb;
	int res = cmd->error ? -cmd->error : 0;

	if (!res && cmd->io.iov)
		res = (int)cmd->io.length;
	if (!cmd->error && cmd->copied && cmd->io.op == BLK_BACKEND_READ)
		copy_iov(&cmd->io, cmd->buf, false);
	blk_backend_complete(nb->base.e, cmd->cookie, res);
	free_cmd(cmd);
}

/* Every command whose step ended: on to the next step, or answered. */
static void run_finished(struct nbd_backend *nb)
{
	while (nb->finished) {
		struct nbd_cmd *cmd = nb->finished;

		nb->finished = cmd->next;
		if (advance(cmd))
			deliver(cmd);
	}
}

/* ---- watching the connection ---- */

static void watch(struct nbd_backend *nb, unsigned int which, int fd,
		  unsigned int events)
{
	if (nb->watching[which])
		return;
	if (blk_backend_watch(&nb->base, fd, events, which) == 0)
		nb->watching[which] = true;
}

/*
 * Watch what libnbd waits for, and come back at once for callbacks that
 * ran outside an event (libnbd may finish a step while a command is
 * being issued).
 */
static void rearm(struct nbd_backend *nb)
{
	unsigned int dir;
	int fd;

	if (nb->detached)
		return;
	if (nb->finished)
		watch(nb, WATCH_KICK, -1, 0);
	fd = lib.nbd_aio_get_fd(nb->h);
	if (fd < 0)
		return; /* dead: nothing more will come */
	dir = lib.nbd_aio_get_direction(nb->h);
	if (dir & LIBNBD_AIO_DIRECTION_READ)
		watch(nb, WATCH_IN, fd, POLLIN);
	if (dir & LIBNBD_AIO_DIRECTION_WRITE)
		watch(nb, WATCH_OUT, fd, POLLOUT);
}

static void nbd_event(struct blk_backend *b, unsigned int which, int res)
{
	struct nbd_backend *nb = to_nbd(b);

	nb->watching[which] = false;
	if (res > 0 && which == WATCH_IN)
		lib.nbd_aio_notify_read(nb->h);
	else if (res > 0 && which == WATCH_OUT)
		lib.nbd_aio_notify_write(nb->h);
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
	struct nbd_cmd *cmd = calloc(1, sizeof(*cmd));
	int ret;

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
	if (begin(cmd)) {
		if (cmd->error) {
			/* Refused at once (a dead connection): nothing sent. */
			ret = -cmd->error;
			free_cmd(cmd);
			return ret;
		}
		/* Nothing to send (a flush with no cache): answered next. */
		cmd->next = nb->finished;
		nb->finished = cmd;
	}
	rearm(nb);
	return 1;
}

static void nbd_detach(struct blk_backend *b)
{
	struct nbd_backend *nb = to_nbd(b);

	nb->detached = true;
	if (nb->watching[WATCH_IN])
		blk_backend_unwatch(b, WATCH_IN);
	if (nb->watching[WATCH_OUT])
		blk_backend_unwatch(b, WATCH_OUT);
}

static void nbd_destroy(struct blk_backend *b)
{
	struct nbd_backend *nb = to_nbd(b);

	lib.nbd_close(nb->h);
	free(nb);
}

static const struct blk_backend_ops nbd_ops = {
	.submit = nbd_submit,
	.event = nbd_event,
	.detach = nbd_detach,
	.destroy = nbd_destroy,
};

int blk_backend_nbd_new(struct nbd_handle *h, const struct blk_nbd_export *exp,
			struct blk_backend **out)
{
	struct nbd_backend *nb = calloc(1, sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	nb->base.ops = &nbd_ops;
	nb->h = h;
	nb->exp = *exp;
	*out = &nb->base;
	return 0;
}

void blk_nbd_close(struct nbd_handle *h)
{
	if (h)
		lib.nbd_close(h);
}

// SPDX-License-Identifier: MIT
/*
 * The RBD backend. librbd completes I/O on its own threads; the callback
 * there only queues the finished command (under a mutex) and bumps the
 * backend's eventfd. The worker, woken through its io_uring, takes the
 * queue and carries on: a durable write is a flush, the write, a flush,
 * one after the other (librbd may keep writes in its cache, and nothing
 * orders commands in flight), and the result goes to the engine.
 */
#include "libblk/backend-rbd.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <rados/librados.h>
#include <rbd/librbd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "libblk/backend.h"
#include "libblk/dynlib.h"

#define RBD_PREFIX "rbd:"
/*
 * The image metadata key under which the lock's holder names itself (the
 * VM whose disk it is), for another host's daemon that finds the lock
 * taken: see blk_rbd_open().
 */
#define OWNER_KEY "blkbackd.owner"
/* How long a connect may take before the disk fails (seconds). */
#define MOUNT_TIMEOUT "20"

/*
 * librbd and librados, opened on first use (libblk/dynlib.h; librbd
 * brings librados in, and dlsym() finds both). The table is written once,
 * by load_librbd() under pthread_once(), and only read after.
 */
/* clang-format off */
#define LIBRBD_FUNCTIONS(X) \
	X(rados_create) \
	X(rados_conf_read_file) \
	X(rados_conf_set) \
	X(rados_connect) \
	X(rados_ioctx_create) \
	X(rados_ioctx_destroy) \
	X(rados_shutdown) \
	X(rbd_open) \
	X(rbd_open_read_only) \
	X(rbd_close) \
	X(rbd_get_size) \
	X(rbd_get_features) \
	X(rbd_lock_acquire) \
	X(rbd_lock_release) \
	X(rbd_metadata_get) \
	X(rbd_metadata_set) \
	X(rbd_metadata_remove) \
	X(rbd_aio_create_completion) \
	X(rbd_aio_get_return_value) \
	X(rbd_aio_release) \
	X(rbd_aio_readv) \
	X(rbd_aio_writev) \
	X(rbd_aio_flush) \
	X(rbd_aio_discard) \
	X(rbd_flush) \
	X(rbd_snap_create) \
	X(rbd_create) \
	X(rbd_update_features) \
	X(rbd_remove) \
	X(rbd_read) \
	X(rbd_write) \
	X(rbd_write_zeroes)
/* clang-format on */

static struct {
#define LIBRBD_SLOT(f) __typeof__(f) *f;
	LIBRBD_FUNCTIONS(LIBRBD_SLOT)
#undef LIBRBD_SLOT
} lib;
#define LIBRBD_NAME(f) #f,
static const char *const lib_names[] = { LIBRBD_FUNCTIONS(LIBRBD_NAME) };
#undef LIBRBD_NAME
_Static_assert(sizeof(lib) == sizeof(lib_names) / sizeof(lib_names[0]) *
				      sizeof(void *),
	       "lib is read as one void * slot a name");
static struct blk_dynlib librbd = BLK_DYNLIB(
	"librbd.so.1", "librbd1", "RBD disks need librbd", lib_names, &lib);

struct blk_rbd {
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	bool locked; /* the exclusive lock is ours */
	bool named; /* our owner record is in the image's metadata */
};

/* ---- opening ---- */

struct rbd_target {
	char *copy; /* the pieces below point into it */
	const char *pool, *image, *snap, *conf, *id;
};

bool blk_rbd_is_target(const char *target)
{
	return strncmp(target, RBD_PREFIX, strlen(RBD_PREFIX)) == 0;
}

/* "rbd:POOL/IMAGE[@SNAP][:conf=PATH][:id=NAME]" */
static int parse_target(const char *target, struct rbd_target *t, char *why,
			size_t why_len)
{
	char *spec, *opt, *save = NULL;

	memset(t, 0, sizeof(*t));
	t->copy = strdup(target + strlen(RBD_PREFIX));
	if (!t->copy)
		return -ENOMEM;
	spec = strtok_r(t->copy, ":", &save);
	while ((opt = strtok_r(NULL, ":", &save))) {
		if (strncmp(opt, "conf=", 5) == 0) {
			t->conf = opt + 5;
		} else if (strncmp(opt, "id=", 3) == 0) {
			t->id = opt + 3;
		} else {
			snprintf(why, why_len,
				 "unknown RBD option '%s' (conf= and id= are "
				 "known)",
				 opt);
			return -EINVAL;
		}
	}
	if (!spec || !strchr(spec, '/')) {
		snprintf(why, why_len,
			 "an RBD target is rbd:POOL/IMAGE[@SNAP][:conf=PATH]"
			 "[:id=NAME]");
		return -EINVAL;
	}
	t->pool = spec;
	t->image = strchr(spec, '/');
	*(char *)t->image++ = '\0';
	t->snap = strchr(t->image, '@');
	if (t->snap)
		*(char *)t->snap++ = '\0';
	if (!*t->pool || !*t->image || (t->snap && !*t->snap)) {
		snprintf(why, why_len, "empty pool, image or snapshot name");
		return -EINVAL;
	}
	return 0;
}

static int connect_cluster(struct blk_rbd *r, const struct rbd_target *t,
			   char *why, size_t why_len)
{
	int ret = lib.rados_create(&r->cluster, t->id);

	if (ret < 0) {
		snprintf(why, why_len, "rados_create: %s", strerror(-ret));
		r->cluster = NULL;
		return ret;
	}
	ret = lib.rados_conf_read_file(r->cluster, t->conf);
	if (ret < 0) {
		snprintf(why, why_len,
			 "cannot read the Ceph configuration %s: %s",
			 t->conf ? t->conf : "(default)", strerror(-ret));
		return ret;
	}
	lib.rados_conf_set(r->cluster, "client_mount_timeout", MOUNT_TIMEOUT);
	ret = lib.rados_connect(r->cluster);
	if (ret < 0) {
		snprintf(why, why_len, "cannot reach the Ceph cluster: %s",
			 strerror(-ret));
		return ret;
	}
	ret = lib.rados_ioctx_create(r->cluster, t->pool, &r->ioctx);
	if (ret < 0) {
		snprintf(why, why_len, "pool %s: %s", t->pool, strerror(-ret));
		r->ioctx = NULL;
	}
	return ret;
}

/* The owner the lock's holder recorded, or "" (none, or unreadable). */
static void read_owner(struct blk_rbd *r, struct blk_rbd_owner *o)
{
	size_t len = o->holder_len;

	if (lib.rbd_metadata_get(r->image, OWNER_KEY, o->holder, &len) < 0)
		len = 0;
	o->holder[len < o->holder_len ? len : o->holder_len - 1] = '\0';
}

/*
 * Keep other writers out for as long as the image is open: with the lock
 * taken explicitly, librbd does not hand it over when another client asks.
 * The holder then names its owner in the image's metadata; a failure to
 * is no failure of the open (another host then refuses the disk, as it
 * would without the name).
 */
static int lock_image(struct blk_rbd *r, struct blk_rbd_owner *o, char *why,
		      size_t why_len)
{
	uint64_t features = 0;
	int ret;

	if (lib.rbd_get_features(r->image, &features) < 0 ||
	    !(features & RBD_FEATURE_EXCLUSIVE_LOCK))
		return 0;
	ret = lib.rbd_lock_acquire(r->image, RBD_LOCK_MODE_EXCLUSIVE);
	if (ret == -EROFS || ret == -EBUSY) {
		/*
		 * librbd says -EROFS for a lock held elsewhere, which would
		 * read "Read-only file system": name the holder instead.
		 */
		read_owner(r, o);
		snprintf(why, why_len,
			 "another client holds its exclusive lock%s%s%s; "
			 "detach it there, or give every user access=ro",
			 o->holder[0] ? " (the disk of " : "", o->holder,
			 o->holder[0] ? ")" : "");
		return -EBUSY;
	}
	if (ret < 0) {
		snprintf(why, why_len, "cannot take its exclusive lock: %s",
			 strerror(-ret));
		return ret;
	}
	r->locked = true;
	r->named = o->self && o->self[0] &&
		   lib.rbd_metadata_set(r->image, OWNER_KEY, o->self) == 0;
	return 0;
}

static int open_image(struct blk_rbd *r, const struct rbd_target *t,
		      bool readonly, struct blk_rbd_owner *o, char *why,
		      size_t why_len)
{
	int ret;

	if (t->snap && !readonly) {
		snprintf(why, why_len,
			 "snapshot %s is read-only; give the disk access=ro",
			 t->snap);
		return -EROFS;
	}
	if (readonly)
		ret = lib.rbd_open_read_only(r->ioctx, t->image, &r->image,
					     t->snap);
	else
		ret = lib.rbd_open(r->ioctx, t->image, &r->image, NULL);
	if (ret < 0) {
		snprintf(why, why_len, "image %s/%s%s%s: %s", t->pool, t->image,
			 t->snap ? "@" : "", t->snap ? t->snap : "",
			 strerror(-ret));
		r->image = NULL;
		return ret;
	}
	return readonly ? 0 : lock_image(r, o, why, why_len);
}

/* librbd loaded, @target parsed into @t and its pool's cluster reached. */
static int reach_target(struct blk_rbd *r, const char *target,
			struct rbd_target *t, char *why, size_t why_len)
{
	int ret = blk_dynlib_ready(&librbd, why, why_len);

	memset(t, 0, sizeof(*t));
	if (ret == 0)
		ret = parse_target(target, t, why, why_len);
	if (ret == 0)
		ret = connect_cluster(r, t, why, why_len);
	return ret;
}

int blk_rbd_open(const char *target, bool readonly, struct blk_rbd_owner *o,
		 struct blk_rbd **out, uint64_t *size_out, char *why,
		 size_t why_len)
{
	struct blk_rbd *r = calloc(1, sizeof(*r));
	struct rbd_target t;
	int ret;

	if (!r)
		return -ENOMEM;
	ret = reach_target(r, target, &t, why, why_len);
	o->holder[0] = '\0';
	if (ret == 0)
		ret = open_image(r, &t, readonly, o, why, why_len);
	if (ret == 0)
		ret = blk_rbd_size(r, size_out);
	/* Busy, the image was open: its size describes it all the same. */
	else if (ret == -EBUSY && (!r->image || blk_rbd_size(r, size_out) < 0))
		*size_out = 0;
	free(t.copy);
	if (ret < 0) {
		blk_rbd_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

bool blk_rbd_single_writer(const struct blk_rbd *r)
{
	return r->locked;
}

int blk_rbd_size(struct blk_rbd *r, uint64_t *size)
{
	return lib.rbd_get_size(r->image, size);
}

int blk_rbd_snapshot(struct blk_rbd *r, const char *name)
{
	int ret = lib.rbd_flush(r->image);

	return ret < 0 ? ret : lib.rbd_snap_create(r->image, name);
}

/* ---- whole images: copy targets of live moves ---- */

/* Give a new image the exclusive-lock feature if the defaults did not. */
static int add_exclusive_lock(struct blk_rbd *r, const char *image, char *why,
			      size_t why_len)
{
	uint64_t features = 0;
	int ret = lib.rbd_open(r->ioctx, image, &r->image, NULL);

	if (ret < 0)
		r->image = NULL;
	if (ret == 0)
		ret = lib.rbd_get_features(r->image, &features);
	if (ret == 0 && !(features & RBD_FEATURE_EXCLUSIVE_LOCK))
		ret = lib.rbd_update_features(r->image,
					      RBD_FEATURE_EXCLUSIVE_LOCK, 1);
	if (ret < 0)
		snprintf(why, why_len,
			 "cannot give image %s the exclusive-lock feature: %s",
			 image, strerror(-ret));
	return ret;
}

/* Connect to @target's cluster for an image, not a snapshot, of it. */
static int reach_image(struct blk_rbd *r, const char *target,
		       struct rbd_target *t, char *why, size_t why_len)
{
	int ret = reach_target(r, target, t, why, why_len);

	if (ret == 0 && t->snap) {
		snprintf(why, why_len,
			 "%s names a snapshot; give an image: rbd:POOL/IMAGE",
			 target);
		ret = -EINVAL;
	}
	return ret;
}

/* What blk_rbd_create() and blk_rbd_remove() do once connected. */
typedef int image_op_fn(struct blk_rbd *r, const struct rbd_target *t,
			uint64_t size, char *why, size_t why_len);

/* Run @op on the image @target names, over a connection of its own. */
static int on_image(const char *target, image_op_fn *op, uint64_t size,
		    char *why, size_t why_len)
{
	struct blk_rbd *r = calloc(1, sizeof(*r));
	struct rbd_target t;
	int ret;

	if (!r)
		return -ENOMEM;
	ret = reach_image(r, target, &t, why, why_len);
	if (ret == 0)
		ret = op(r, &t, size, why, why_len);
	free(t.copy);
	blk_rbd_close(r);
	return ret;
}

static int create_image(struct blk_rbd *r, const struct rbd_target *t,
			uint64_t size, char *why, size_t why_len)
{
	int order = 0;
	int ret = lib.rbd_create(r->ioctx, t->image, size, &order);

	if (ret < 0) {
		snprintf(why, why_len, "cannot create image %s/%s: %s%s",
			 t->pool, t->image, strerror(-ret),
			 ret == -EEXIST ? " (a move never replaces an image: "
					  "remove it or give another name)"
					: "");
		return ret;
	}
	ret = add_exclusive_lock(r, t->image, why, why_len);
	if (ret < 0 && r->image)
		lib.rbd_close(r->image);
	if (ret < 0) {
		r->image = NULL;
		lib.rbd_remove(r->ioctx, t->image);
	}
	return ret;
}

int blk_rbd_create(const char *target, uint64_t size, char *why, size_t why_len)
{
	return on_image(target, create_image, size, why, why_len);
}

static int remove_image(struct blk_rbd *r, const struct rbd_target *t,
			uint64_t size, char *why, size_t why_len)
{
	int ret = lib.rbd_remove(r->ioctx, t->image);

	if (ret < 0)
		snprintf(why, why_len, "cannot remove image %s/%s: %s%s",
			 t->pool, t->image, strerror(-ret),
			 ret == -EBUSY ? " (it is open somewhere: close it "
					 "first)"
				       : "");
	return ret;
}

int blk_rbd_remove(const char *target, char *why, size_t why_len)
{
	return on_image(target, remove_image, 0, why, why_len);
}

/* librbd's byte count, or -errno: 0 only when all @len bytes went. */
static int whole(ssize_t ret, uint64_t len)
{
	if (ret < 0)
		return (int)ret;
	return (uint64_t)ret == len ? 0 : -EIO;
}

int blk_rbd_read(struct blk_rbd *r, uint64_t off, uint64_t len, void *buf)
{
	return whole(lib.rbd_read(r->image, off, len, buf), len);
}

int blk_rbd_write(struct blk_rbd *r, uint64_t off, uint64_t len,
		  const void *buf)
{
	return whole(lib.rbd_write(r->image, off, len, buf), len);
}

int blk_rbd_write_zeroes(struct blk_rbd *r, uint64_t off, uint64_t len)
{
	return whole(lib.rbd_write_zeroes(r->image, off, len, 0, 0), len);
}

int blk_rbd_flush(struct blk_rbd *r)
{
	return lib.rbd_flush(r->image);
}

int blk_rbd_meta_set(struct blk_rbd *r, const char *key, const char *value)
{
	return lib.rbd_metadata_set(r->image, key, value);
}

int blk_rbd_meta_get(struct blk_rbd *r, const char *key, char *buf, size_t len)
{
	size_t n = len;
	int ret = lib.rbd_metadata_get(r->image, key, buf, &n);

	if (ret < 0)
		return ret;
	buf[n < len ? n : len - 1] = '\0';
	return 0;
}

void blk_rbd_close(struct blk_rbd *r)
{
	if (!r)
		return;
	/* Under the lock still: the record goes with its holder. */
	if (r->named)
		lib.rbd_metadata_remove(r->image, OWNER_KEY);
	if (r->locked)
		lib.rbd_lock_release(r->image);
	if (r->image)
		lib.rbd_close(r->image);
	if (r->ioctx)
		lib.rados_ioctx_destroy(r->ioctx);
	if (r->cluster)
		lib.rados_shutdown(r->cluster);
	free(r);
}

/* ---- the backend ---- */

enum cmd_step { STEP_PREFLUSH, STEP_MAIN, STEP_POSTFLUSH, STEP_DONE };

struct rbd_backend;

struct rbd_cmd {
	struct rbd_backend *rb;
	struct rbd_cmd *next; /* on the finished list */
	void *cookie;
	struct blk_backend_io io;
	enum cmd_step step;
	int error; /* -errno of the first failed step */
};

struct rbd_backend {
	struct blk_backend base; /* first: the engine needs it 16-aligned */
	rbd_image_t image; /* borrowed from the disk's struct blk_rbd */
	int efd; /* librbd's threads -> the worker */
	bool watching;
	bool detached;
	pthread_mutex_t lock; /* guards finished */
	struct rbd_cmd *finished;
};

static struct rbd_backend *to_rbd(struct blk_backend *b)
{
	return (struct rbd_backend *)b;
}

/* On a librbd thread: queue the command for its worker, and wake it. */
static void step_ended(rbd_completion_t c, void *arg)
{
	struct rbd_cmd *cmd = arg;
	struct rbd_backend *rb = cmd->rb;
	ssize_t r = lib.rbd_aio_get_return_value(c);
	uint64_t one = 1;

	lib.rbd_aio_release(c);
	if (r < 0 && !cmd->error)
		cmd->error = (int)r;
	pthread_mutex_lock(&rb->lock);
	cmd->next = rb->finished;
	rb->finished = cmd;
	pthread_mutex_unlock(&rb->lock);
	if (write(rb->efd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow here; nothing else can fail. */
	}
}

static bool durable(const struct rbd_cmd *cmd)
{
	return cmd->io.op == BLK_BACKEND_WRITE && cmd->io.durable;
}

static int issue_step(struct rbd_cmd *cmd)
{
	const struct blk_backend_io *io = &cmd->io;
	rbd_image_t image = cmd->rb->image;
	rbd_completion_t c;
	int ret = lib.rbd_aio_create_completion(cmd, step_ended, &c);

	if (ret < 0)
		return ret;
	if (cmd->step != STEP_MAIN || io->op == BLK_BACKEND_FLUSH)
		ret = lib.rbd_aio_flush(image, c);
	else if (io->op == BLK_BACKEND_READ)
		ret = lib.rbd_aio_readv(image, io->iov, (int)io->iovcnt,
					io->offset, c);
	else if (io->op == BLK_BACKEND_WRITE)
		ret = lib.rbd_aio_writev(image, io->iov, (int)io->iovcnt,
					 io->offset, c);
	else
		ret = lib.rbd_aio_discard(image, io->offset, io->length, c);
	if (ret < 0)
		lib.rbd_aio_release(c);
	return ret;
}

/* The next step of @cmd, issued. True when it has none left (or failed). */
static bool advance(struct rbd_cmd *cmd)
{
	while (!cmd->error && ++cmd->step != STEP_DONE) {
		if (cmd->step == STEP_POSTFLUSH && !durable(cmd))
			continue;
		cmd->error = issue_step(cmd);
		if (!cmd->error)
			return false;
	}
	return true;
}

static void deliver(struct rbd_cmd *cmd)
{
	int res = cmd->error;

	if (!res && cmd->io.iov)
		res = (int)cmd->io.length;
	blk_backend_complete(cmd->rb->base.e, cmd->cookie, res);
	free(cmd);
}

static void rearm(struct rbd_backend *rb)
{
	if (rb->watching || rb->detached)
		return;
	if (blk_backend_watch(&rb->base, rb->efd, POLLIN, 0) == 0)
		rb->watching = true;
}

static void rbd_event(struct blk_backend *b, unsigned int which, int res)
{
	struct rbd_backend *rb = to_rbd(b);
	struct rbd_cmd *list;
	uint64_t count;

	rb->watching = false;
	if (read(rb->efd, &count, sizeof(count)) < 0) {
		/* EAGAIN: an earlier event took the count already. */
	}
	pthread_mutex_lock(&rb->lock);
	list = rb->finished;
	rb->finished = NULL;
	pthread_mutex_unlock(&rb->lock);
	while (list) {
		struct rbd_cmd *cmd = list;

		list = cmd->next;
		if (advance(cmd))
			deliver(cmd);
	}
	rearm(rb);
}

static int rbd_submit(struct blk_backend *b, const struct blk_backend_io *io,
		      void *cookie)
{
	struct rbd_backend *rb = to_rbd(b);
	struct rbd_cmd *cmd = calloc(1, sizeof(*cmd));
	int ret;

	if (!cmd)
		return -ENOMEM;
	*cmd = (struct rbd_cmd){ .rb = rb, .cookie = cookie, .io = *io };
	if (durable(cmd)) {
		cmd->step = STEP_PREFLUSH;
		ret = issue_step(cmd);
	} else {
		cmd->step = STEP_MAIN;
		ret = issue_step(cmd);
	}
	if (ret < 0) {
		free(cmd);
		return ret;
	}
	rearm(rb);
	return 1;
}

static void rbd_detach(struct blk_backend *b)
{
	struct rbd_backend *rb = to_rbd(b);

	rb->detached = true;
	if (rb->watching)
		blk_backend_unwatch(b, 0);
}

static void rbd_destroy(struct blk_backend *b)
{
	struct rbd_backend *rb = to_rbd(b);

	close(rb->efd);
	pthread_mutex_destroy(&rb->lock);
	free(rb);
}

static const struct blk_backend_ops rbd_ops = {
	.submit = rbd_submit,
	.event = rbd_event,
	.detach = rbd_detach,
	.destroy = rbd_destroy,
};

int blk_backend_rbd_new(struct blk_rbd *r, struct blk_backend **out)
{
	struct rbd_backend *rb = calloc(1, sizeof(*rb));

	if (!rb)
		return -ENOMEM;
	rb->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rb->efd < 0) {
		free(rb);
		return -errno;
	}
	pthread_mutex_init(&rb->lock, NULL);
	rb->base.ops = &rbd_ops;
	rb->image = r->image;
	*out = &rb->base;
	return 0;
}

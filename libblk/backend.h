/* SPDX-License-Identifier: MIT */
/*
 * Image backends: where a connection's I/O goes once the engine has taken
 * a request off the ring, checked it and found its buffers.
 *
 * Four implementations: a file or block device through the engine's own
 * io_uring (backend-file.c, the fast path), an NBD export through
 * libnbd's asynchronous API (backend-nbd.c), a Ceph RBD image through
 * librbd's (backend-rbd.c), and the null image, which does no I/O
 * (backend-null.c).
 *
 * Threads and ownership. A backend is created on any thread (an NBD one
 * connects there, so not on a worker), handed to blk_engine_connect() in
 * blk_conn_params, and from then on used only on that engine's thread:
 * every op below runs there, and so do the functions a backend calls back
 * into the engine. The connection borrows it. After conn_closed() the
 * engine no longer touches it and its creator destroys it, on any thread.
 */
#ifndef LIBBLK_BACKEND_H
#define LIBBLK_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

struct blk_engine;
struct blk_backend;

enum blk_backend_op {
	BLK_BACKEND_READ,
	BLK_BACKEND_WRITE,
	BLK_BACKEND_FLUSH, /* make every completed write durable */
	BLK_BACKEND_DISCARD, /* forget the range; it reads back as zeroes */
};

/* One I/O, valid until its last part completes. */
struct blk_backend_io {
	enum blk_backend_op op;
	/*
	 * WRITE only: the writes completed before this one are durable before
	 * its data is written (a journal's commit block never lands before
	 * what it commits), and its own data is durable before it completes.
	 */
	bool durable;
	uint64_t offset; /* bytes */
	uint64_t length; /* bytes: the iovecs' sum, or the DISCARD range */
	const struct iovec *iov; /* READ and WRITE */
	unsigned int iovcnt;
	/*
	 * The iovecs follow each other in the engine's registered buffer
	 * @buf_index (libblk/fixed.h): one READ_FIXED or WRITE_FIXED can
	 * move them. Backends other than the file's may ignore it.
	 */
	bool fixed;
	unsigned int buf_index;
};

struct blk_backend_ops {
	/*
	 * Queue @io. Returns how many parts it was split into (at least 1),
	 * each of which is later reported by blk_backend_complete() with
	 * @cookie, never from within this call; or -errno, nothing queued.
	 */
	int (*submit)(struct blk_backend *b, const struct blk_backend_io *io,
		      void *cookie);
	/* A watch set with blk_backend_watch() fired: @res as poll's revents,
	 * or -errno (-ECANCELED after blk_backend_unwatch()). Optional. */
	void (*event)(struct blk_backend *b, unsigned int which, int res);
	/*
	 * The connection closes and has no I/O left: stop watching (the
	 * engine waits until no watch is armed). Optional.
	 */
	void (*detach)(struct blk_backend *b);
	/* Free it; on any thread, once its connection has closed. */
	void (*destroy)(struct blk_backend *b);
};

struct blk_backend {
	const struct blk_backend_ops *ops;
	struct blk_engine *e; /* set by blk_engine_connect() */
	unsigned int armed; /* watches in the engine; kept by the engine */
};

/* A part of the I/O submitted with @cookie ended: bytes moved, or -errno. */
void blk_backend_complete(struct blk_engine *e, void *cookie, int res);

/*
 * Have ops->event(b, @which, revents) called once when @fd has @events
 * (POLLIN, POLLOUT); @which is at most BLK_BACKEND_MAX_WATCH. With @fd < 0
 * the event comes at the next pass, with res 0: a backend whose
 * completions arrived outside an event uses it to deliver them.
 */
#define BLK_BACKEND_MAX_WATCH 3u
int blk_backend_watch(struct blk_backend *b, int fd, unsigned int events,
		      unsigned int which);
/* Cancel the watch @which; its event then comes with -ECANCELED. */
int blk_backend_unwatch(struct blk_backend *b, unsigned int which);

/*
 * Capabilities: what a kind of store can do, so that its users decide by
 * that, never by which kind it is. Each backend declares its set next to
 * its constructor (BLK_FILE_CAPS below, BLK_NBD_CAPS, BLK_RBD_CAPS,
 * BLK_NULL_CAPS); blk_image_caps_of() answers for a target not opened
 * yet, and an open image carries the set it has (struct blk_image's caps,
 * which an image may have narrower than its kind's: an RBD image without
 * the exclusive-lock feature has no BLK_CAP_LOCK). A new capability is a
 * new bit here, documented as these are, and set by the backends that
 * have it.
 */
enum blk_cap {
	/*
	 * What is written reads back, and every opener of the target reaches
	 * the same data: two writers can overwrite each other. Not the null
	 * image, which keeps nothing. vbd-image.c keeps a migration's two
	 * ends apart only for such a store.
	 */
	BLK_CAP_STORES = 1u << 0,
	/*
	 * Opened writable, the store takes a lock that a second writer meets
	 * as -EBUSY at its open, on this host or another, and the holder can
	 * name itself (struct blk_image's holder): an image file's OFD lock,
	 * an RBD image's exclusive lock. A migration's two ends meet at it
	 * (vbd-image.c waits for the lock); a store without it that
	 * BLK_CAP_STORES (an NBD export) is kept to one writer by the daemon
	 * itself, between its own devices. A writable image whose kind
	 * declares it but which cannot take it is refused unless the
	 * operator allows it (rbd-allow-no-exclusive-lock).
	 */
	BLK_CAP_LOCK = 1u << 1,
	/*
	 * Opening it may wait on something over the network that need never
	 * answer (an NBD server, a Ceph monitor): the daemon opens it on an
	 * opener thread, and retries with a backoff while the store is away
	 * (blkbackd/opener.h). Without it, an open does not wait.
	 */
	BLK_CAP_REMOTE_OPEN = 1u << 2,
	/*
	 * A ring's backend can be destroyed on one worker and made anew for
	 * another with nothing the guest or the store notices, so that a ring
	 * moves between workers (vbd_move_ring()). Not an NBD export's: each
	 * backend is a connection of its own to the server, which a move
	 * would make anew.
	 */
	BLK_CAP_MOVE = 1u << 3,
	/*
	 * Its rings' connections to the store drop and come back on their
	 * own, requests waiting meanwhile; the image counts the drops
	 * (struct blk_image's nbd_link), which the control socket shows.
	 */
	BLK_CAP_RECONNECT = 1u << 4,
	/*
	 * Its size can change under the guest and is read again by
	 * blk_image_refresh_size() (blkbackctl resize): a file, a block
	 * device, an RBD image. An NBD export keeps the size it had at its
	 * connection, a null image the size its name says.
	 */
	BLK_CAP_RESIZE = 1u << 5,
	/*
	 * A file or block device of this host, open by its path: another
	 * program can open the same path (QEMU, for an HVM guest's emulated
	 * disk: physical-device-path, blk_image_lock_like_qemu()), the
	 * cache mode and O_DIRECT apply, and the operator can delete or
	 * shorten it under the guest (vbd_check_images()).
	 */
	BLK_CAP_LOCAL = 1u << 6,
};

/* A file or block device: shared by its rings, locked, on this host. */
#define BLK_FILE_CAPS                                                    \
	(BLK_CAP_STORES | BLK_CAP_LOCK | BLK_CAP_MOVE | BLK_CAP_RESIZE | \
	 BLK_CAP_LOCAL)

/* @fd is borrowed: it must outlive the backend. */
int blk_backend_file_new(int fd, struct blk_backend **out);

static inline void blk_backend_destroy(struct blk_backend *b)
{
	if (b)
		b->ops->destroy(b);
}

#endif /* LIBBLK_BACKEND_H */

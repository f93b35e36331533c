// SPDX-License-Identifier: MIT
/*
 * The file and block-device backend: each I/O becomes SQEs in the engine's
 * own io_uring, submitted with the rest of the pass in one system call,
 * and their CQEs go straight to blk_backend_complete() (engine.c), with
 * no event of this backend's own.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>

#include "libblk/backend.h"
#include "libblk/engine-internal.h"

/* One SQE takes at most this many iovecs (the kernel's UIO_MAXIOV). */
#define MAX_IOV_PER_SQE 1024u

/* The most SQEs one I/O takes: a sync, its data in chunks, a sync. */
#define MAX_SQES_PER_IO                                            \
	(2 + (BLKIF_MAX_INDIRECT_SEGMENTS + MAX_IOV_PER_SQE - 1) / \
		     MAX_IOV_PER_SQE)

struct file_backend {
	struct blk_backend base;
	int fd;
	/*
	 * Its slot in its engine's registered files, taken at the first
	 * I/O and given back at detach (the engine may change when the
	 * ring moves); NO_SLOT before, REFUSED when the engine had none.
	 */
	int slot;
};

#define NO_SLOT -1
#define REFUSED -2

static struct file_backend *to_file(struct blk_backend *b)
{
	return (struct file_backend *)b;
}

/* Point @sqe, prepared with the plain fd, at the registered file. */
static void use_file(struct io_uring_sqe *sqe, const struct file_backend *f)
{
	if (f->slot < 0)
		return;
	sqe->fd = f->slot;
	sqe->flags |= IOSQE_FIXED_FILE;
}

/*
 * Room for one I/O's SQEs, submitting what is queued if need be. False
 * when the kernel took none of it (no memory for requests, or a
 * completion queue in overflow): the engine retries in a later pass,
 * after completions have been reaped.
 */
static bool reserve_sqes(struct io_uring *ring)
{
	if (io_uring_sq_space_left(ring) >= MAX_SQES_PER_IO)
		return true;
	io_uring_submit(ring);
	return io_uring_sq_space_left(ring) >= MAX_SQES_PER_IO;
}

static void prep_sync(struct io_uring *ring, const struct file_backend *f,
		      void *cookie, bool link)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_fsync(sqe, f->fd, IORING_FSYNC_DATASYNC);
	use_file(sqe, f);
	io_uring_sqe_set_data(sqe, cookie);
	if (link)
		sqe->flags |= IOSQE_IO_LINK;
}

/* Data in one range of a registered buffer: one SQE, no page pinning. */
static int prep_fixed(struct io_uring *ring, const struct file_backend *f,
		      const struct blk_backend_io *io, void *cookie,
		      bool link_last)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	void *buf = io->iov[0].iov_base;

	if (io->op == BLK_BACKEND_READ)
		io_uring_prep_read_fixed(sqe, f->fd, buf, (unsigned)io->length,
					 io->offset, (int)io->buf_index);
	else
		io_uring_prep_write_fixed(sqe, f->fd, buf, (unsigned)io->length,
					  io->offset, (int)io->buf_index);
	use_file(sqe, f);
	io_uring_sqe_set_data(sqe, cookie);
	if (link_last)
		sqe->flags |= IOSQE_IO_LINK;
	return 1;
}

/*
 * The data in chunks of MAX_IOV_PER_SQE, linked to each other and to the
 * closing sync when there is one. Returns the chunks.
 */
static int prep_data(struct io_uring *ring, const struct file_backend *f,
		     const struct blk_backend_io *io, void *cookie,
		     bool link_last)
{
	unsigned int chunks =
		(io->iovcnt + MAX_IOV_PER_SQE - 1) / MAX_IOV_PER_SQE;
	uint64_t off = io->offset;

	if (io->fixed)
		return prep_fixed(ring, f, io, cookie, link_last);

	for (unsigned int c = 0; c < chunks; c++) {
		const struct iovec *iov = io->iov + c * MAX_IOV_PER_SQE;
		unsigned int n = io->iovcnt - c * MAX_IOV_PER_SQE;
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (n > MAX_IOV_PER_SQE)
			n = MAX_IOV_PER_SQE;
		if (io->op == BLK_BACKEND_READ)
			io_uring_prep_readv(sqe, f->fd, iov, n, off);
		else
			io_uring_prep_writev(sqe, f->fd, iov, n, off);
		use_file(sqe, f);
		io_uring_sqe_set_data(sqe, cookie);
		if (link_last || c + 1 < chunks)
			sqe->flags |= IOSQE_IO_LINK;
		for (unsigned int i = 0; i < n; i++)
			off += iov[i].iov_len;
	}
	return (int)chunks;
}

/*
 * A durable write is a pre-flush, the data and a sync, all linked, as a
 * pre-flush and a forced-unit-access write: all of an I/O's SQEs are
 * queued together so a link never spans a submit.
 */
/* Once per engine: its file table spares each SQE the fd's lookup. */
static void register_file(struct file_backend *f)
{
	int slot;

	if (f->slot != NO_SLOT)
		return;
	slot = blk_fixed_file_add(&f->base.e->fixed, f->fd);
	f->slot = slot < 0 ? REFUSED : slot;
}

static int file_submit(struct blk_backend *b, const struct blk_backend_io *io,
		       void *cookie)
{
	struct io_uring *ring = &b->e->uring;
	struct file_backend *f = to_file(b);
	int parts;

	if (io->iovcnt > BLKIF_MAX_INDIRECT_SEGMENTS)
		return -EINVAL;
	if (!reserve_sqes(ring))
		return -EAGAIN;
	register_file(f);
	switch (io->op) {
	case BLK_BACKEND_FLUSH:
		prep_sync(ring, f, cookie, false);
		return 1;
	case BLK_BACKEND_DISCARD: {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_fallocate(
			sqe, f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t)io->offset, (off_t)io->length);
		use_file(sqe, f);
		io_uring_sqe_set_data(sqe, cookie);
		return 1;
	}
	case BLK_BACKEND_READ:
		return prep_data(ring, f, io, cookie, false);
	case BLK_BACKEND_WRITE:
		if (!io->durable)
			return prep_data(ring, f, io, cookie, false);
		prep_sync(ring, f, cookie, true);
		parts = prep_data(ring, f, io, cookie, true);
		prep_sync(ring, f, cookie, false);
		return parts + 2;
	}
	return -EINVAL;
}

/* No I/O is left: the engine's slot goes back (it may be another's next). */
static void file_detach(struct blk_backend *b)
{
	struct file_backend *f = to_file(b);

	if (f->slot >= 0)
		blk_fixed_file_del(&b->e->fixed, f->slot);
	f->slot = NO_SLOT;
}

static void file_destroy(struct blk_backend *b)
{
	free(b);
}

static const struct blk_backend_ops file_ops = {
	.submit = file_submit,
	.detach = file_detach,
	.destroy = file_destroy,
};

int blk_backend_file_new(int fd, struct blk_backend **out)
{
	struct file_backend *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->base.ops = &file_ops;
	f->fd = fd;
	f->slot = NO_SLOT;
	*out = &f->base;
	return 0;
}

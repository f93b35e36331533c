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

/*
 * The image is not a registered file of the ring: an older kernel (Debian
 * 12's 6.1) drops the ring's reference to a file taken out of its table
 * up to a second later, and the file's OFD locks with it, so the device
 * taking the image next (a migration's receiving end, under real Xen)
 * found it still locked. A registered file saved no measurable CPU.
 */
struct file_backend {
	struct blk_backend base;
	int fd;
};

static struct file_backend *to_file(struct blk_backend *b)
{
	return (struct file_backend *)b;
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
	switch (io->op) {
	case BLK_BACKEND_FLUSH:
		prep_sync(ring, f, cookie, false);
		return 1;
	case BLK_BACKEND_DISCARD: {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_fallocate(
			sqe, f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t)io->offset, (off_t)io->length);
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

static void file_destroy(struct blk_backend *b)
{
	free(b);
}

static const struct blk_backend_ops file_ops = {
	.submit = file_submit,
	.destroy = file_destroy,
};

int blk_backend_file_new(int fd, struct blk_backend **out)
{
	struct file_backend *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->base.ops = &file_ops;
	f->fd = fd;
	*out = &f->base;
	return 0;
}

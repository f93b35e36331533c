// SPDX-License-Identifier: MIT
#include "tools/bench/engine-uring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct uring_engine {
	struct bench_engine base;
	struct io_uring ring;
	bool ring_ready;
	int fd;
	void *buffers;
	uint32_t slot_bytes;
	unsigned int depth;
	uint32_t len[64]; /* bytes each slot's operation must transfer */
};

static struct uring_engine *to_uring(struct bench_engine *e)
{
	return (struct uring_engine *)e;
}

static int uring_queue(struct bench_engine *e, unsigned int slot,
		       const struct bench_op *op)
{
	struct uring_engine *u = to_uring(e);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	char *buf = (char *)u->buffers + (size_t)slot * u->slot_bytes;

	if (!sqe)
		return -EBUSY;
	u->len[slot] = op->type == BENCH_OP_FLUSH ? 0 : op->len;
	switch (op->type) {
	case BENCH_OP_READ:
		io_uring_prep_read_fixed(sqe, 0, buf, op->len, op->offset,
					 (int)slot);
		break;
	case BENCH_OP_WRITE:
		io_uring_prep_write_fixed(sqe, 0, buf, op->len, op->offset,
					  (int)slot);
		break;
	case BENCH_OP_FLUSH:
		io_uring_prep_fsync(sqe, 0, IORING_FSYNC_DATASYNC);
		break;
	}
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, slot);
	return 0;
}

static int uring_submit(struct bench_engine *e)
{
	int ret = io_uring_submit(&to_uring(e)->ring);

	return ret < 0 ? ret : 0;
}

static int uring_complete(struct bench_engine *e, unsigned int *slot,
			  int *result)
{
	struct uring_engine *u = to_uring(e);
	struct io_uring_cqe *cqe;
	int ret;

	do
		ret = io_uring_wait_cqe(&u->ring, &cqe);
	while (ret == -EINTR);
	if (ret < 0)
		return ret;
	*slot = (unsigned int)io_uring_cqe_get_data64(cqe);
	/* A short transfer inside the disk is as bad as an error. */
	if (cqe->res < 0)
		*result = cqe->res;
	else if (*slot < u->depth && (uint32_t)cqe->res < u->len[*slot])
		*result = -EIO;
	else
		*result = 0;
	io_uring_cqe_seen(&u->ring, cqe);
	return 0;
}

static void uring_destroy(struct bench_engine *e)
{
	struct uring_engine *u = to_uring(e);

	if (u->ring_ready)
		io_uring_queue_exit(&u->ring);
	if (u->fd >= 0)
		close(u->fd);
	free(u->buffers);
	free(u);
}

static const struct bench_engine_ops uring_ops = {
	.queue = uring_queue,
	.submit = uring_submit,
	.complete = uring_complete,
	.destroy = uring_destroy,
};

static int register_everything(struct uring_engine *u)
{
	struct iovec iov[64];
	int ret;

	for (unsigned int i = 0; i < u->depth; i++) {
		iov[i].iov_base =
			(char *)u->buffers + (size_t)i * u->slot_bytes;
		iov[i].iov_len = u->slot_bytes;
	}
	ret = io_uring_register_buffers(&u->ring, iov, u->depth);
	if (ret < 0)
		return ret;
	return io_uring_register_files(&u->ring, &u->fd, 1);
}

int engine_uring_open(const char *path, const struct bench_job *job,
		      struct bench_engine **out, char *why, size_t why_len)
{
	struct uring_engine *u;
	size_t bytes = (size_t)job->depth * job->max_bs;
	int ret;

	if (job->depth > 64)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->base.ops = &uring_ops;
	u->depth = job->depth;
	u->slot_bytes = job->max_bs;
	u->fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	ret = u->fd < 0 ? -errno : 0;
	if (!ret && posix_memalign(&u->buffers, 4096, bytes))
		ret = -ENOMEM;
	if (!ret) {
		/* Written data is not checked; any non-zero bytes will do. */
		memset(u->buffers, 0xa5, bytes);
		ret = io_uring_queue_init(job->depth * 2, &u->ring, 0);
		u->ring_ready = ret == 0;
	}
	if (!ret)
		ret = register_everything(u);
	if (ret < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(-ret));
		uring_destroy(&u->base);
		return ret;
	}
	*out = &u->base;
	return 0;
}

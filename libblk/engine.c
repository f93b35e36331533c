// SPDX-License-Identifier: MIT
/*
 * The per-thread I/O engine: event channel → ring → grant copy → io_uring
 * → grant copy → response.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xenevtchn.h>
#include <xengnttab.h>

#include "libblk/engine.h"
#include "libblk/grant_copy.h"
#include "libblk/ring.h"

#define SQ_ENTRIES 256
#define CQ_ENTRIES 4096
#define IO_BUF_BYTES (BLKIF_MAX_SEGMENTS_PER_REQUEST * BLKIF_PAGE_SIZE)
/* Grant-table handles need room for the ring mappings. */
#define MAX_RING_GRANTS 4096

/* io_uring user_data: an I/O pointer, or one of these tags in low bits. */
#define TAG_MASK 3ull
#define TAG_IO 0ull
#define TAG_EVTCHN 1ull
#define TAG_FD 2ull

struct blk_io {
	struct blk_conn *conn;
	struct blk_io *next;
	struct blk_request req;
	void *buf;
	uint32_t expect;     /* bytes the data operation must move */
	uint8_t cqes_left;   /* completions still to come */
	bool failed;
	unsigned int copy_first; /* this pass's grant-copy segments */
};

struct blk_conn {
	struct blk_engine *e;
	struct blk_conn *next;
	struct blk_ring ring;
	void *sring;
	uint32_t domid;
	evtchn_port_t port;
	int fd;
	struct blk_limits limits;
	void *owner;

	struct blk_io *ios;
	struct blk_io *free_ios;
	void *bufs;
	unsigned int nr_ios;
	unsigned int in_flight;

	bool kicked;	   /* may have requests to consume */
	bool must_push;	   /* has unpublished responses */
	bool closing;
	bool broken;
};

struct blk_engine {
	struct io_uring uring;
	xengnttab_handle *xgt;
	xenevtchn_handle *xce;
	int evtchn_fd;
	bool evtchn_armed;

	const struct blk_engine_ops *ops;
	void *arg;

	struct blk_conn *conns;
	unsigned int nr_conns;
	unsigned int copy_reserved;

	/* Per-pass scratch, reused. */
	struct blk_copy_batch copies;
	struct blk_io *done;	/* finished I/O awaiting copy-out/response */
	struct blk_io *to_start; /* checked requests awaiting submission */
};

/* ---- setup ---- */

static int setup_uring(struct io_uring *ring)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER |
			 IORING_SETUP_DEFER_TASKRUN,
		.cq_entries = CQ_ENTRIES,
	};
	int ret;

	ret = io_uring_queue_init_params(SQ_ENTRIES, ring, &p);
	if (ret == -EINVAL) {
		/* Kernels before 6.1 lack the single-issuer flags. */
		p.flags = IORING_SETUP_CQSIZE;
		ret = io_uring_queue_init_params(SQ_ENTRIES, ring, &p);
	}
	return ret;
}

static int open_xen_handles(struct blk_engine *e)
{
	int flags;

	e->xgt = xengnttab_open(NULL, 0);
	if (!e->xgt)
		return -errno;
	xengnttab_set_max_grants(e->xgt, MAX_RING_GRANTS);
	e->xce = xenevtchn_open(NULL, 0);
	if (!e->xce)
		return -errno;
	e->evtchn_fd = xenevtchn_fd(e->xce);
	/* pending() is called until it runs dry: it must not block. */
	flags = fcntl(e->evtchn_fd, F_GETFL);
	if (flags < 0 || fcntl(e->evtchn_fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int blk_engine_create(struct blk_engine **out, const struct blk_engine_ops *ops,
		      void *arg)
{
	struct blk_engine *e = calloc(1, sizeof(*e));
	int ret;

	if (!e)
		return -ENOMEM;
	e->ops = ops;
	e->arg = arg;
	ret = open_xen_handles(e);
	if (ret == 0)
		ret = setup_uring(&e->uring);
	else
		e->uring.ring_fd = -1;
	if (ret < 0) {
		e->uring.ring_fd = -1;
		blk_engine_destroy(e);
		return ret;
	}
	*out = e;
	return 0;
}

void blk_engine_destroy(struct blk_engine *e)
{
	if (!e)
		return;
	if (e->uring.ring_fd >= 0)
		io_uring_queue_exit(&e->uring);
	if (e->xce)
		xenevtchn_close(e->xce);
	if (e->xgt)
		xengnttab_close(e->xgt);
	blk_copy_batch_free(&e->copies);
	free(e);
}

unsigned int blk_engine_nr_conns(const struct blk_engine *e)
{
	return e->nr_conns;
}

/* SQEs are queued until the next wait submits them in one call. */
static struct io_uring_sqe *get_sqe(struct blk_engine *e)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->uring);

	if (!sqe) {
		io_uring_submit(&e->uring);
		sqe = io_uring_get_sqe(&e->uring);
	}
	return sqe;
}

int blk_engine_watch_fd(struct blk_engine *e, int fd, uint64_t tag)
{
	struct io_uring_sqe *sqe = get_sqe(e);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, (tag << 2) | TAG_FD);
	return 0;
}

static int arm_evtchn(struct blk_engine *e)
{
	struct io_uring_sqe *sqe;

	if (e->evtchn_armed)
		return 0;
	sqe = get_sqe(e);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, e->evtchn_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, TAG_EVTCHN);
	e->evtchn_armed = true;
	return 0;
}

/* ---- connections ---- */

static int alloc_ios(struct blk_conn *c)
{
	c->nr_ios = blk_ring_size(&c->ring);
	c->ios = calloc(c->nr_ios, sizeof(*c->ios));
	if (!c->ios)
		return -ENOMEM;
	/* Page-aligned, so O_DIRECT accepts the bounce buffers. */
	c->bufs = mmap(NULL, (size_t)c->nr_ios * IO_BUF_BYTES,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (c->bufs == MAP_FAILED) {
		c->bufs = NULL;
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < c->nr_ios; i++) {
		struct blk_io *io = &c->ios[i];

		io->conn = c;
		io->buf = (uint8_t *)c->bufs + (size_t)i * IO_BUF_BYTES;
		io->next = c->free_ios;
		c->free_ios = io;
	}
	return 0;
}

static void free_conn(struct blk_conn *c)
{
	struct blk_engine *e = c->e;

	if (c->bufs)
		munmap(c->bufs, (size_t)c->nr_ios * IO_BUF_BYTES);
	free(c->ios);
	if (c->port)
		xenevtchn_unbind(e->xce, c->port);
	if (c->sring)
		xengnttab_unmap(e->xgt, c->sring, 1);
	free(c);
}

static int map_and_bind(struct blk_engine *e, struct blk_conn *c,
			const struct blk_conn_params *p)
{
	xenevtchn_port_or_error_t port;

	c->sring = xengnttab_map_grant_ref(e->xgt, p->domid, p->ring_ref,
					   PROT_READ | PROT_WRITE);
	if (!c->sring)
		return errno ? -errno : -EINVAL;
	port = xenevtchn_bind_interdomain(e->xce, p->domid, p->remote_port);
	if (port < 0)
		return errno ? -errno : -EINVAL;
	c->port = (evtchn_port_t)port;
	return 0;
}

int blk_engine_connect(struct blk_engine *e, const struct blk_conn_params *p,
		       struct blk_conn **out)
{
	struct blk_conn *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	c->e = e;
	c->domid = p->domid;
	c->fd = p->image_fd;
	c->limits = p->limits;
	c->owner = p->owner;

	ret = map_and_bind(e, c, p);
	if (ret == 0) {
		blk_ring_attach(&c->ring, c->sring, p->abi, BLKIF_PAGE_SIZE);
		ret = alloc_ios(c);
	}
	if (ret == 0)
		ret = blk_copy_batch_reserve(&e->copies,
					     e->copy_reserved +
						     c->nr_ios *
							     BLKIF_MAX_SEGMENTS_PER_REQUEST);
	if (ret < 0) {
		free_conn(c);
		return ret;
	}
	e->copy_reserved += c->nr_ios * BLKIF_MAX_SEGMENTS_PER_REQUEST;
	/* Serve whatever the guest queued before we got here. */
	c->kicked = true;
	c->next = e->conns;
	e->conns = c;
	e->nr_conns++;
	*out = c;
	return 0;
}

static void unlink_conn(struct blk_engine *e, struct blk_conn *c)
{
	for (struct blk_conn **pp = &e->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	e->nr_conns--;
	e->copy_reserved -= c->nr_ios * BLKIF_MAX_SEGMENTS_PER_REQUEST;
}

/* Tear down a closing connection once nothing of it is in flight. */
static void finish_close(struct blk_engine *e, struct blk_conn *c)
{
	void *owner = c->owner;

	unlink_conn(e, c);
	free_conn(c);
	e->ops->conn_closed(e->arg, owner);
}

void blk_engine_disconnect(struct blk_engine *e, struct blk_conn *c)
{
	c->closing = true;
	c->kicked = false;
	if (c->in_flight == 0)
		finish_close(e, c);
}

/* ---- responses ---- */

static void respond(struct blk_io *io, int16_t status)
{
	struct blk_conn *c = io->conn;

	blk_ring_put_response(&c->ring, io->req.id, io->req.operation, status);
	c->must_push = true;
	io->next = c->free_ios;
	c->free_ios = io;
	c->in_flight--;
}

static void push_responses(struct blk_engine *e)
{
	struct blk_conn *c, *next;

	for (c = e->conns; c; c = next) {
		next = c->next;
		if (c->must_push) {
			c->must_push = false;
			if (blk_ring_push_responses(&c->ring))
				xenevtchn_notify(e->xce, c->port);
		}
		if (c->closing && c->in_flight == 0)
			finish_close(e, c);
	}
}

/* ---- completions ---- */

static void complete_io(struct blk_engine *e, struct blk_io *io, int res)
{
	/* Only the data operation moves bytes; a linked fsync returns 0. */
	if (res < 0 || (io->expect && res != (int)io->expect))
		io->failed = true;
	io->expect = 0;
	if (--io->cqes_left == 0) {
		io->next = e->done;
		e->done = io;
	}
}

static void finish_done(struct blk_engine *e)
{
	struct blk_io *io, *next;
	int ret;

	blk_copy_batch_reset(&e->copies);
	for (io = e->done; io; io = io->next)
		if (!io->failed && io->req.operation == BLKIF_OP_READ)
			io->copy_first = blk_copy_batch_add(
				&e->copies, (uint16_t)io->conn->domid,
				&io->req, io->buf, true);
	ret = blk_copy_batch_run(&e->copies, e->xgt);

	for (io = e->done; io; io = next) {
		bool ok = !io->failed;

		next = io->next;
		if (ok && io->req.operation == BLKIF_OP_READ)
			ok = ret == 0 &&
			     blk_copy_batch_ok(&e->copies, io->copy_first,
					       io->req.nr_segments);
		respond(io, ok ? BLKIF_RSP_OKAY : BLKIF_RSP_ERROR);
	}
	e->done = NULL;
}

/* ---- event channel ---- */

static struct blk_conn *conn_by_port(struct blk_engine *e, evtchn_port_t port)
{
	for (struct blk_conn *c = e->conns; c; c = c->next)
		if (c->port == port)
			return c;
	return NULL;
}

/*
 * Mark every notified ring. Unmasking before the ring is consumed is safe:
 * consumption comes later in this pass, and a notification after the
 * unmask wakes us again.
 */
static void drain_evtchn(struct blk_engine *e)
{
	xenevtchn_port_or_error_t port;

	while ((port = xenevtchn_pending(e->xce)) >= 0) {
		struct blk_conn *c = conn_by_port(e, (evtchn_port_t)port);

		if (c && !c->closing && !c->broken)
			c->kicked = true;
		xenevtchn_unmask(e->xce, (evtchn_port_t)port);
	}
}

static void reap_cqes(struct blk_engine *e)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&e->uring, head, cqe)
	{
		uint64_t data = io_uring_cqe_get_data64(cqe);

		seen++;
		switch (data & TAG_MASK) {
		case TAG_IO:
			complete_io(e, (struct blk_io *)(uintptr_t)data,
				    cqe->res);
			break;
		case TAG_EVTCHN:
			e->evtchn_armed = false;
			drain_evtchn(e);
			break;
		case TAG_FD:
			e->ops->fd_ready(e->arg, data >> 2);
			break;
		}
	}
	io_uring_cq_advance(&e->uring, seen);
}

/* ---- new requests ---- */

static void consume_ring(struct blk_engine *e, struct blk_conn *c)
{
	for (;;) {
		struct blk_io *io = c->free_ios;
		int16_t status;
		int ret;

		if (!io)
			return; /* stay kicked: retry when I/O completes */
		ret = blk_ring_next_request(&c->ring, &io->req);
		if (ret < 0) {
			c->broken = true;
			c->kicked = false;
			e->ops->conn_broken(e->arg, c->owner, ret);
			return;
		}
		if (ret == 0) {
			if (blk_ring_final_check(&c->ring))
				continue;
			c->kicked = false;
			return;
		}
		c->free_ios = io->next;
		c->in_flight++;
		io->failed = false;

		status = (int16_t)blk_request_check(&io->req, &c->limits);
		if (status != BLKIF_RSP_OKAY) {
			respond(io, status);
			continue;
		}
		if (blk_request_writes(&io->req))
			io->copy_first = blk_copy_batch_add(
				&e->copies, (uint16_t)c->domid, &io->req,
				io->buf, false);
		io->next = e->to_start;
		e->to_start = io;
	}
}

static void prep_data(struct blk_io *io, struct io_uring_sqe *sqe)
{
	uint64_t off = io->req.sector * BLKIF_SECTOR_SIZE;

	io->expect = (uint32_t)blk_request_bytes(&io->req);
	if (io->req.operation == BLKIF_OP_READ)
		io_uring_prep_read(sqe, io->conn->fd, io->buf, io->expect, off);
	else
		io_uring_prep_write(sqe, io->conn->fd, io->buf, io->expect,
				    off);
	io_uring_sqe_set_data(sqe, io);
}

static void prep_flush(struct blk_io *io, struct io_uring_sqe *sqe)
{
	io_uring_prep_fsync(sqe, io->conn->fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data(sqe, io);
}

/*
 * A flush carrying data is a write followed by fdatasync, linked so the
 * sync starts only after the write completed. Both SQEs are taken together
 * so a link is never split across a submit.
 */
static void start_io(struct blk_engine *e, struct blk_io *io)
{
	bool data = io->req.nr_segments > 0;
	bool flush = io->req.operation == BLKIF_OP_FLUSH_DISKCACHE;

	io->cqes_left = (uint8_t)(data + flush);
	io->expect = 0;
	if (io_uring_sq_space_left(&e->uring) < io->cqes_left)
		io_uring_submit(&e->uring);
	if (data) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&e->uring);

		prep_data(io, sqe);
		if (flush)
			sqe->flags |= IOSQE_IO_LINK;
	}
	if (flush)
		prep_flush(io, io_uring_get_sqe(&e->uring));
}

static void start_requests(struct blk_engine *e)
{
	struct blk_io *io, *next;
	int ret = blk_copy_batch_run(&e->copies, e->xgt);

	for (io = e->to_start; io; io = next) {
		next = io->next;
		if (blk_request_writes(&io->req) &&
		    (ret < 0 || !blk_copy_batch_ok(&e->copies, io->copy_first,
						   io->req.nr_segments))) {
			respond(io, BLKIF_RSP_ERROR);
			continue;
		}
		start_io(e, io);
	}
	e->to_start = NULL;
}

static void consume_rings(struct blk_engine *e)
{
	blk_copy_batch_reset(&e->copies);
	for (struct blk_conn *c = e->conns; c; c = c->next)
		if (c->kicked && !c->closing && !c->broken)
			consume_ring(e, c);
	start_requests(e);
}

/* ---- the pass ---- */

int blk_engine_run(struct blk_engine *e)
{
	int ret = arm_evtchn(e);

	if (ret < 0)
		return ret;
	ret = io_uring_submit_and_wait(&e->uring, 1);
	if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		return ret;

	reap_cqes(e);
	finish_done(e);
	consume_rings(e);
	push_responses(e);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The engine's event channel through its io_uring (see libblk/evtchn.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>

#include "libblk/evtchn.h"

int blk_evtchn_open(struct blk_evtchn *ev, const struct io_uring *ring)
{
	struct stat st;
	int flags;

	ev->xce = xenevtchn_open(NULL, 0);
	if (!ev->xce)
		return -errno;
	ev->fd = xenevtchn_fd(ev->xce);
	/*
	 * Non-blocking, so that io_uring tries each READ at once and, finding
	 * nothing, waits on the device's poll queue in the kernel rather than
	 * in a worker thread blocked in read().
	 */
	flags = fcntl(ev->fd, F_GETFL);
	if (flags < 0 || fcntl(ev->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	if (fstat(ev->fd, &st) < 0)
		return -errno;
	ev->device = S_ISCHR(st.st_mode);
	ev->skip_success = ring->features & IORING_FEAT_CQE_SKIP;
	return 0;
}

void blk_evtchn_close(struct blk_evtchn *ev)
{
	if (ev->xce)
		xenevtchn_close(ev->xce);
	ev->xce = NULL;
}

static void set_data(struct io_uring_sqe *sqe, uint64_t tag,
		     enum blk_evtchn_sqe which)
{
	io_uring_sqe_set_data64(sqe, (uint64_t)which << 2 | tag);
}

/* A link to the next SQE, whose success, if it can, posts nothing. */
static void link_quietly(const struct blk_evtchn *ev, struct io_uring_sqe *sqe)
{
	sqe->flags |= IOSQE_IO_LINK;
	if (ev->skip_success)
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

int blk_evtchn_arm(struct blk_evtchn *ev, struct io_uring *ring, uint64_t tag)
{
	struct io_uring_sqe *sqe;

	if (ev->armed)
		return 0;
	/* The chain goes in one submission: never split across two. */
	if (io_uring_sq_space_left(ring) < 3) {
		io_uring_submit(ring);
		if (io_uring_sq_space_left(ring) < 3)
			return -EBUSY;
	}
	if (ev->nr_unmask) {
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_write(sqe, ev->fd, ev->unmask,
				    ev->nr_unmask * sizeof(evtchn_port_t), 0);
		set_data(sqe, tag, BLK_EVTCHN_UNMASK);
		link_quietly(ev, sqe);
	}
	if (ev->poll_first) {
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_poll_add(sqe, ev->fd, POLLIN);
		set_data(sqe, tag, BLK_EVTCHN_POLL);
		link_quietly(ev, sqe);
	}
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, ev->fd, ev->got, sizeof(ev->got), 0);
	set_data(sqe, tag, BLK_EVTCHN_READ);
	ev->armed = true;
	return 0;
}

/* The ports a READ returned: unmask them now, or with the next READ. */
static void take_ports(struct blk_evtchn *ev, unsigned int n)
{
	if (!ev->device) {
		for (unsigned int i = 0; i < n; i++)
			xenevtchn_unmask(ev->xce, ev->got[i]);
		return;
	}
	for (unsigned int i = 0; i < n; i++)
		ev->unmask[i] = ev->got[i];
	ev->nr_unmask = n;
}

/* The WRITE failed: its ports are unmasked one call each instead. */
static void unmask_one_by_one(struct blk_evtchn *ev)
{
	for (unsigned int i = 0; i < ev->nr_unmask; i++)
		xenevtchn_unmask(ev->xce, ev->unmask[i]);
	ev->nr_unmask = 0;
}

int blk_evtchn_complete(struct blk_evtchn *ev, enum blk_evtchn_sqe which,
			int res)
{
	unsigned int n;

	switch (which) {
	case BLK_EVTCHN_UNMASK:
		if (res < 0)
			unmask_one_by_one(ev);
		return 0;
	case BLK_EVTCHN_POLL:
		/* Its failure cancels the READ behind it, which says so. */
		return 0;
	case BLK_EVTCHN_READ:
		break;
	}
	ev->armed = false;
	if (res < 0) {
		if (res == -EAGAIN) {
			/* A kernel that does not poll for a read: we will. */
			ev->poll_first = true;
			res = 0;
		}
		/* Cancelled behind a failed link; that one was handled. */
		return res == -ECANCELED || res == -EINTR ? 0 : res;
	}
	/* The WRITE linked ahead of this READ is done. */
	ev->nr_unmask = 0;
	n = (unsigned int)res / sizeof(evtchn_port_t);
	take_ports(ev, n);
	return (int)n;
}

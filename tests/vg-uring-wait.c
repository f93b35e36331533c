// SPDX-License-Identifier: MIT
/*
 * Preloaded into blkbackd by `make check-valgrind` when the valgrind is
 * older than 3.23: its io_uring waits, done so that valgrind can run the
 * daemon at all.
 *
 * Valgrind runs one client thread at a time under its big lock, and gives
 * the lock up only around system calls its wrappers mark as may-block.
 * Up to 3.22 io_uring_enter(2) is not one (valgrind bug 428364, fixed in
 * 3.23): a worker sleeping in it for completions holds the lock, and the
 * main thread never runs again. Here a worker that would sleep in
 * io_uring_enter() first submits without waiting, then sleeps in poll(2)
 * on the ring's descriptor, which valgrind does mark may-block, and only
 * then enters the ring. What the daemon reads, writes and frees is
 * unchanged; only how its workers sleep differs.
 *
 * A ring fd polls readable when completions are posted. With
 * IORING_SETUP_DEFER_TASKRUN they are posted only when the ring is
 * entered, so such rings are set up without it (the daemon's own fallback
 * for kernels before 6.1).
 */
#include <dlfcn.h>
#include <errno.h>
#include <liburing.h>
#include <poll.h>

#define DEFERRED_FLAGS (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

typedef int (*queue_init_fn)(unsigned int, struct io_uring *,
			     struct io_uring_params *);

int io_uring_queue_init_params(unsigned int entries, struct io_uring *ring,
			       struct io_uring_params *p)
{
	queue_init_fn real = (queue_init_fn)dlsym(RTLD_NEXT, __func__);

	if (!real)
		return -ENOSYS;
	p->flags &= ~DEFERRED_FLAGS;
	return real(entries, ring, p);
}

/* Sleep until @ring has a completion or @ms (-1: no limit) passed. */
static int sleep_for_cqe(struct io_uring *ring, int ms)
{
	struct pollfd pfd = { .fd = ring->ring_fd, .events = POLLIN };
	int ret;

	if (io_uring_cq_ready(ring))
		return 0;
	ret = poll(&pfd, 1, ms);
	if (ret < 0)
		return -errno;
	return ret == 0 ? -ETIME : 0;
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned int wait_nr)
{
	int submitted = io_uring_submit(ring), ret;

	if (submitted < 0 || !wait_nr)
		return submitted;
	ret = sleep_for_cqe(ring, -1);
	return ret < 0 ? ret : submitted;
}

static int timespec_ms(const struct __kernel_timespec *ts)
{
	if (!ts)
		return -1;
	return (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
}

int io_uring_submit_and_wait_timeout(struct io_uring *ring,
				     struct io_uring_cqe **cqe_ptr,
				     unsigned int wait_nr,
				     struct __kernel_timespec *ts,
				     sigset_t *sigmask)
{
	int ret = io_uring_submit(ring);

	(void)sigmask; /* the daemon passes none */
	if (ret < 0)
		return ret;
	if (wait_nr) {
		ret = sleep_for_cqe(ring, timespec_ms(ts));
		if (ret < 0)
			return ret;
	}
	return io_uring_peek_cqe(ring, cqe_ptr);
}

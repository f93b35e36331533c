/* SPDX-License-Identifier: MIT */
/*
 * An engine's event channel, read through the engine's io_uring, so that
 * learning which rings their guests notified costs no system call of its
 * own: the read waits on the ring with the I/O, and is submitted with it.
 *
 * Linux's /dev/xen/evtchn delivers a notified port once and masks it; one
 * read returns every port queued, one write of port numbers unmasks them
 * all (libxenevtchn reads and unmasks one port a call: three system calls
 * for one event). Here one READ of up to BLK_EVTCHN_BATCH ports is always
 * queued on the ring. The ports a READ returned are unmasked by a WRITE
 * linked ahead of the next READ, so both go to the kernel in the same
 * submission as the I/O their requests started, and the WRITE's buffer is
 * free again once that READ completes. Unmasking after the rings were
 * consumed is safe: a notification meanwhile stays pending on the masked
 * port, and the unmask delivers it to the next READ.
 *
 * Any fd other than the Linux device (another libxenevtchn, or xensim's
 * FIFO, which reads as the device does but takes no writes) is read the
 * same way and unmasked through xenevtchn_unmask() as each READ completes.
 *
 * Owned by the engine's thread, like the engine.
 */
#ifndef LIBBLK_EVTCHN_H
#define LIBBLK_EVTCHN_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <xenevtchn.h>

/* Ports one READ may return: one page, as much as the device gives. */
#define BLK_EVTCHN_BATCH 1024u

/* Which of the event channel's SQEs a completion is for. */
enum blk_evtchn_sqe {
	BLK_EVTCHN_READ,
	BLK_EVTCHN_UNMASK,
	BLK_EVTCHN_POLL,
};

struct blk_evtchn {
	xenevtchn_handle *xce;
	int fd;
	bool device; /* Linux's device: unmask by writing port arrays */
	bool skip_success; /* the kernel posts no CQE for a linked success */
	bool armed; /* a READ is queued */
	/* The kernel answered a READ with -EAGAIN: poll before each read. */
	bool poll_first;
	unsigned int nr_unmask; /* ports in unmask[] for the next WRITE */
	evtchn_port_t got[BLK_EVTCHN_BATCH]; /* the queued READ's buffer */
	evtchn_port_t unmask[BLK_EVTCHN_BATCH];
};

/* Open the handle and make its fd non-blocking. 0 or -errno. */
int blk_evtchn_open(struct blk_evtchn *ev, const struct io_uring *ring);
void blk_evtchn_close(struct blk_evtchn *ev);

/*
 * Queue the next READ, behind the unmask of the ports the last one
 * returned, unless a READ is queued already; @tag goes in the low bits of
 * each SQE's user_data, its enum blk_evtchn_sqe above them (<< 2).
 * Returns 0, or -EBUSY when the submission queue has no room now.
 */
int blk_evtchn_arm(struct blk_evtchn *ev, struct io_uring *ring, uint64_t tag);

/*
 * A completion of one of those SQEs (@which, its @res). Returns how many
 * ports it delivered, found in ev->got, or -errno when the device failed
 * (-EFBIG: its queue overflowed, events were lost).
 */
int blk_evtchn_complete(struct blk_evtchn *ev, enum blk_evtchn_sqe which,
			int res);

#endif /* LIBBLK_EVTCHN_H */

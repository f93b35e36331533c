/* SPDX-License-Identifier: MIT */
/*
 * A simulated blkfront: the guest side of one vbd, over xensim guest memory,
 * grants and event channels and the real libxenstore. It performs the
 * frontend half of the xenbus handshake like Linux xen-blkfront and takes
 * what the backend offers the way blkfront does: multi-page rings,
 * several queues (one ring and event channel each), indirect segments,
 * persistent grants and large sectors, each of which can also be declined
 * or forced to a value the backend did not offer.
 *
 * Data pages are callers' I/O buffers, named by index (0 ..
 * nr_data_pages-1). With persistent grants they are granted once per
 * connection; without, each request grants its pages and the grants end
 * when its response arrives, as blkfront does.
 *
 * Queues are independent: one thread may drive each queue. Everything else
 * (connect, close, resize) is for one thread while no queue is in use.
 */
#ifndef XENSIM_FRONTEND_H
#define XENSIM_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libblk/blkif_abi.h"
#include "tools/xensim/guest-ring.h"

enum frontend_protocol {
	FRONTEND_PROTO_X86_64, /* protocol = x86_64-abi */
	FRONTEND_PROTO_X86_32, /* protocol = x86_32-abi */
	FRONTEND_PROTO_NONE, /* no protocol node: x86_32 layout, as on x86 */
};

/* In a frontend_config choice: take what the backend offers, like Linux. */
#define FRONTEND_AUTO (-1)
#define FRONTEND_MAX_RING_ORDER GUEST_RING_MAX_ORDER /* hostile */
#define FRONTEND_MAX_QUEUES 64

struct frontend_config {
	uint32_t domid;
	uint32_t devid;
	enum frontend_protocol protocol;
	uint32_t nr_data_pages; /* pages for I/O data, shared by all queues */
	int timeout_ms; /* for each handshake step */
	/*
	 * Transport and features. FRONTEND_AUTO takes the backend's offer
	 * (ring order capped at 4, queues at the online CPUs). An explicit
	 * ring order or queue count is written as given even beyond the
	 * offer (the backend must refuse it); an explicit indirect segment
	 * count is capped by the offer, 0 disables indirect requests.
	 */
	int ring_order;
	int nr_queues;
	int max_indirect;
	int persistent; /* AUTO or 1: write feature-persistent=1; 0: =0 */
	int large_sectors; /* AUTO or 1: feature-large-sector-size=1 */
	/* Requests a queue keeps in flight at most; 0 = its ring size. */
	uint32_t max_in_flight;
};

/* What the backend published, and what was negotiated. */
struct frontend_disk_info {
	uint64_t sectors;
	uint32_t sector_size;
	uint32_t physical_sector_size;
	uint32_t info; /* VDISK_* */
	bool feature_flush_cache;
	bool feature_barrier;
	bool feature_discard;
	bool discard_secure;
	uint32_t discard_granularity; /* bytes */
	uint32_t discard_alignment;
	bool backend_persistent; /* feature-persistent offered */
	uint32_t backend_max_indirect; /* 0: node absent */
	uint32_t backend_max_ring_order;
	uint32_t backend_max_queues;
	/* Negotiated. */
	unsigned int ring_order;
	unsigned int nr_queues;
	unsigned int ring_size; /* requests per ring */
	uint32_t max_segments; /* per request: 11, or the indirect limit */
	bool persistent; /* both sides: data grants stay for the connection */
	bool large_sectors; /* feature-large-sector-size=1 written */
	uint32_t backend_domid;
	char backend_path[256];
	char frontend_path[256];
};

struct frontend_segment {
	uint32_t page; /* data page index */
	uint8_t first_sect;
	uint8_t last_sect;
};

struct frontend;
struct xensim_domain;

/*
 * Wait for backend state 2, read its features, choose ring order, queues
 * and features, set up rings, grants and ports, publish them with state 3
 * in one transaction, wait for backend state 4, read the disk properties
 * and go to 4. -ECONNREFUSED when the backend closes instead (it refused
 * what we wrote; its `error` node says why).
 */
int frontend_connect(const struct frontend_config *cfg, struct frontend **out);
const struct frontend_disk_info *frontend_disk_info(const struct frontend *fe);

void *frontend_data_page(struct frontend *fe, uint32_t page);
uint32_t frontend_nr_data_pages(const struct frontend *fe);
/* The persistent grant of a data page, 0 without persistent grants. */
grant_ref_t frontend_data_gref(const struct frontend *fe, uint32_t page);

/* ---- per queue (q < nr_queues); one thread per queue at most ---- */

/* Requests that can be queued now (ring room and free request slots). */
unsigned int frontend_queue_free(const struct frontend *fe, unsigned int q);
/* Requests queued and not answered yet. */
unsigned int frontend_queue_in_flight(const struct frontend *fe,
				      unsigned int q);

/*
 * Queue a READ, WRITE, WRITE_BARRIER or FLUSH_DISKCACHE over data pages
 * (@nr may be 0 for a flush or barrier) and return its id. More than 11
 * segments go out as BLKIF_OP_INDIRECT (READ/WRITE only). -EBUSY when no
 * slot is free, -EINVAL for a bad segment list, -E2BIG for more segments
 * than negotiated. Requests become visible to the backend at push.
 */
int frontend_queue_io(struct frontend *fe, unsigned int q, uint8_t op,
		      uint64_t sector, const struct frontend_segment *segs,
		      unsigned int nr, uint64_t *id);
/* Queue a DISCARD of @nr_sectors (flags: BLKIF_DISCARD_SECURE). */
int frontend_queue_discard(struct frontend *fe, unsigned int q, uint64_t sector,
			   uint64_t nr_sectors, uint8_t flags, uint64_t *id);
/*
 * Queue @req exactly as given, id included: the hook for malformed and
 * hostile requests.
 */
int frontend_queue_raw_on(struct frontend *fe, unsigned int q,
			  const struct frontend_request *req);
int frontend_queue_raw_indirect(struct frontend *fe, unsigned int q,
				const struct frontend_indirect_request *req);
/*
 * Write @nr raw segment entries (grant refs as given) into the indirect
 * pages the library keeps for hand-made requests on queue @q, which are
 * granted to the backend, and return those pages' grants in @grefs
 * (BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST of them).
 */
int frontend_raw_indirect_pages(struct frontend *fe, unsigned int q,
				const struct blkif_request_segment *entries,
				unsigned int nr, grant_ref_t *grefs);
/* Publish queued requests and notify the backend if it asked for it. */
int frontend_push_on(struct frontend *fe, unsigned int q);
/*
 * Take the next response of queue @q, waiting at most @timeout_ms for one.
 * Returns 1 with *@rsp filled, -ETIMEDOUT, or -EPROTO when the backend
 * answered an id that is not outstanding or with the wrong operation (for
 * an indirect request blkfront expects its indirect_op back), or -EIO
 * when a per-request grant could not be ended.
 */
int frontend_wait_on(struct frontend *fe, unsigned int q,
		     struct frontend_response *rsp, int timeout_ms);
/*
 * Responses frontend_wait_on() found on the ring only after its wait ran
 * out: the guest had asked for an event (rsp_event) and none came. A real
 * blkfront would wait for ever on such an answer; this one looks at the
 * ring once more, so a lost notification shows here, not as a hang. Call
 * once the queues' threads are done.
 */
uint64_t frontend_unannounced(const struct frontend *fe);
/*
 * Acknowledge the events the queues have pending without waiting, as
 * blkfront's interrupt handler does whether or not it finds a response.
 * For a guest that does no I/O: the backend's event at connect would
 * otherwise stay unread, and in xensim an unread wakeup stays charged to
 * its sender's socket (sim-evtchn.c).
 */
void frontend_take_events(struct frontend *fe);

/* ---- queue 0, for single-queue callers ---- */

unsigned int frontend_free_slots(const struct frontend *fe);
unsigned int frontend_in_flight(const struct frontend *fe);
int frontend_queue_rw(struct frontend *fe, uint8_t op, uint64_t sector,
		      const struct frontend_segment *segs, unsigned int nr,
		      uint64_t *id);
int frontend_queue_flush(struct frontend *fe, uint64_t *id);
int frontend_queue_raw(struct frontend *fe, const struct frontend_request *req);
int frontend_push(struct frontend *fe);
int frontend_wait(struct frontend *fe, struct frontend_response *rsp,
		  int timeout_ms);

/* The backend's current state (0 if unreadable). */
int frontend_backend_state(struct frontend *fe);

/*
 * Online resize, as blkfront's watch on the backend state does it: wait
 * (watching the backend's state node) until `sectors` differs from what
 * we know, then take the new size. -ETIMEDOUT if it never changes.
 */
int frontend_wait_resize(struct frontend *fe, int timeout_ms);

/*
 * Close like blkfront: state 5, wait for the backend to close, state 6,
 * revoke the grants, close the ports, free everything. Returns the first
 * error seen; @fe is freed in every case.
 */
int frontend_close(struct frontend *fe);
/* Free without any handshake (the guest vanished). */
void frontend_abandon(struct frontend *fe);

/*
 * ---- hostile hooks: what a misbehaving guest does to its own ring ----
 * For the attack checks only; same thread rules as the queue calls.
 */

/* The guest's own domain (to grant pages as it likes) and a data page's
 * frame in it. */
struct xensim_domain *frontend_domain(struct frontend *fe);
uint32_t frontend_data_pfn(const struct frontend *fe, uint32_t page);
/* Requests written into queue @q's ring so far (the private producer). */
uint32_t frontend_req_prod_pvt(const struct frontend *fe, unsigned int q);
/* Notify the backend, whatever req_event says. */
int frontend_notify(struct frontend *fe, unsigned int q);
/* Publish @value as req_prod, however impossible, and notify. */
int frontend_set_req_prod(struct frontend *fe, unsigned int q, uint32_t value);
/*
 * Rewrite sector_number and the segments of the request queued last on
 * queue @q, in place on the shared ring, after it may have been pushed
 * (a double-fetch attack). Only those fields: the response, written into
 * the same slot, overlaps the first 12 bytes (operation, nr_segments,
 * handle, id), so rewriting them would corrupt the answer, not the
 * request.
 */
void frontend_rewrite_last(struct frontend *fe, unsigned int q,
			   const struct frontend_request *req);

#endif /* XENSIM_FRONTEND_H */

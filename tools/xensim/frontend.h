/* SPDX-License-Identifier: MIT */
/*
 * A simulated blkfront: the guest side of one vbd, over xensim guest memory,
 * grants and event channels and the real libxenstore. It performs the
 * frontend half of the xenbus handshake like Linux xen-blkfront and puts
 * requests of either x86 ABI on a single-page shared ring.
 *
 * Data pages are granted to the backend once per connection; callers name
 * them by index (0 .. nr_data_pages-1) and may read and write their bytes
 * through frontend_data_page().
 */
#ifndef XENSIM_FRONTEND_H
#define XENSIM_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libblk/blkif_abi.h"

enum frontend_protocol {
	FRONTEND_PROTO_X86_64, /* protocol = x86_64-abi */
	FRONTEND_PROTO_X86_32, /* protocol = x86_32-abi */
	FRONTEND_PROTO_NONE, /* no protocol node: x86_32 layout, as on x86 */
};

struct frontend_config {
	uint32_t domid;
	uint32_t devid;
	enum frontend_protocol protocol;
	uint32_t nr_data_pages; /* pages granted for I/O data */
	int timeout_ms; /* for each handshake step */
};

/* What the backend published. */
struct frontend_disk_info {
	uint64_t sectors;
	uint32_t sector_size;
	uint32_t physical_sector_size;
	uint32_t info; /* VDISK_* */
	bool feature_flush_cache;
	bool feature_barrier;
	uint32_t backend_domid;
	char backend_path[256];
	char frontend_path[256];
};

struct frontend_segment {
	uint32_t page; /* data page index */
	uint8_t first_sect;
	uint8_t last_sect;
};

/* A request in ABI-neutral form; frontend_submit lays it out in the ring. */
struct frontend_request {
	uint8_t operation;
	uint8_t nr_segments; /* written as is: may lie about segs[] */
	uint16_t handle;
	uint64_t id; /* chosen by the library unless submitted raw */
	uint64_t sector_number;
	struct {
		grant_ref_t gref;
		uint8_t first_sect;
		uint8_t last_sect;
	} seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

struct frontend_response {
	uint64_t id;
	uint8_t operation;
	int16_t status;
};

struct frontend;

/*
 * Wait for backend state 2, read its features, set up ring, grants and
 * port, publish them with state 3 in one transaction, wait for backend
 * state 4, read the disk properties and go to 4.
 */
int frontend_connect(const struct frontend_config *cfg, struct frontend **out);
const struct frontend_disk_info *frontend_disk_info(const struct frontend *fe);

void *frontend_data_page(struct frontend *fe, uint32_t page);
grant_ref_t frontend_data_gref(const struct frontend *fe, uint32_t page);
/* Free request slots on the ring. */
unsigned int frontend_free_slots(const struct frontend *fe);

/*
 * Queue a READ/WRITE over data pages (or a FLUSH with nr == 0) and return
 * its id. -EBUSY when the ring is full, -EINVAL for a bad segment list.
 * Requests become visible to the backend at frontend_push().
 */
int frontend_queue_rw(struct frontend *fe, uint8_t op, uint64_t sector,
		      const struct frontend_segment *segs, unsigned int nr,
		      uint64_t *id);
int frontend_queue_flush(struct frontend *fe, uint64_t *id);
/*
 * Queue @req exactly as given, id included: the hook for malformed and
 * hostile requests.
 */
int frontend_queue_raw(struct frontend *fe, const struct frontend_request *req);
/* Publish queued requests and notify the backend if it asked for it. */
int frontend_push(struct frontend *fe);

/*
 * Take the next response, waiting at most @timeout_ms for one. Returns 1
 * with *@rsp filled, -ETIMEDOUT, or -EPROTO when the backend answered an id
 * that is not outstanding.
 */
int frontend_wait(struct frontend *fe, struct frontend_response *rsp,
		  int timeout_ms);
/* Requests queued and not answered yet. */
unsigned int frontend_in_flight(const struct frontend *fe);

/* The backend's current state (0 if unreadable). */
int frontend_backend_state(struct frontend *fe);

/*
 * Close like blkfront: state 5, wait for the backend to close, state 6,
 * revoke the grants, close the port, free everything. Returns the first
 * error seen; @fe is freed in every case.
 */
int frontend_close(struct frontend *fe);
/* Free without any handshake (the guest vanished). */
void frontend_abandon(struct frontend *fe);

#endif /* XENSIM_FRONTEND_H */

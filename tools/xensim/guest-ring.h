/* SPDX-License-Identifier: MIT */
/*
 * The shared test guest: one blkif ring as a guest keeps it, over xensim
 * guest memory, in either ABI. It lays requests out exactly as given
 * (hostile ones too), publishes them, and takes responses off the ring;
 * it keeps no request slots and judges nothing, so a test that drives a
 * backend directly (tests/test-engine.c) and the simulated blkfront
 * (frontend-io.c) write and read the ring through the same code.
 *
 * One thread uses a ring at a time; the caller owns the struct, the
 * domain handle it names, and the ring's pages in that domain.
 */
#ifndef XENSIM_GUEST_RING_H
#define XENSIM_GUEST_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "libblk/blkif_abi.h"

/* One more page order than blkif allows, so a hostile guest can ask it. */
#define GUEST_RING_MAX_ORDER 5
#define GUEST_RING_MAX_PAGES (1u << GUEST_RING_MAX_ORDER)

/* A request in ABI-neutral form; laid out on the ring as is. */
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

/* An indirect request exactly as a (possibly hostile) guest writes it. */
struct frontend_indirect_request {
	uint8_t indirect_op;
	uint16_t nr_segments;
	uint16_t handle;
	uint64_t id;
	uint64_t sector_number;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
};

struct frontend_response {
	uint64_t id;
	uint8_t operation;
	int16_t status;
};

struct xensim_domain;

struct guest_ring {
	struct xensim_domain *dom; /* grants the pages, owns the port */
	bool x86_64;
	unsigned int order;
	union {
		struct blkif_x86_64_front_ring r64;
		struct blkif_x86_32_front_ring r32;
	} ring;
	grant_ref_t grefs[GUEST_RING_MAX_PAGES]; /* 0: not granted */
	int port; /* unbound, for the backend to bind; -1 when closed */
};

/*
 * Zero 2^@order pages from frame @pfn of @dom, initialise them as a ring
 * of the ABI chosen, grant them to @backend_domid and allocate an unbound
 * event channel for it. On error, what was granted stays in @gr for
 * guest_ring_end() to take back.
 */
int guest_ring_init(struct guest_ring *gr, struct xensim_domain *dom,
		    uint32_t backend_domid, uint32_t pfn, unsigned int order,
		    bool x86_64);
/*
 * Revoke the ring's grants (retrying while the backend still maps one,
 * until @deadline_ms on CLOCK_MONOTONIC) and return the first error.
 * The port stays: guest_ring_close_port() closes it.
 */
int guest_ring_end_grants(struct guest_ring *gr, int64_t deadline_ms);
void guest_ring_close_port(struct guest_ring *gr);
/* Revoke one grant of @dom, retrying while it is mapped (0 is no grant). */
int guest_grant_end(struct xensim_domain *dom, grant_ref_t ref,
		    int64_t deadline_ms);
int64_t guest_ring_now_ms(void);

/* Requests per ring: 32 per page for both ABIs (__CONST_RING_SIZE). */
unsigned int guest_ring_size(const struct guest_ring *gr);
/* Slots free for requests: not written, or answered and taken. */
unsigned int guest_ring_room(const struct guest_ring *gr);
/* Requests written so far (the private producer index). */
uint32_t guest_ring_req_prod_pvt(const struct guest_ring *gr);
/* Responses the backend has published (its producer index). */
uint32_t guest_ring_rsp_prod(const struct guest_ring *gr);

/* Write one request into the next slot; guest_ring_room() must be > 0. */
void guest_ring_put_rw(struct guest_ring *gr,
		       const struct frontend_request *req);
void guest_ring_put_indirect(struct guest_ring *gr,
			     const struct frontend_indirect_request *req);
void guest_ring_put_discard(struct guest_ring *gr, uint16_t handle, uint64_t id,
			    uint64_t sector, uint64_t nr_sectors,
			    uint8_t flags);
/*
 * Publish what was written; true when the backend asked for an event
 * (req_event), which the caller then sends with guest_ring_notify().
 */
bool guest_ring_push(struct guest_ring *gr);
int guest_ring_notify(struct guest_ring *gr);
/*
 * Take the next published response: 1 with *@rsp filled, 0 if none, or
 * -EPROTO when the backend published more than the ring holds.
 */
int guest_ring_take(struct guest_ring *gr, struct frontend_response *rsp);
/* Ask for an event at the next response; true if one came meanwhile. */
bool guest_ring_final_check(struct guest_ring *gr);

/* ---- for hostile guests ---- */

/* Publish @value as req_prod, however impossible (no event sent). */
void guest_ring_set_req_prod(struct guest_ring *gr, uint32_t value);
/*
 * Rewrite sector_number and the segments of the request written last, in
 * place, after it may have been published (a double fetch). Only those
 * fields: a response written into the same slot covers the first 12 or
 * 16 bytes (operation to id).
 */
void guest_ring_rewrite_last(struct guest_ring *gr,
			     const struct frontend_request *req);

#endif /* XENSIM_GUEST_RING_H */

/* SPDX-License-Identifier: MIT */
/*
 * Inside the simulated blkfront (frontend.h): the state its four jobs
 * share, and the calls between them.
 *
 *  - frontend.c, the xenbus handshake: finds the backend, negotiates,
 *    lays out guest memory, sets up every queue's ring, slots and grants,
 *    and publishes them; also the later xenstore reads (state, resize).
 *    One thread, before any queue is used.
 *  - frontend-io.c, ring I/O: request slots, grants per request, queueing,
 *    pushing and matching responses with requests. One thread per queue;
 *    a queue's struct fe_queue belongs to that thread while it runs.
 *  - frontend-hostile.c, the hostile hooks: raw requests and lies about
 *    the ring, for the attack checks. The same thread rules as the I/O.
 *  - frontend-close.c, the close: the closing handshake, revoking every
 *    grant, freeing. One thread, once no queue is in use.
 *
 * The ring itself (layout in either ABI, indexes, grants of its pages,
 * its event channel) is the shared test guest's (guest-ring.h); a queue
 * owns its struct guest_ring.
 *
 * Guest memory layout, in page frames: the rings of all queues first
 * (2^order pages each), then each queue's indirect pages (a set per
 * request slot, plus one set for hand-made raw requests), then the data
 * pages.
 */
#ifndef XENSIM_FRONTEND_INTERNAL_H
#define XENSIM_FRONTEND_INTERNAL_H

#include "tools/xensim/frontend.h"
#include "tools/xensim/guest-ring.h"

#define RAW_IND_PAGES BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST
#define SEGS_PER_IND_PAGE BLKIF_SEGS_PER_INDIRECT_PAGE

/* A request slot: one request in flight and what it holds. */
struct slot {
	bool busy;
	uint8_t expect_op; /* what the response must carry */
	uint64_t id;
	unsigned int nr_grefs; /* per-request grants, ended at response */
	grant_ref_t *grefs;
};

struct fe_queue {
	struct xensim_domain *dom; /* owns this queue's port */
	struct guest_ring gr; /* over dom */
	struct slot *slots;
	unsigned int nr_slots;
	unsigned int nr_busy;
	unsigned int free_hint;
	uint64_t generation;
	uint32_t ind_pfn; /* slot s, page k: ind_pfn + s * ipp + k */
	grant_ref_t *ind_grefs; /* persistent grants of those pages */
	grant_ref_t raw_grefs[RAW_IND_PAGES];
	/* Responses found only after a wait ran out (frontend.h). */
	uint64_t unannounced;
};

struct frontend {
	struct frontend_config cfg;
	struct frontend_disk_info disk;
	struct xs_handle *xs;
	struct xensim_domain *dom;
	bool is_x86_64;
	uint32_t max_indirect; /* negotiated: 0 = no indirect requests */
	unsigned int ind_pages_per_req; /* ipp */
	uint32_t data_pfn;
	grant_ref_t *data_grefs; /* persistent grants, NULL without */
	uint32_t nr_data_granted;
	struct fe_queue queue[FRONTEND_MAX_QUEUES];
	unsigned int nr_queues_open;
};

/* frontend.c: grant frame @pfn of @dom to the backend. */
int fe_grant_page(struct frontend *fe, struct xensim_domain *dom, uint32_t pfn,
		  bool readonly, grant_ref_t *out);
/* frontend.c: write our own state node. */
int fe_write_state(struct frontend *fe, int state);

/*
 * frontend-io.c: take a free slot of @fq for a request whose response
 * must carry @expect_op; its id is @raw_id when @raw, else one of ours.
 * -EBUSY when every slot is taken.
 */
int fe_take_slot(struct fe_queue *fq, uint64_t raw_id, bool raw,
		 uint8_t expect_op, struct slot **out);
/* frontend-io.c: end a slot's per-request grants and free it. */
void fe_release_slot(struct fe_queue *fq, struct slot *s);

#endif /* XENSIM_FRONTEND_INTERNAL_H */

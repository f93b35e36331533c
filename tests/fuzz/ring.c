// SPDX-License-Identifier: MIT
/*
 * Fuzz harness: the ring index logic (libblk/ring.c) against a guest that
 * writes what it likes into the shared page's indexes, in either ABI and
 * at any ring order, interleaved with what the engine does: take
 * requests, queue answers in order, publish them, re-arm before sleeping.
 *
 * Input: a 5-byte header (ABI and order, then the guest's rsp_prod when
 * the backend attaches), then a script of steps, one opcode byte and its
 * operands each (see enum step). Missing bytes read as zeros.
 *
 * Invariants:
 * - the backend never holds more than a ring's worth of requests whose
 *   answers are unpublished (blk_ring_full() says exactly when), and
 *   takes requests strictly in order, each from the slot its index names
 *   (the guest writes each slot's index as its id);
 * - -EPROTO only when the producer index really is more than a ring
 *   ahead, and a valid index with room always yields its request;
 * - answers land in the slot their index names and only there, field by
 *   field (padding keeps the guest's bytes); the request-side indexes and
 *   every other slot are untouched, rsp_prod moves only when answers are
 *   published, and the guest is notified exactly when its rsp_event asked
 *   for it;
 * - before sleeping, req_event is re-armed past everything consumed;
 * - a poller's peek reports new requests exactly when req_prod moved.
 */
#include <errno.h>

#include "libblk/ring.h"
#include "tests/fuzz/fuzz.h"

/* Largest ring: order 4 with the 108-byte slots of x86_32. */
#define MAX_SLOTS 1024u

enum step {
	GUEST_PRODUCE, /* u16 n: fill the next n slots, then move req_prod */
	GUEST_SET_REQ_PROD, /* u32: req_prod anywhere, a lie or not */
	GUEST_SET_RSP_EVENT, /* u32 */
	BACKEND_TAKE, /* u8 n: up to n blk_ring_next_request() calls */
	BACKEND_ANSWER, /* u8 n: answer the n oldest taken requests */
	BACKEND_PUSH,
	BACKEND_FINAL_CHECK,
	BACKEND_PEEK, /* a poller's look: blk_ring_has_requests() */
	NR_STEPS
};

/* Both ABIs share the sring header; only the slots differ. */
typedef blkif_x86_64_sring_t sring_header_t;

struct model {
	struct blk_ring ring;
	uint8_t *page;
	uint8_t *before; /* the page before a step, to compare */
	size_t bytes;
	size_t slot_bytes;
	size_t id_offset; /* where a request's id sits in its slot */
	unsigned int size;
	RING_IDX next_fill; /* next slot index the guest fills */
	RING_IDX cons; /* the backend's consumer, as the model expects it */
	RING_IDX answered; /* answers queued (rsp_prod_pvt) */
	RING_IDX published; /* rsp_prod last published */
	bool broken;
};

static sring_header_t *sring(const struct model *m)
{
	return (sring_header_t *)m->page;
}

static uint8_t *slot_at(const struct model *m, RING_IDX i)
{
	return m->page + offsetof(sring_header_t, ring) +
	       (size_t)(i & (m->size - 1)) * m->slot_bytes;
}

/* A guest request that carries its own ring index as id. */
static void guest_fill(struct model *m, RING_IDX i)
{
	uint64_t id = i;
	uint8_t *slot = slot_at(m, i);

	memset(slot, 0, m->slot_bytes);
	slot[0] = BLKIF_OP_READ;
	memcpy(slot + m->id_offset, &id, sizeof(id));
}

static void guest_produce(struct model *m, unsigned int n)
{
	/* A guest may overrun its own unanswered slots; only a lie. */
	n %= 2 * m->size + 1;
	for (unsigned int k = 0; k < n; k++)
		guest_fill(m, m->next_fill++);
	sring(m)->req_prod = m->next_fill;
}

static void backend_take(struct model *m)
{
	RING_IDX prod = sring(m)->req_prod;
	RING_IDX outstanding = m->cons - m->answered;
	struct blk_request req;
	uint8_t before[sizeof(union blkif_x86_64_slot)];
	int ret;

	memcpy(before, slot_at(m, m->cons), m->slot_bytes);
	ret = blk_ring_next_request(&m->ring, &req);
	FUZZ_ASSERT(ret == 1 || ret == 0 || ret == -EPROTO);
	if (ret == -EPROTO) {
		/* Only a real lie breaks the ring; then it is disconnected. */
		FUZZ_ASSERT(prod - m->cons > m->size);
		m->broken = true;
		return;
	}
	if (ret == 0) {
		/* Nothing taken: none published, or no room for its answer. */
		FUZZ_ASSERT(prod == m->cons || outstanding == m->size ||
			    prod - m->cons > m->size);
		FUZZ_ASSERT(blk_ring_req_cons(&m->ring) == m->cons);
		return;
	}
	FUZZ_ASSERT(outstanding < m->size);
	FUZZ_ASSERT(req.id == fuzz_field(before, m->id_offset, 8));
	FUZZ_ASSERT(req.operation == before[0]);
	m->cons++;
	FUZZ_ASSERT(blk_ring_req_cons(&m->ring) == m->cons);
	FUZZ_ASSERT(m->cons - m->answered <= m->size);
}

/*
 * The answer's fields (id, operation, status at 0, 8 and 10 in both ABIs)
 * are the only bytes that change: the padding around them keeps the
 * guest's own bytes, so no backend memory reaches the ring (XSA-216).
 */
static void backend_answer(struct model *m)
{
	static const int16_t statuses[] = { BLKIF_RSP_OKAY, BLKIF_RSP_ERROR,
					    BLKIF_RSP_EOPNOTSUPP };
	int16_t status = statuses[m->answered % 3];
	uint64_t id = m->answered;
	size_t at = (size_t)(slot_at(m, m->answered) - m->page);

	if (m->answered == m->cons)
		return;
	memcpy(m->before, m->page, m->bytes);
	blk_ring_put_response(&m->ring, id, BLKIF_OP_WRITE, status);
	memcpy(m->before + at, &id, sizeof(id));
	m->before[at + 8] = BLKIF_OP_WRITE;
	memcpy(m->before + at + 10, &status, sizeof(status));
	FUZZ_ASSERT(memcmp(m->before, m->page, m->bytes) == 0);
	m->answered++;
	FUZZ_ASSERT(blk_ring_rsp_prod(&m->ring) == m->answered);
}

static void backend_push(struct model *m)
{
	RING_IDX event = sring(m)->rsp_event;
	bool notify = blk_ring_push_responses(&m->ring);

	FUZZ_ASSERT(sring(m)->rsp_prod == m->answered);
	/* Notify when rsp_event lies in (published, answered]. */
	FUZZ_ASSERT(notify ==
		    (m->answered - event < m->answered - m->published));
	m->published = m->answered;
}

static void backend_final_check(struct model *m)
{
	RING_IDX prod = sring(m)->req_prod;
	bool more = blk_ring_final_check(&m->ring);
	bool waiting = prod != m->cons && m->cons - m->answered < m->size;

	FUZZ_ASSERT(more == waiting);
	if (!more)
		FUZZ_ASSERT(sring(m)->req_event == m->cons + 1);
	FUZZ_ASSERT(blk_ring_full(&m->ring) ==
		    (m->cons - m->answered == m->size));
}

/* A peek says whether req_prod moved past the consumer, and takes nothing. */
static void backend_peek(struct model *m)
{
	FUZZ_ASSERT(blk_ring_has_requests(&m->ring) ==
		    (sring(m)->req_prod != m->cons));
	FUZZ_ASSERT(blk_ring_req_cons(&m->ring) == m->cons);
}

static void run_step(struct model *m, struct fuzz_input *in)
{
	switch (fuzz_take(in, 1) % NR_STEPS) {
	case GUEST_PRODUCE:
		guest_produce(m, (unsigned int)fuzz_take(in, 2));
		break;
	case GUEST_SET_REQ_PROD:
		sring(m)->req_prod = (RING_IDX)fuzz_take(in, 4);
		break;
	case GUEST_SET_RSP_EVENT:
		sring(m)->rsp_event = (RING_IDX)fuzz_take(in, 4);
		break;
	case BACKEND_TAKE:
		for (unsigned int n = (unsigned int)fuzz_take(in, 1);
		     n > 0 && !m->broken; n--)
			backend_take(m);
		break;
	case BACKEND_ANSWER:
		for (unsigned int n = (unsigned int)fuzz_take(in, 1); n > 0;
		     n--)
			backend_answer(m);
		break;
	case BACKEND_PUSH:
		backend_push(m);
		break;
	case BACKEND_FINAL_CHECK:
		backend_final_check(m);
		break;
	case BACKEND_PEEK:
		backend_peek(m);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t flags = (uint8_t)fuzz_take(&in, 1);
	enum blkif_abi abi = flags & 1 ? BLKIF_ABI_X86_64 : BLKIF_ABI_X86_32;
	RING_IDX start = (RING_IDX)fuzz_take(&in, 4);
	struct model m = {
		.bytes = (size_t)BLKIF_PAGE_SIZE << ((flags >> 1) % 5),
		.slot_bytes = abi == BLKIF_ABI_X86_64
				      ? sizeof(union blkif_x86_64_slot)
				      : sizeof(union blkif_x86_32_slot),
		.id_offset = abi == BLKIF_ABI_X86_64 ? 8 : 4,
		.next_fill = start,
		.cons = start,
		.answered = start,
		.published = start,
	};

	/* Exactly the ring's bytes, so ASan catches a step outside it. */
	m.page = aligned_alloc(BLKIF_PAGE_SIZE, m.bytes);
	m.before = malloc(m.bytes);
	FUZZ_ASSERT(m.page != NULL && m.before != NULL);
	memset(m.page, 0, m.bytes);
	sring(&m)->req_prod = start;
	sring(&m)->rsp_prod = start;
	sring(&m)->rsp_event = start + 1;
	blk_ring_attach(&m.ring, m.page, abi, m.bytes);
	m.size = blk_ring_size(&m.ring);
	FUZZ_ASSERT(m.size >= 1 && m.size <= MAX_SLOTS &&
		    (m.size & (m.size - 1)) == 0);
	FUZZ_ASSERT(offsetof(sring_header_t, ring) + m.size * m.slot_bytes <=
		    m.bytes);
	FUZZ_ASSERT(blk_ring_req_cons(&m.ring) == start);

	while (in.left > 0 && !m.broken)
		run_step(&m, &in);
	free(m.before);
	free(m.page);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Fuzz harness: one guest-written ring slot, in either ABI, taken off a
 * real shared ring (blk_ring_next_request), checked (blk_request_check),
 * its indirect segment list read, and its segments checked
 * (blk_request_check_segments), against an image size and the limits the
 * connection negotiated, all chosen by the input.
 *
 * Input: a 16-byte header (see struct setup), the slot's bytes, then the
 * indirect segment list as the guest's indirect pages hold it (8 bytes per
 * segment, pages back to back). Short inputs are padded with zeros.
 *
 * Invariants, beyond "no crash" (ASan and UBSan watch every access):
 * - the private copy decodes the fields at the offsets the ABI puts them,
 *   and does not change when the guest rewrites the slot afterwards;
 * - each check answers what blkif.h and the offered features say it must
 *   (an accepted request is valid, a valid request is accepted, and an
 *   operation not offered is EOPNOTSUPP, not an error);
 * - an accepted request moves every byte inside the image and each
 *   segment's bytes inside its page, with no 64-bit overflow on the way,
 *   needs at most BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST indirect pages,
 *   and never writes a read-only disk.
 *
 * What stays out of reach here: the grant copies of the indirect pages
 * and of the data (io.c, against a grant table); the copied segment list
 * goes through the daemon's own blk_request_take_indirect().
 */
#include <errno.h>

#include "libblk/ring.h"
#include "tests/fuzz/fuzz.h"

/* The header: what the connection offers and where the slot sits. */
struct setup {
	enum blkif_abi abi;
	unsigned int order; /* ring pages: 2^order, 0 to 4 */
	RING_IDX start; /* the guest's rsp_prod when the backend attaches */
	struct blk_limits lim;
};

static const uint32_t sector_sizes[] = { 512, 1024, 2048, 4096 };

static void read_setup(struct fuzz_input *in, struct setup *s)
{
	uint8_t flags = (uint8_t)fuzz_take(in, 1);
	uint64_t image_bytes;

	s->abi = flags & 1 ? BLKIF_ABI_X86_64 : BLKIF_ABI_X86_32;
	s->lim.readonly = flags & 2;
	s->lim.discard = flags & 4;
	s->lim.barrier = flags & 8;
	s->lim.sector_size = sector_sizes[(flags >> 4) & 3];
	s->lim.max_indirect_segments =
		(uint16_t)(fuzz_take(in, 2) %
			   (BLKIF_MAX_INDIRECT_SEGMENTS + 1));
	/* As blkbackd computes it from the image (vbd_capacity()). */
	image_bytes = fuzz_take(in, 8);
	s->lim.sectors = image_bytes / BLKIF_SECTOR_SIZE * BLKIF_SECTOR_SIZE /
			 s->lim.sector_size;
	s->start = (RING_IDX)fuzz_take(in, 4);
	s->order = (unsigned int)(fuzz_take(in, 1) % 5);
}

static size_t slot_size(enum blkif_abi abi)
{
	return abi == BLKIF_ABI_X86_64 ? sizeof(union blkif_x86_64_slot)
				       : sizeof(union blkif_x86_32_slot);
}

/* ---- the ABI, decoded independently of ring.c ---- */

/*
 * Both ABIs put operation, nr_segments/flag/indirect_op and handle in the
 * first four bytes; id and sector_number follow at 8 and 16 on x86_64 and
 * at 4 and 12 on x86_32; after them come the segments, the discard's
 * nr_sectors, or the indirect request's handle and page references.
 */
struct abi_offsets {
	size_t id, sector, tail;
};

static struct abi_offsets offsets(enum blkif_abi abi)
{
	return abi == BLKIF_ABI_X86_64 ? (struct abi_offsets){ 8, 16, 24 }
				       : (struct abi_offsets){ 4, 12, 20 };
}

static void check_decoded(const struct blk_request *req, const uint8_t *slot,
			  enum blkif_abi abi)
{
	struct abi_offsets o = offsets(abi);

	FUZZ_ASSERT(req->operation == slot[0]);
	FUZZ_ASSERT(req->id == fuzz_field(slot, o.id, 8));
	FUZZ_ASSERT(req->sector == fuzz_field(slot, o.sector, 8));
	switch (slot[0]) {
	case BLKIF_OP_DISCARD:
		FUZZ_ASSERT(req->discard_flags == slot[1]);
		FUZZ_ASSERT(req->handle == fuzz_field(slot, 2, 2));
		FUZZ_ASSERT(req->nr_sectors == fuzz_field(slot, o.tail, 8));
		break;
	case BLKIF_OP_INDIRECT:
		FUZZ_ASSERT(req->indirect_op == slot[1]);
		FUZZ_ASSERT(req->nr_segments == fuzz_field(slot, 2, 2));
		FUZZ_ASSERT(req->handle == fuzz_field(slot, o.tail, 2));
		for (unsigned int i = 0;
		     i < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; i++)
			FUZZ_ASSERT(req->indirect_grefs[i] ==
				    fuzz_field(slot, o.tail + 4 + 4 * i, 4));
		break;
	default:
		FUZZ_ASSERT(req->nr_segments == slot[1]);
		FUZZ_ASSERT(req->handle == fuzz_field(slot, 2, 2));
		for (unsigned int i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST;
		     i++) {
			size_t s = o.tail + 8 * i;

			FUZZ_ASSERT(req->seg[i].gref == fuzz_field(slot, s, 4));
			FUZZ_ASSERT(req->seg[i].first_sect == slot[s + 4]);
			FUZZ_ASSERT(req->seg[i].last_sect == slot[s + 5]);
		}
		break;
	}
}

/* ---- what blkif.h allows ---- */

/* sector + count inside capacity, in 128 bits so nothing wraps. */
static bool within(uint64_t sector, uint64_t count, uint64_t capacity)
{
	return (unsigned __int128)sector + count <= capacity;
}

static bool request_writes(const struct blk_request *req, uint8_t op)
{
	return op == BLKIF_OP_WRITE || op == BLKIF_OP_WRITE_BARRIER ||
	       (op == BLKIF_OP_FLUSH_DISKCACHE && req->nr_segments > 0);
}

/* The answer blk_request_check() owes: the first, per-request check. */
static int expected_first(const struct blk_request *req,
			  const struct blk_limits *lim)
{
	bool direct_ok = req->nr_segments <= BLKIF_MAX_SEGMENTS_PER_REQUEST;

	switch (req->operation) {
	case BLKIF_OP_READ:
	case BLKIF_OP_WRITE:
		return req->nr_segments > 0 && direct_ok ? BLKIF_RSP_OKAY
							 : BLKIF_RSP_ERROR;
	case BLKIF_OP_FLUSH_DISKCACHE:
		return direct_ok ? BLKIF_RSP_OKAY : BLKIF_RSP_ERROR;
	case BLKIF_OP_WRITE_BARRIER:
		if (!lim->barrier)
			return BLKIF_RSP_EOPNOTSUPP;
		return direct_ok ? BLKIF_RSP_OKAY : BLKIF_RSP_ERROR;
	case BLKIF_OP_DISCARD:
		if (!lim->discard)
			return BLKIF_RSP_EOPNOTSUPP;
		return !lim->readonly && req->nr_sectors > 0 &&
				       within(req->sector, req->nr_sectors,
					      lim->sectors)
			       ? BLKIF_RSP_OKAY
			       : BLKIF_RSP_ERROR;
	case BLKIF_OP_INDIRECT:
		if (!lim->max_indirect_segments)
			return BLKIF_RSP_EOPNOTSUPP;
		return (req->indirect_op == BLKIF_OP_READ ||
			req->indirect_op == BLKIF_OP_WRITE) &&
				       req->nr_segments > 0 &&
				       req->nr_segments <=
					       lim->max_indirect_segments
			       ? BLKIF_RSP_OKAY
			       : BLKIF_RSP_ERROR;
	default:
		return BLKIF_RSP_EOPNOTSUPP;
	}
}

/*
 * The second check, segment by segment: inside its page (in units of the
 * connection's sector size), and all of them inside the image.
 */
static int expected_segments(const struct blk_request *req,
			     const struct blk_segment *seg,
			     const struct blk_limits *lim)
{
	uint64_t sectors = 0;

	for (unsigned int i = 0; i < req->nr_segments; i++) {
		if (seg[i].first_sect > seg[i].last_sect ||
		    (uint64_t)(seg[i].last_sect + 1) * lim->sector_size >
			    BLKIF_PAGE_SIZE)
			return BLKIF_RSP_ERROR;
		sectors += seg[i].last_sect - seg[i].first_sect + 1u;
	}
	/*
	 * A request without data names no range: Linux blkfront's empty
	 * flush carries sector (sector_t)-1.
	 */
	if (sectors && !within(req->sector, sectors, lim->sectors))
		return BLKIF_RSP_ERROR;
	if (lim->readonly && request_writes(req, blk_request_op(req)))
		return BLKIF_RSP_ERROR;
	return BLKIF_RSP_OKAY;
}

/*
 * An accepted request, as io.c will run it: the file offsets and the
 * in-page offsets it computes must stay inside the image and the pages.
 */
static void check_accepted(const struct blk_request *req,
			   const struct blk_segment *seg,
			   const struct blk_limits *lim)
{
	uint64_t image_end = lim->sectors * lim->sector_size;
	uint64_t off, len;

	FUZZ_ASSERT(!(lim->readonly && blk_request_writes(req)));
	/* An empty flush or barrier moves nothing: its sector is unused. */
	if (req->operation != BLKIF_OP_DISCARD && !req->nr_segments)
		return;
	FUZZ_ASSERT(
		!__builtin_mul_overflow(req->sector, lim->sector_size, &off));
	if (req->operation == BLKIF_OP_DISCARD) {
		FUZZ_ASSERT(!__builtin_mul_overflow(req->nr_sectors,
						    lim->sector_size, &len));
		FUZZ_ASSERT(len > 0 && off + len <= image_end);
		return;
	}
	if (req->operation == BLKIF_OP_INDIRECT)
		FUZZ_ASSERT(blk_indirect_pages(req->nr_segments) <=
			    BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST);
	else
		FUZZ_ASSERT(req->nr_segments <= BLKIF_MAX_SEGMENTS_PER_REQUEST);
	for (unsigned int i = 0; i < req->nr_segments; i++) {
		uint32_t in_page = seg[i].first_sect * lim->sector_size;

		len = blk_segment_bytes(&seg[i], lim->sector_size);
		FUZZ_ASSERT(len > 0 && in_page + len <= BLKIF_PAGE_SIZE);
		FUZZ_ASSERT(off <= image_end && len <= image_end - off);
		off += len;
	}
}

/* ---- one slot, start to end ---- */

/* Put @slot on a fresh ring at the index the header chose; take it off. */
static void take_request(const struct setup *s, const uint8_t *slot,
			 struct blk_request *req)
{
	size_t bytes = (size_t)BLKIF_PAGE_SIZE << s->order;
	uint8_t *page = aligned_alloc(BLKIF_PAGE_SIZE, bytes);
	blkif_x86_64_sring_t *sring = (void *)page;
	struct blk_ring ring;
	size_t at;

	FUZZ_ASSERT(page != NULL);
	memset(page, 0, bytes);
	/* The header (indexes, events) is the same in both ABIs. */
	sring->rsp_prod = s->start;
	blk_ring_attach(&ring, page, s->abi, bytes);
	at = (size_t)(s->start & (blk_ring_size(&ring) - 1));
	memcpy(page + offsetof(blkif_x86_64_sring_t, ring) +
		       at * slot_size(s->abi),
	       slot, slot_size(s->abi));
	sring->req_prod = s->start + 1;

	FUZZ_ASSERT(blk_ring_next_request(&ring, req) == 1);
	FUZZ_ASSERT(blk_ring_req_cons(&ring) == s->start + 1);
	check_decoded(req, slot, s->abi);
	/* The guest rewrites the slot: the backend's copy must not move. */
	memset(page, 0xa5, bytes);
	check_decoded(req, slot, s->abi);
	free(page);
}

/*
 * The indirect pages' segment list, as the grant copy leaves it, converted
 * by the daemon's own blk_request_take_indirect(); the conversion must keep
 * each field.
 */
static void read_indirect_segments(struct fuzz_input *in,
				   const struct blk_request *req,
				   struct blk_segment *seg)
{
	static struct blkif_request_segment raw[BLKIF_MAX_INDIRECT_SEGMENTS];

	fuzz_take_bytes(in, raw, req->nr_segments * sizeof(raw[0]));
	blk_request_take_indirect(raw, req->nr_segments, seg);
	for (unsigned int i = 0; i < req->nr_segments; i++)
		FUZZ_ASSERT(seg[i].gref == raw[i].gref &&
			    seg[i].first_sect == raw[i].first_sect &&
			    seg[i].last_sect == raw[i].last_sect);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct blk_segment ind[BLKIF_MAX_INDIRECT_SEGMENTS];
	struct fuzz_input in = { data, size };
	uint8_t slot[sizeof(union blkif_x86_64_slot)];
	const struct blk_segment *seg;
	struct blk_request req;
	struct setup s;
	int status;

	read_setup(&in, &s);
	fuzz_take_bytes(&in, slot, slot_size(s.abi));
	take_request(&s, slot, &req);

	status = blk_request_check(&req, &s.lim);
	FUZZ_ASSERT(status == expected_first(&req, &s.lim));
	if (status != BLKIF_RSP_OKAY)
		return 0;
	if (req.operation == BLKIF_OP_DISCARD) {
		check_accepted(&req, NULL, &s.lim);
		return 0;
	}
	seg = req.seg;
	if (req.operation == BLKIF_OP_INDIRECT) {
		read_indirect_segments(&in, &req, ind);
		seg = ind;
	}
	status = blk_request_check_segments(&req, seg, &s.lim);
	FUZZ_ASSERT(status == expected_segments(&req, seg, &s.lim));
	if (status == BLKIF_RSP_OKAY)
		check_accepted(&req, seg, &s.lim);
	return 0;
}

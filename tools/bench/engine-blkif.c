// SPDX-License-Identifier: MIT
#include "tools/bench/engine-blkif.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/xensim/frontend.h"

#define SEGS BLKIF_MAX_SEGMENTS_PER_REQUEST
#define PAGE 4096u
#define MAX_SLOTS 64u
#define ID_TABLE 64u /* > the ring's 32 requests in flight */
#define RESPONSE_TIMEOUT_MS 30000

#define RING_REQUESTS 32u /* a single-page ring, either ABI */

/* One ring request's worth of an operation. */
struct sub_request {
	unsigned int slot;
	uint8_t operation;
	uint8_t nr_pages;
	uint64_t sector;
	uint32_t offset; /* into the slot's buffer */
};

struct in_flight {
	bool busy;
	uint64_t id;
	struct sub_request req;
	unsigned int chunk; /* its granted pages: chunk * SEGS ... */
};

struct blkif_engine {
	struct bench_engine base;
	struct frontend *fe;
	uint8_t *buffers; /* the guest's own memory for the operations */
	uint32_t slot_bytes;
	unsigned int free_chunk[RING_REQUESTS];
	unsigned int nr_free_chunks;
	uint32_t pages_per_slot;
	unsigned int depth;
	bool can_flush;
	struct sub_request *fifo; /* waiting for ring space */
	unsigned int fifo_head, fifo_len, fifo_cap;
	unsigned int remaining[MAX_SLOTS]; /* sub-requests not answered */
	int status[MAX_SLOTS];
	struct in_flight ids[ID_TABLE];
	unsigned int done[MAX_SLOTS]; /* finished slots not yet reported */
	unsigned int nr_done;
};

static struct blkif_engine *to_blkif(struct bench_engine *e)
{
	return (struct blkif_engine *)e;
}

static int fifo_push(struct blkif_engine *b, const struct sub_request *r)
{
	if (b->fifo_len == b->fifo_cap)
		return -ENOSPC;
	b->fifo[(b->fifo_head + b->fifo_len++) % b->fifo_cap] = *r;
	return 0;
}

static int blkif_queue(struct bench_engine *e, unsigned int slot,
		       const struct bench_op *op)
{
	struct blkif_engine *b = to_blkif(e);
	struct sub_request r = { .slot = slot };
	uint32_t pages = op->len / PAGE;
	int ret;

	if (slot >= b->depth)
		return -EINVAL;
	b->status[slot] = 0;
	b->remaining[slot] = 0;
	if (op->type == BENCH_OP_FLUSH) {
		if (!b->can_flush) {
			/* Nothing to ask for: the backend has no cache. */
			b->done[b->nr_done++] = slot;
			return 0;
		}
		r.operation = BLKIF_OP_FLUSH_DISKCACHE;
		b->remaining[slot] = 1;
		return fifo_push(b, &r);
	}
	r.operation = op->type == BENCH_OP_READ ? BLKIF_OP_READ
						: BLKIF_OP_WRITE;
	for (uint32_t done = 0; done < pages; done += r.nr_pages) {
		r.nr_pages =
			(uint8_t)(pages - done < SEGS ? pages - done : SEGS);
		r.sector = (op->offset + (uint64_t)done * PAGE) / 512;
		r.offset = done * PAGE;
		ret = fifo_push(b, &r);
		if (ret < 0)
			return ret;
		b->remaining[slot]++;
	}
	return 0;
}

static uint8_t *chunk_page(struct blkif_engine *b, unsigned int chunk,
			   unsigned int i)
{
	return frontend_data_page(b->fe, chunk * SEGS + i);
}

/*
 * Like Linux blkfront with persistent grants, requests use a fixed pool of
 * granted pages (11 per ring slot) and the guest copies data in and out,
 * so the backend sees at most 32 * 11 distinct grants.
 */
static int put_on_ring(struct blkif_engine *b, const struct sub_request *r)
{
	struct frontend_segment segs[SEGS];
	const uint8_t *src =
		b->buffers + (size_t)r->slot * b->slot_bytes + r->offset;
	unsigned int chunk;
	uint64_t id;
	int ret;

	if (!b->nr_free_chunks)
		return -EBUSY;
	chunk = b->free_chunk[b->nr_free_chunks - 1];
	for (unsigned int i = 0; i < r->nr_pages; i++) {
		segs[i] = (struct frontend_segment){ .page = chunk * SEGS + i,
						     .first_sect = 0,
						     .last_sect = 7 };
		if (r->operation == BLKIF_OP_WRITE)
			memcpy(chunk_page(b, chunk, i), src + i * PAGE, PAGE);
	}
	if (r->operation == BLKIF_OP_FLUSH_DISKCACHE)
		ret = frontend_queue_flush(b->fe, &id);
	else
		ret = frontend_queue_rw(b->fe, r->operation, r->sector, segs,
					r->nr_pages, &id);
	if (ret < 0) {
		snprintf(b->base.why, sizeof(b->base.why),
			 "cannot queue a request: %s", strerror(-ret));
		return ret;
	}
	/* Responses come back in any order: look for a free entry. */
	for (unsigned int i = 0; i < ID_TABLE; i++) {
		struct in_flight *f = &b->ids[i];

		if (!f->busy) {
			*f = (struct in_flight){ true, id, *r, chunk };
			b->nr_free_chunks--;
			return 0;
		}
	}
	snprintf(b->base.why, sizeof(b->base.why),
		 "more requests in flight than the ring holds");
	return -EPROTO;
}

/* A read's data arrived in the chunk: copy it to the operation. */
static void finish_sub_request(struct blkif_engine *b, struct in_flight *f)
{
	uint8_t *dst = b->buffers + (size_t)f->req.slot * b->slot_bytes +
		       f->req.offset;

	if (f->req.operation == BLKIF_OP_READ)
		for (unsigned int i = 0; i < f->req.nr_pages; i++)
			memcpy(dst + i * PAGE, chunk_page(b, f->chunk, i),
			       PAGE);
	b->free_chunk[b->nr_free_chunks++] = f->chunk;
	f->busy = false;
}

/* Move waiting sub-requests onto the ring while it has room. */
static int blkif_submit(struct bench_engine *e)
{
	struct blkif_engine *b = to_blkif(e);
	bool queued = false;
	int ret;

	while (b->fifo_len && b->nr_free_chunks && frontend_free_slots(b->fe)) {
		ret = put_on_ring(b, &b->fifo[b->fifo_head]);
		if (ret < 0)
			return ret;
		b->fifo_head = (b->fifo_head + 1) % b->fifo_cap;
		b->fifo_len--;
		queued = true;
	}
	return queued ? frontend_push(b->fe) : 0;
}

static int take_response(struct blkif_engine *b)
{
	struct frontend_response rsp;
	struct in_flight *f;
	unsigned int slot;
	int ret;

	ret = frontend_wait(b->fe, &rsp, RESPONSE_TIMEOUT_MS);
	if (ret < 0) {
		snprintf(b->base.why, sizeof(b->base.why),
			 "no valid response from the backend: %s",
			 strerror(-ret));
		return ret;
	}
	for (f = b->ids; f < b->ids + ID_TABLE; f++)
		if (f->busy && f->id == rsp.id)
			break;
	if (f == b->ids + ID_TABLE) {
		snprintf(b->base.why, sizeof(b->base.why),
			 "response for request %llu, which is not in flight",
			 (unsigned long long)rsp.id);
		return -EPROTO;
	}
	slot = f->req.slot;
	finish_sub_request(b, f);
	if (rsp.status != BLKIF_RSP_OKAY)
		b->status[slot] = -EIO;
	if (--b->remaining[slot] == 0)
		b->done[b->nr_done++] = slot;
	return blkif_submit(&b->base);
}

static int blkif_complete(struct bench_engine *e, unsigned int *slot,
			  int *result)
{
	struct blkif_engine *b = to_blkif(e);
	int ret;

	while (!b->nr_done) {
		ret = take_response(b);
		if (ret < 0)
			return ret;
	}
	*slot = b->done[--b->nr_done];
	*result = b->status[*slot];
	return 0;
}

static void blkif_destroy(struct bench_engine *e)
{
	struct blkif_engine *b = to_blkif(e);

	if (b->fe)
		frontend_close(b->fe);
	free(b->fifo);
	free(b->buffers);
	free(b);
}

static const struct bench_engine_ops blkif_ops = {
	.queue = blkif_queue,
	.submit = blkif_submit,
	.complete = blkif_complete,
	.destroy = blkif_destroy,
};

uint32_t engine_blkif_guest_pages(const struct bench_job *job)
{
	(void)job;
	return 1 + RING_REQUESTS * SEGS;
}

static int check_disk(struct blkif_engine *b, const struct bench_job *job,
		      char *why, size_t why_len)
{
	const struct frontend_disk_info *d = frontend_disk_info(b->fe);

	if (d->sector_size != 512) {
		snprintf(why, why_len, "backend sector-size %u, not 512",
			 d->sector_size);
		return -EINVAL;
	}
	if (d->sectors * 512 < job->region) {
		snprintf(why, why_len, "disk has %llu sectors, job needs %llu",
			 (unsigned long long)d->sectors,
			 (unsigned long long)(job->region / 512));
		return -ENOSPC;
	}
	b->can_flush = d->feature_flush_cache;
	return 0;
}

int engine_blkif_open(uint32_t domid, uint32_t devid,
		      const struct bench_job *job, struct bench_engine **out,
		      char *why, size_t why_len)
{
	/*
	 * Linux blkfront's defaults for a one-vCPU guest: one queue on a
	 * one-page ring, persistent grants when offered, 512-byte sectors.
	 * Indirect requests are off so that every arm splits large
	 * operations the same way (11 pages per request).
	 */
	struct frontend_config cfg = { .domid = domid,
				       .devid = devid,
				       .protocol = FRONTEND_PROTO_X86_64,
				       .timeout_ms = 10000,
				       .ring_order = 0,
				       .nr_queues = 1,
				       .max_indirect = 0,
				       .persistent = FRONTEND_AUTO,
				       .large_sectors = 0 };
	struct blkif_engine *b;
	int ret;

	if (job->depth > MAX_SLOTS || job->max_bs % PAGE)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->base.ops = &blkif_ops;
	b->depth = job->depth;
	b->pages_per_slot = job->max_bs / PAGE;
	b->fifo_cap = job->depth * ((b->pages_per_slot + SEGS - 1) / SEGS + 1);
	b->fifo = calloc(b->fifo_cap, sizeof(*b->fifo));
	b->slot_bytes = job->max_bs;
	for (unsigned int i = 0; i < RING_REQUESTS; i++)
		b->free_chunk[b->nr_free_chunks++] = RING_REQUESTS - 1 - i;
	cfg.nr_data_pages = RING_REQUESTS * SEGS;
	if (posix_memalign((void **)&b->buffers, PAGE,
			   (size_t)job->depth * job->max_bs))
		b->buffers = NULL;
	else
		memset(b->buffers, 0xa5, (size_t)job->depth * job->max_bs);
	ret = b->fifo && b->buffers ? frontend_connect(&cfg, &b->fe) : -ENOMEM;
	if (ret < 0) {
		snprintf(why, why_len, "dom %u: blkfront connect: %s", domid,
			 strerror(-ret));
		b->fe = NULL;
		blkif_destroy(&b->base);
		return ret;
	}
	ret = check_disk(b, job, why, why_len);
	if (ret < 0) {
		blkif_destroy(&b->base);
		return ret;
	}
	*out = &b->base;
	return 0;
}

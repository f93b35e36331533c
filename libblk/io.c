// SPDX-License-Identifier: MIT
/*
 * The life of one request: consumed off the ring and checked, its indirect
 * pages fetched, its buffers found (persistent grants or bounce pages),
 * its data copied in, its I/O submitted, its data copied out and answered.
 * Each stage works on a list of every request at that stage in this pass,
 * so the grant copies and SQEs of a whole pass go out together.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/engine-internal.h"

/* ---- answering ---- */

/* Give back the buffers of a started request. */
static void io_release(struct blk_io *io)
{
	struct blk_conn *c = io->conn;

	if (io->stage != BLK_IO_STARTED || !io->req.nr_segments)
		return;
	if (io->bounced)
		blk_bounce_put(&c->bounce, io->req.nr_segments, io->pages);
	else
		for (unsigned int i = 0; i < io->req.nr_segments; i++)
			blk_pgrant_put(&c->pgrants, io->segs[i].gref);
}

/*
 * The one place a request changes stage (see enum blk_io_stage). Leaving
 * STARTED gives its buffers back.
 */
static void io_set_stage(struct blk_io *io, enum blk_io_stage to)
{
	struct blk_conn *c = io->conn;
	bool barrier = blk_request_op(&io->req) == BLKIF_OP_WRITE_BARRIER;

	if (io->stage == BLK_IO_STARTED && to != BLK_IO_STARTED) {
		io_release(io);
		c->nr_active--;
		if (barrier)
			c->barrier_active = false;
	} else if (io->stage != BLK_IO_STARTED && to == BLK_IO_STARTED) {
		c->nr_active++;
		if (barrier)
			c->barrier_active = true;
	}
	io->stage = to;
}

/*
 * Responses go on the ring in the order the requests were taken, so that
 * the requests between the guest's rsp_prod and req_prod are exactly the
 * unanswered ones. A restarted daemon resumes there (blk_ring_attach())
 * and runs each of them again: none is lost and none is answered twice.
 * The answers of one push are journalled before they overwrite their
 * requests in the ring (libblk/journal.h), so that a crash between the
 * two writes cannot make a successor read an answer as a request.
 */
bool io_publish(struct blk_conn *c)
{
	RING_IDX first = blk_ring_rsp_prod(&c->ring);
	unsigned int n;
	bool notify;

	for (n = 0; n < c->nr_ios; n++) {
		const struct blk_answer *a =
			&c->answers[(first + n) % c->nr_ios];

		if (!a->ready)
			break;
		blk_journal_set(&c->journal, n, &a->rsp);
	}
	if (!n)
		return false;
	blk_journal_commit(&c->journal, first, n);
	for (unsigned int i = 0; i < n; i++) {
		struct blk_answer *a = &c->answers[(first + i) % c->nr_ios];
		int op = blk_stat_op_of(a->rsp.operation);

		a->ready = false;
		if (a->ready_ns) {
			c->answered_n++;
			c->answered_ns_sum += a->ready_ns;
		}
		if (op >= 0) {
			c->published_n[op]++;
			c->published_taken_sum[op] += a->taken_ns;
		}
		blk_ring_put_response(&c->ring, a->rsp.id, a->rsp.operation,
				      a->rsp.status);
	}
	notify = blk_ring_push_responses(&c->ring);
	blk_journal_done(&c->journal);
	return notify;
}

static void account_answer(struct blk_conn *c, const struct blk_io *io,
			   int16_t status)
{
	int op = blk_stat_op_of(blk_request_op(&io->req));
	struct blk_stats *st = &c->stats;

	if (op < 0) {
		st->rejected++;
		return;
	}
	st->requests[op]++;
	if (status != BLKIF_RSP_OKAY)
		st->errors[op]++;
	else if (op == BLK_STAT_DISCARD)
		st->bytes[op] += io->req.nr_sectors * c->limits.sector_size;
	else
		st->bytes[op] += io->moved;
}

/* Back to the free slots with its ring slot left unanswered. */
static void io_drop(struct blk_io *io)
{
	struct blk_conn *c = io->conn;

	io_set_stage(io, BLK_IO_FREE);
	io->next = c->free_ios;
	c->free_ios = io;
	c->in_flight--;
}

void io_set_aside(struct blk_io *io)
{
	if (io->conn->close_mode != BLK_DISCONNECT_CLOSE)
		io_drop(io);
	else
		io_respond(io, BLKIF_RSP_ERROR);
}

void io_respond(struct blk_io *io, int16_t status)
{
	struct blk_conn *c = io->conn;
	struct blk_answer *a = &c->answers[io->slot % c->nr_ios];

	account_answer(c, io, status);
	io_set_stage(io, BLK_IO_FREE);
	/* An indirect request is answered with its inner operation. */
	a->rsp =
		(struct blk_journal_rec){ .id = io->req.id,
					  .operation = blk_request_op(&io->req),
					  .status = status };
	a->ready = true;
	/* Its FINISH stage ended at stage_start_ns. */
	a->ready_ns = io->timed ? io->stage_start_ns : 0;
	a->taken_ns = io->taken_ns;
	io->next = c->free_ios;
	c->free_ios = io;
	c->in_flight--;
	c->must_push = true;
}

/* ---- consuming ---- */

void io_consume(struct blk_engine *e, struct blk_conn *c, struct blk_io *io)
{
	int16_t status = (int16_t)blk_request_check(&io->req, &c->limits);

	io_set_stage(io, BLK_IO_TAKEN);
	io->error = 0;
	io->timed = false;
	io->expect = io->moved = 0;
	io->stage_start_ns = io->taken_ns = e->pass_ns;
	io->segs = io->req.seg;
	if (status != BLKIF_RSP_OKAY) {
		io_respond(io, status);
		return;
	}
	if (io->req.operation == BLKIF_OP_INDIRECT &&
	    conn_io_reserve(io, io->req.nr_segments, true) < 0) {
		io_respond(io, BLKIF_RSP_ERROR);
		return;
	}
	/* Indirect or not, requests stay in ring order from here on. */
	io_list_add(&e->ready, io);
}

/* ---- indirect requests ---- */

static int queue_indirect_copies(struct blk_engine *e, struct blk_io *io)
{
	unsigned int left = io->req.nr_segments;
	unsigned int pages = blk_indirect_pages(io->req.nr_segments);

	io->copy_first = e->copies.nr;
	for (unsigned int i = 0; i < pages; i++) {
		unsigned int n = left < BLKIF_SEGS_PER_INDIRECT_PAGE
					 ? left
					 : BLKIF_SEGS_PER_INDIRECT_PAGE;
		int ret = blk_copy_batch_add(
			&e->copies, (uint16_t)io->conn->domid,
			io->req.indirect_grefs[i], 0,
			io->ind_raw + (size_t)i * BLKIF_SEGS_PER_INDIRECT_PAGE,
			(uint16_t)(n * sizeof(struct blkif_request_segment)),
			false);

		if (ret < 0)
			return ret;
		left -= n;
	}
	return 0;
}

/* The copies are private: convert them once, then check them. */
static void take_indirect_segments(struct blk_io *io)
{
	blk_request_take_indirect(io->ind_raw, io->req.nr_segments,
				  io->ind_segs);
	io->segs = io->ind_segs;
}

/* An indirect request whose segment list has not been read yet. */
static bool needs_fetch(const struct blk_io *io)
{
	return io->req.operation == BLKIF_OP_INDIRECT &&
	       io->segs == io->req.seg && !io->error;
}

/*
 * The segment lists of every indirect request consumed in this pass, in
 * one grant copy. A request whose pages cannot be copied is marked failed
 * and answered when its turn comes.
 */
void io_fetch_indirect_pages(struct blk_engine *e)
{
	struct blk_io *io;
	bool any = false;
	int ret;

	blk_copy_batch_reset(&e->copies);
	for (io = e->ready.head; io; io = io->next) {
		if (!needs_fetch(io))
			continue;
		any = true;
		if (queue_indirect_copies(e, io) < 0)
			io->error = -ENOMEM;
	}
	if (!any)
		return;
	ret = blk_copy_batch_run(&e->copies, e->xgt);
	for (io = e->ready.head; io; io = io->next) {
		if (!needs_fetch(io))
			continue;
		if (ret < 0 ||
		    !blk_copy_batch_ok(&e->copies, io->copy_first,
				       blk_indirect_pages(io->req.nr_segments)))
			io->error = -EFAULT;
		else
			take_indirect_segments(io);
	}
}

/* ---- buffers ---- */

static uint32_t seg_offset(const struct blk_io *io, unsigned int i)
{
	return io->segs[i].first_sect * io->conn->limits.sector_size;
}

static uint32_t seg_bytes(const struct blk_io *io, unsigned int i)
{
	return blk_segment_bytes(&io->segs[i], io->conn->limits.sector_size);
}

/*
 * Map (or find mapped) every segment's page; all or none. False when one
 * cannot be mapped now: the request is copied instead, and the copy, not
 * the mapping, decides whether the guest granted what it asks for.
 */
static bool take_persistent(struct blk_io *io)
{
	struct blk_conn *c = io->conn;
	unsigned int i;

	for (i = 0; i < io->req.nr_segments; i++) {
		io->pages[i] = blk_pgrant_get(&c->pgrants, io->segs[i].gref);
		if (!io->pages[i])
			break;
	}
	if (i == io->req.nr_segments)
		return true;
	while (i-- > 0)
		blk_pgrant_put(&c->pgrants, io->segs[i].gref);
	return false;
}

/*
 * Find memory for the data. Returns 0, -ENOBUFS when the request must wait
 * for pages, or another -errno when it cannot be served.
 */
static int take_buffers(struct blk_io *io)
{
	struct blk_conn *c = io->conn;
	int ret;

	if (io->req.nr_segments == 0)
		return 0;
	if (c->persistent) {
		if (take_persistent(io)) {
			io->bounced = false;
			for (unsigned int i = 0; i < io->req.nr_segments; i++)
				io->iov[i] = (struct iovec){
					(uint8_t *)io->pages[i] +
						seg_offset(io, i),
					seg_bytes(io, i)
				};
			return 0;
		}
		blk_pgrant_age(&c->pgrants);
	}
	ret = blk_bounce_get(&c->bounce, io->req.nr_segments, io->pages);
	if (ret == -ENOBUFS && c->bounce.over_budget)
		/* Pages other workers give back wake nobody here: poll. */
		c->e->starved = true;
	if (ret < 0)
		return ret;
	c->bounce_used = true;
	io->bounced = true;
	for (unsigned int i = 0; i < io->req.nr_segments; i++)
		io->iov[i] = (struct iovec){ io->pages[i], seg_bytes(io, i) };
	return 0;
}

static int queue_copies(struct blk_engine *e, struct blk_io *io, bool to_guest)
{
	io->copy_first = e->copies.nr;
	for (unsigned int i = 0; i < io->req.nr_segments; i++) {
		int ret = blk_copy_batch_add(
			&e->copies, (uint16_t)io->conn->domid, io->segs[i].gref,
			(uint16_t)seg_offset(io, i), io->pages[i],
			(uint16_t)seg_bytes(io, i), to_guest);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Its data goes through bounce pages (it holds them: it has started). */
static bool needs_copy(const struct blk_io *io)
{
	return io->bounced && io->stage == BLK_IO_STARTED &&
	       io->req.nr_segments;
}

/*
 * A barrier starts only when everything consumed before it has been
 * answered; while it runs, nothing else of its connection starts.
 */
static bool must_wait(const struct blk_io *io)
{
	const struct blk_conn *c = io->conn;

	if (c->barrier_active)
		return true;
	if (blk_request_op(&io->req) == BLKIF_OP_WRITE_BARRIER)
		return c->nr_active > 0;
	return false;
}

/*
 * Returns true when @io holds its buffers and may start, false when it was
 * parked or answered.
 */
static bool prepare_one(struct blk_engine *e, struct blk_io *io)
{
	struct blk_conn *c = io->conn;
	int16_t status;
	int ret;

	if (io->error) {
		io_respond(io, BLKIF_RSP_ERROR);
		return false;
	}
	if (io->req.operation != BLKIF_OP_DISCARD) {
		status = (int16_t)blk_request_check_segments(&io->req, io->segs,
							     &c->limits);
		if (status != BLKIF_RSP_OKAY) {
			io_respond(io, status);
			return false;
		}
	}
	if (must_wait(io)) {
		io_list_add(&c->parked, io);
		return false;
	}
	ret = take_buffers(io);
	if (ret == -ENOBUFS) {
		c->stats.parked_no_buffers++;
		io_list_add(&c->parked, io);
		return false;
	}
	if (ret < 0) {
		io_respond(io, BLKIF_RSP_ERROR);
		return false;
	}
	io_set_stage(io, BLK_IO_STARTED);
	return true;
}

/*
 * Requests keep their ring order within a connection: behind a parked
 * request, every later one parks too.
 */
void io_prepare_ready(struct blk_engine *e)
{
	struct blk_io *io, *next;

	blk_copy_batch_reset(&e->copies);
	for (io = io_list_take_all(&e->ready); io; io = next) {
		next = io->next;
		if (io->conn->parked.nr) {
			io_list_add(&io->conn->parked, io);
			continue;
		}
		if (!prepare_one(e, io))
			continue;
		if (needs_copy(io) && blk_request_writes(&io->req) &&
		    queue_copies(e, io, false) < 0)
			io->error = -ENOMEM;
		io_list_add(&e->starting, io);
	}
}

void io_unpark(struct blk_engine *e, struct blk_conn *c)
{
	struct blk_io *io = io_list_take_all(&c->parked);

	while (io) {
		struct blk_io *next = io->next;

		io_list_add(&e->ready, io);
		io = next;
	}
}

/* ---- submission ---- */

/*
 * Neighbouring requests of one ring are merged into one I/O, as the block
 * layer merges a loop device's: same direction, the second starting where
 * the first ends. Requests of a pass are in ring order per connection, so
 * a guest's sequential stream split into ring-sized pieces is read or
 * written as one. This many segments at most go into one merged I/O.
 */
#define MERGE_MAX_SEGMENTS 256u

static bool mergeable_op(const struct blk_io *io)
{
	uint8_t op = blk_request_op(&io->req);

	return (op == BLKIF_OP_READ || op == BLKIF_OP_WRITE) &&
	       io->req.nr_segments > 0;
}

static uint64_t data_bytes(const struct blk_io *io)
{
	uint64_t bytes = 0;

	for (unsigned int i = 0; i < io->req.nr_segments; i++)
		bytes += io->iov[i].iov_len;
	return bytes;
}

/* Can @next ride in the I/O whose last request so far is @last? */
static bool can_merge(const struct blk_io *last, const struct blk_io *next,
		      unsigned int segments)
{
	uint32_t ss = last->conn->limits.sector_size;

	return next->conn == last->conn && mergeable_op(next) &&
	       blk_request_op(&next->req) == blk_request_op(&last->req) &&
	       segments + next->req.nr_segments <= MERGE_MAX_SEGMENTS &&
	       next->req.sector == last->req.sector + last->own_bytes / ss;
}

/*
 * Chain the requests after @head in @list that can ride with it (they
 * leave the list); the riders' segments are gathered into head->merge_iov.
 * Returns the segments of the whole I/O.
 */
static unsigned int gather_riders(struct blk_io *head)
{
	struct blk_io *last = head;
	unsigned int segments = head->req.nr_segments;

	head->rider = NULL;
	if (!mergeable_op(head))
		return segments;
	/* Taken the first time this request leads a merge, and kept. */
	if (!head->merge_iov && head->next &&
	    can_merge(head, head->next, segments))
		head->merge_iov =
			malloc(MERGE_MAX_SEGMENTS * sizeof(*head->merge_iov));
	if (!head->merge_iov)
		return segments;
	while (head->next && can_merge(last, head->next, segments)) {
		struct blk_io *r = head->next;

		head->next = r->next;
		r->rider = NULL;
		last->rider = r;
		last = r;
		segments += r->req.nr_segments;
		r->conn->stats.merged++;
	}
	if (!head->rider)
		return segments;
	segments = 0;
	for (struct blk_io *r = head; r; r = r->rider) {
		memcpy(head->merge_iov + segments, r->iov,
		       r->req.nr_segments * sizeof(*r->iov));
		segments += r->req.nr_segments;
	}
	return segments;
}

/* Undo gather_riders(): the riders go back on the list after @head. */
static void ungather_riders(struct blk_io *head)
{
	struct blk_io *last = head;

	while (last->rider) {
		last = last->rider;
		last->conn->stats.merged--;
	}
	if (last == head)
		return;
	last->next = head->next;
	head->next = head->rider;
	for (struct blk_io *r = head; r != last;) {
		struct blk_io *next = r->rider;

		r->rider = NULL;
		r = next;
	}
}

/*
 * The registered buffer holding all of @io's data (@iov, @segments with
 * its riders), or -1: bounce pages that follow each other in one slab, or
 * one persistent grant's page (each is a buffer of its own).
 */
static int fixed_buf(const struct blk_io *io, const struct iovec *iov,
		     unsigned int segments)
{
	if (io->bounced)
		return blk_bounce_fixed_buf(&io->conn->bounce, iov, segments);
	if (segments == 1)
		return blk_pgrant_fixed_buf(&io->conn->pgrants,
					    io->segs[0].gref);
	return -1;
}

/* What @io (with its riders, @segments in all) asks of the backend. */
static void describe_io(const struct blk_io *io, unsigned int segments,
			struct blk_backend_io *bio)
{
	uint32_t ss = io->conn->limits.sector_size;
	uint8_t op = blk_request_op(&io->req);
	int buf;

	*bio = (struct blk_backend_io){ .offset = io->req.sector * ss };
	if (op == BLKIF_OP_DISCARD) {
		bio->op = BLK_BACKEND_DISCARD;
		bio->length = io->req.nr_sectors * ss;
		return;
	}
	if (!segments) {
		/* A flush or barrier without data (sector is meaningless). */
		bio->op = BLK_BACKEND_FLUSH;
		bio->offset = 0;
		return;
	}
	bio->op = op == BLKIF_OP_READ ? BLK_BACKEND_READ : BLK_BACKEND_WRITE;
	bio->durable = blk_request_syncs(&io->req);
	bio->iov = io->rider ? io->merge_iov : io->iov;
	bio->iovcnt = segments;
	for (const struct blk_io *r = io; r; r = r->rider)
		bio->length += r->own_bytes;
	buf = fixed_buf(io, bio->iov, segments);
	bio->fixed = buf >= 0;
	bio->buf_index = bio->fixed ? (unsigned int)buf : 0;
}

/*
 * Hand @io's I/O (@segments with its riders) to its connection's backend.
 * -EAGAIN when the backend has no room for it now; any other failure
 * completes it at once with that error (it goes to the done list).
 */
static int start_io(struct blk_engine *e, struct blk_io *io,
		    unsigned int segments)
{
	struct blk_backend *b = io->conn->backend;
	struct blk_backend_io bio;
	int parts;

	describe_io(io, segments, &bio);
	io->expect = bio.iov ? bio.length : 0;
	io->moved = 0;
	parts = b->ops->submit(b, &bio, io);
	if (parts == -EAGAIN)
		return parts;
	io->cqes_left = 1;
	if (parts < 0)
		io_complete(e, io, parts);
	else
		io->cqes_left = (uint8_t)parts;
	return 0;
}

/*
 * Queue the I/O of the checked requests in @list, in order. What does not
 * fit waits in e->unsubmitted, and the next pass comes without sleeping.
 */
static void start_list(struct blk_engine *e, struct blk_io *list)
{
	struct blk_io *io = list;

	while (io) {
		unsigned int segments = gather_riders(io);
		/* After the riders, which left the list; taken before
		 * start_io(), which may move @io to the done list. */
		struct blk_io *next = io->next;

		if (start_io(e, io, segments) == -EAGAIN) {
			ungather_riders(io);
			break;
		}
		io = next;
	}
	while (io) {
		struct blk_io *next = io->next;

		io_list_add(&e->unsubmitted, io);
		io = next;
	}
	if (e->unsubmitted.head)
		e->come_back = true;
}

/* The end of BLK_STAGE_PREPARE: @io's I/O is about to be queued. */
static void account_prepared(struct blk_engine *e, struct blk_io *io,
			     uint64_t now)
{
	e->io_in_flight++;
	if (!now)
		return;
	blk_stage_add(&io->conn->stats.stage[BLK_STAGE_PREPARE],
		      now - io->stage_start_ns, 1);
	io->stage_start_ns = now;
	io->timed = true;
}

void io_start_all(struct blk_engine *e)
{
	struct blk_io *io, *next, *list = io_list_take_all(&e->starting);
	int ret = blk_copy_batch_run(&e->copies, e->xgt);
	uint64_t now = e->timing && list ? blk_now_ns() : 0;
	struct blk_io_list ok = { 0 };

	/* Those checked in an earlier pass go first: ring order. */
	start_list(e, io_list_take_all(&e->unsubmitted));

	for (io = list; io; io = next) {
		next = io->next;
		if (io->error ||
		    (needs_copy(io) && blk_request_writes(&io->req) &&
		     (ret < 0 || !blk_copy_batch_ok(&e->copies, io->copy_first,
						    io->req.nr_segments)))) {
			io_respond(io, BLKIF_RSP_ERROR);
			continue;
		}
		io->own_bytes = data_bytes(io);
		account_prepared(e, io, now);
		io_list_add(&ok, io);
	}
	start_list(e, ok.head);
}

/* ---- completion ---- */

/* @io's I/O is over: to the done list, its BLK_STAGE_IO timed. */
static void finish_io(struct blk_engine *e, struct blk_io *io)
{
	e->io_in_flight--;
	io->timed = io->timed && e->timing;
	if (io->timed) {
		blk_stage_add(&io->conn->stats.stage[BLK_STAGE_IO],
			      e->pass_ns - io->stage_start_ns, 1);
		io->stage_start_ns = e->pass_ns;
	}
	io_list_add(&e->done, io);
}

/* The host refused I/O on mapped grant pages (see retry_bounced()). */
static bool refused_mapped(const struct blk_io *io)
{
	return io->error == -EFAULT && !io->bounced;
}

/* Tell the owner about a failure that is the host's, not the guest's. */
static void report_host_error(struct blk_engine *e, const struct blk_io *io)
{
	if (e->ops->host_error && !refused_mapped(io))
		e->ops->host_error(e->arg, io->conn->owner,
				   blk_request_op(&io->req), io->error);
}

void io_complete(struct blk_engine *e, struct blk_io *io, int res)
{
	if (res < 0 && !io->error)
		io->error = res;
	else if (res > 0)
		io->moved += (uint64_t)res;
	if (--io->cqes_left)
		return;
	if (io->moved != io->expect && !io->error)
		io->error = -EIO;
	if (io->error)
		report_host_error(e, io);
	/* A merged I/O stands or falls as a whole. */
	for (struct blk_io *r = io; r; r = r->rider) {
		r->error = io->error;
		r->moved = io->error ? 0 : r->own_bytes;
		finish_io(e, r);
	}
}

/*
 * The host could not do I/O on mapped grant pages (a kernel whose gntdev
 * mappings refuse direct I/O). Serve this connection by grant copy from
 * now on, and run the request again that way instead of failing it.
 */
static void retry_bounced(struct blk_io *io)
{
	struct blk_conn *c = io->conn;

	c->persistent = false;
	io->error = 0;
	if (conn_closing(c)) {
		/* Nothing will start it again. */
		io_set_aside(io);
		return;
	}
	io_set_stage(io, BLK_IO_TAKEN);
	io_list_add(&c->parked, io);
}

/* The answer for a finished request. */
static int16_t answer_status(const struct blk_io *io)
{
	if (!io->error)
		return BLKIF_RSP_OKAY;
	/* A filesystem that cannot punch holes: the guest may stop asking. */
	if (io->error == -EOPNOTSUPP && io->req.operation == BLKIF_OP_DISCARD)
		return BLKIF_RSP_EOPNOTSUPP;
	return BLKIF_RSP_ERROR;
}

/*
 * Mark what @io may have changed in its connection's dirty map: after its
 * I/O completed (a copier that reads the range later sees it) and before
 * its answer goes out, whatever its result. A flush (no data) changes
 * nothing.
 */
static void mark_dirty(const struct blk_io *io)
{
	uint32_t ss = io->conn->limits.sector_size;
	uint8_t op = blk_request_op(&io->req);

	if (op == BLKIF_OP_DISCARD)
		blk_dirty_mark(io->conn->dirty, io->req.sector * ss,
			       (uint64_t)io->req.nr_sectors * ss);
	else if (op == BLKIF_OP_WRITE || op == BLKIF_OP_WRITE_BARRIER)
		blk_dirty_mark(io->conn->dirty, io->req.sector * ss,
			       io->own_bytes);
}

void io_finish_done(struct blk_engine *e)
{
	struct blk_io *io, *next, *list = io_list_take_all(&e->done);
	uint64_t now;
	int ret;

	if (!list)
		return;
	for (struct blk_io **pp = &list; *pp;) {
		io = *pp;
		if (refused_mapped(io)) {
			*pp = io->next;
			retry_bounced(io);
		} else {
			pp = &io->next;
		}
	}
	blk_copy_batch_reset(&e->copies);
	for (io = list; io; io = io->next)
		if (!io->error && needs_copy(io) &&
		    blk_request_op(&io->req) == BLKIF_OP_READ &&
		    queue_copies(e, io, true) < 0)
			io->error = -ENOMEM;
	ret = blk_copy_batch_run(&e->copies, e->xgt);
	now = e->timing ? blk_now_ns() : 0;

	for (io = list; io; io = next) {
		next = io->next;
		io->timed = io->timed && now;
		if (io->timed) {
			blk_stage_add(&io->conn->stats.stage[BLK_STAGE_FINISH],
				      now - io->stage_start_ns, 1);
			io->stage_start_ns = now;
		}
		if (!io->error && needs_copy(io) &&
		    blk_request_op(&io->req) == BLKIF_OP_READ &&
		    (ret < 0 || !blk_copy_batch_ok(&e->copies, io->copy_first,
						   io->req.nr_segments)))
			io->error = -EFAULT;
		if (io->conn->dirty)
			mark_dirty(io);
		io_respond(io, answer_status(io));
	}
}

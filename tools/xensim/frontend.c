// SPDX-License-Identifier: MIT
/*
 * The simulated blkfront. The guest trusts its backend more than the
 * backend trusts the guest, but this frontend still checks every response
 * (id outstanding, operation matching) because catching a backend that
 * answers wrongly is what the tests are for.
 */
#include "tools/xensim/frontend.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#include "tools/xensim/xenbus.h"
#include "tools/xensim/xensim.h"

#define RING_PFN 0u
#define FIRST_DATA_PFN 1u
#define MAX_OUTSTANDING 32u /* RING_SIZE of a single page, both ABIs */

struct outstanding {
	bool busy;
	uint8_t operation;
	uint64_t id;
};

struct frontend {
	struct frontend_config cfg;
	struct frontend_disk_info disk;
	struct xs_handle *xs;
	struct xensim_domain *dom;
	bool is_x86_64;
	union {
		struct blkif_x86_64_front_ring r64;
		struct blkif_x86_32_front_ring r32;
	} ring;
	grant_ref_t ring_gref;
	grant_ref_t *data_grefs;
	uint32_t nr_granted; /* data grants made so far */
	int port;
	uint64_t next_id;
	struct outstanding out[MAX_OUTSTANDING];
	unsigned int nr_out;
};

static int xs_err(void)
{
	return errno ? -errno : -EIO;
}

const struct frontend_disk_info *frontend_disk_info(const struct frontend *fe)
{
	return &fe->disk;
}

void *frontend_data_page(struct frontend *fe, uint32_t page)
{
	if (page >= fe->cfg.nr_data_pages)
		return NULL;
	return xensim_domain_page(fe->dom, FIRST_DATA_PFN + page);
}

grant_ref_t frontend_data_gref(const struct frontend *fe, uint32_t page)
{
	return page < fe->nr_granted ? fe->data_grefs[page] : 0;
}

unsigned int frontend_free_slots(const struct frontend *fe)
{
	unsigned int used;

	if (fe->is_x86_64)
		used = fe->ring.r64.req_prod_pvt - fe->ring.r64.rsp_cons;
	else
		used = fe->ring.r32.req_prod_pvt - fe->ring.r32.rsp_cons;
	return used >= MAX_OUTSTANDING ? 0 : MAX_OUTSTANDING - used;
}

unsigned int frontend_in_flight(const struct frontend *fe)
{
	return fe->nr_out;
}

static int read_string(struct xs_handle *xs, const char *path, char *buf,
		       size_t size)
{
	unsigned int len;
	char *val = xs_read(xs, XBT_NULL, path, &len);

	if (!val)
		return xs_err();
	snprintf(buf, size, "%s", val);
	free(val);
	return 0;
}

static bool read_flag(struct xs_handle *xs, const char *dir, const char *key)
{
	uint64_t v = 0;

	return xenbus_read_key_u64(xs, dir, key, &v) == 0 && v != 0;
}

/* Find the backend from our frontend directory, as blkfront's probe does. */
static int locate_backend(struct frontend *fe)
{
	char path[300];
	uint64_t v;
	int ret;

	snprintf(fe->disk.frontend_path, sizeof(fe->disk.frontend_path),
		 "/local/domain/%u/device/vbd/%u", fe->cfg.domid,
		 fe->cfg.devid);
	snprintf(path, sizeof(path), "%s/backend", fe->disk.frontend_path);
	ret = read_string(fe->xs, path, fe->disk.backend_path,
			  sizeof(fe->disk.backend_path));
	if (ret < 0)
		return ret;
	ret = xenbus_read_key_u64(fe->xs, fe->disk.frontend_path, "backend-id",
				  &v);
	if (ret < 0)
		return ret;
	if (v > 0x7fef)
		return -EINVAL;
	fe->disk.backend_domid = (uint32_t)v;
	return 0;
}

static int grant_pages(struct frontend *fe)
{
	uint32_t backend = fe->disk.backend_domid;
	int ret;

	ret = xensim_grant_access(fe->dom, backend, RING_PFN, false);
	if (ret < 0)
		return ret;
	fe->ring_gref = (grant_ref_t)ret;
	fe->data_grefs = calloc(fe->cfg.nr_data_pages, sizeof(grant_ref_t));
	if (!fe->data_grefs)
		return -ENOMEM;
	for (uint32_t i = 0; i < fe->cfg.nr_data_pages; i++) {
		ret = xensim_grant_access(fe->dom, backend, FIRST_DATA_PFN + i,
					  false);
		if (ret < 0)
			return ret;
		fe->data_grefs[i] = (grant_ref_t)ret;
		fe->nr_granted = i + 1;
	}
	return 0;
}

static void init_ring(struct frontend *fe)
{
	void *page = xensim_domain_page(fe->dom, RING_PFN);

	memset(page, 0, XENSIM_PAGE_SIZE);
	if (fe->is_x86_64) {
		struct blkif_x86_64_sring *s = page;

		SHARED_RING_INIT(s);
		FRONT_RING_INIT(&fe->ring.r64, s, XENSIM_PAGE_SIZE);
	} else {
		struct blkif_x86_32_sring *s = page;

		SHARED_RING_INIT(s);
		FRONT_RING_INIT(&fe->ring.r32, s, XENSIM_PAGE_SIZE);
	}
}

static const char *protocol_name(enum frontend_protocol p)
{
	switch (p) {
	case FRONTEND_PROTO_X86_64:
		return XEN_IO_PROTO_ABI_X86_64;
	case FRONTEND_PROTO_X86_32:
		return XEN_IO_PROTO_ABI_X86_32;
	default:
		return NULL;
	}
}

/* ring-ref, event-channel, protocol and state 3 in one transaction. */
static int publish_transport(struct frontend *fe)
{
	const char *dir = fe->disk.frontend_path;
	const char *proto = protocol_name(fe->cfg.protocol);
	char path[300];

	for (int attempt = 0; attempt < 100; attempt++) {
		xs_transaction_t t = xs_transaction_start(fe->xs);
		int ret = 0;

		if (t == XBT_NULL)
			return xs_err();
		snprintf(path, sizeof(path), "%s/ring-ref", dir);
		ret = xenbus_printf(fe->xs, t, path, "%u", fe->ring_gref);
		snprintf(path, sizeof(path), "%s/event-channel", dir);
		if (!ret)
			ret = xenbus_printf(fe->xs, t, path, "%d", fe->port);
		snprintf(path, sizeof(path), "%s/protocol", dir);
		if (!ret && proto)
			ret = xenbus_printf(fe->xs, t, path, "%s", proto);
		else if (!ret)
			xs_rm(fe->xs, t, path);
		snprintf(path, sizeof(path), "%s/feature-persistent", dir);
		if (!ret)
			ret = xenbus_printf(fe->xs, t, path, "1");
		snprintf(path, sizeof(path), "%s/state", dir);
		if (!ret)
			ret = xenbus_printf(fe->xs, t, path, "%d",
					    XB_INITIALISED);
		if (ret < 0) {
			xs_transaction_end(fe->xs, t, true);
			return ret;
		}
		if (xs_transaction_end(fe->xs, t, false))
			return 0;
		if (errno != EAGAIN)
			return xs_err();
	}
	return -EAGAIN;
}

static int read_disk_properties(struct frontend *fe)
{
	const char *be = fe->disk.backend_path;
	uint64_t v;
	int ret;

	ret = xenbus_read_key_u64(fe->xs, be, "sectors", &fe->disk.sectors);
	if (ret < 0)
		return ret;
	ret = xenbus_read_key_u64(fe->xs, be, "sector-size", &v);
	if (ret < 0)
		return ret;
	fe->disk.sector_size = (uint32_t)v;
	if (xenbus_read_key_u64(fe->xs, be, "physical-sector-size", &v) < 0)
		v = fe->disk.sector_size;
	fe->disk.physical_sector_size = (uint32_t)v;
	ret = xenbus_read_key_u64(fe->xs, be, "info", &v);
	if (ret < 0)
		return ret;
	fe->disk.info = (uint32_t)v;
	return 0;
}

static int write_own_state(struct frontend *fe, int state)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/state", fe->disk.frontend_path);
	return xenbus_printf(fe->xs, XBT_NULL, path, "%d", state);
}

static int connect_steps(struct frontend *fe)
{
	uint64_t v;
	int ret;

	ret = locate_backend(fe);
	if (ret < 0)
		return ret;
	/*
	 * A driver that finds its device Closed from an earlier life starts
	 * over at Initialising, which tells the backend to offer it again.
	 */
	ret = xenbus_read_key_u64(fe->xs, fe->disk.frontend_path, "state", &v);
	if (ret < 0 || v != XB_INITIALISING) {
		ret = write_own_state(fe, XB_INITIALISING);
		if (ret < 0)
			return ret;
	}
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XB_STATE_BIT(XB_INITWAIT), fe->cfg.timeout_ms,
				NULL);
	if (ret < 0)
		return ret;
	fe->disk.feature_flush_cache =
		read_flag(fe->xs, fe->disk.backend_path, "feature-flush-cache");
	fe->disk.feature_barrier =
		read_flag(fe->xs, fe->disk.backend_path, "feature-barrier");
	ret = xensim_domain_open(xensim_dir(), fe->cfg.domid, &fe->dom);
	if (ret < 0)
		return ret;
	if (xensim_domain_nr_pages(fe->dom) <
	    FIRST_DATA_PFN + fe->cfg.nr_data_pages)
		return -ENOMEM;
	init_ring(fe);
	ret = grant_pages(fe);
	if (ret < 0)
		return ret;
	ret = xensim_evtchn_alloc_unbound(fe->dom, fe->disk.backend_domid);
	if (ret < 0)
		return ret;
	fe->port = ret;
	ret = publish_transport(fe);
	if (ret < 0)
		return ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XB_STATE_BIT(XB_CONNECTED), fe->cfg.timeout_ms,
				NULL);
	if (ret < 0)
		return ret;
	ret = read_disk_properties(fe);
	if (ret < 0)
		return ret;
	return write_own_state(fe, XB_CONNECTED);
}

int frontend_connect(const struct frontend_config *cfg, struct frontend **out)
{
	struct frontend *fe;
	int ret;

	if (!xensim_dir())
		return -ENOENT;
	fe = calloc(1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	fe->cfg = *cfg;
	fe->is_x86_64 = cfg->protocol == FRONTEND_PROTO_X86_64;
	fe->port = -1;
	fe->next_id = 1;
	fe->xs = xs_open(0);
	if (!fe->xs) {
		ret = xs_err();
		free(fe);
		return ret;
	}
	ret = connect_steps(fe);
	if (ret < 0) {
		frontend_abandon(fe);
		return ret;
	}
	*out = fe;
	return 0;
}

static int remember_request(struct frontend *fe, uint64_t id, uint8_t op)
{
	for (unsigned int i = 0; i < MAX_OUTSTANDING; i++) {
		if (!fe->out[i].busy) {
			fe->out[i] = (struct outstanding){ true, op, id };
			fe->nr_out++;
			return 0;
		}
	}
	return -EBUSY;
}

static void write_slot_x86_64(union blkif_x86_64_slot *slot,
			      const struct frontend_request *req)
{
	struct blkif_x86_64_request *r = &slot->rw;

	memset(slot, 0, sizeof(*slot));
	r->operation = req->operation;
	r->nr_segments = req->nr_segments;
	r->handle = req->handle;
	r->id = req->id;
	r->sector_number = req->sector_number;
	for (unsigned int i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++) {
		r->seg[i].gref = req->seg[i].gref;
		r->seg[i].first_sect = req->seg[i].first_sect;
		r->seg[i].last_sect = req->seg[i].last_sect;
	}
}

static void write_slot_x86_32(union blkif_x86_32_slot *slot,
			      const struct frontend_request *req)
{
	struct blkif_x86_32_request *r = &slot->rw;

	memset(slot, 0, sizeof(*slot));
	r->operation = req->operation;
	r->nr_segments = req->nr_segments;
	r->handle = req->handle;
	r->id = req->id;
	r->sector_number = req->sector_number;
	for (unsigned int i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++) {
		r->seg[i].gref = req->seg[i].gref;
		r->seg[i].first_sect = req->seg[i].first_sect;
		r->seg[i].last_sect = req->seg[i].last_sect;
	}
}

int frontend_queue_raw(struct frontend *fe, const struct frontend_request *req)
{
	int ret;

	if (!frontend_free_slots(fe))
		return -EBUSY;
	ret = remember_request(fe, req->id, req->operation);
	if (ret < 0)
		return ret;
	if (fe->is_x86_64) {
		struct blkif_x86_64_front_ring *r = &fe->ring.r64;

		write_slot_x86_64(RING_GET_REQUEST(r, r->req_prod_pvt), req);
		r->req_prod_pvt++;
	} else {
		struct blkif_x86_32_front_ring *r = &fe->ring.r32;

		write_slot_x86_32(RING_GET_REQUEST(r, r->req_prod_pvt), req);
		r->req_prod_pvt++;
	}
	return 0;
}

int frontend_queue_rw(struct frontend *fe, uint8_t op, uint64_t sector,
		      const struct frontend_segment *segs, unsigned int nr,
		      uint64_t *id)
{
	struct frontend_request req = { .operation = op,
					.nr_segments = (uint8_t)nr,
					.handle = (uint16_t)fe->cfg.devid,
					.id = fe->next_id,
					.sector_number = sector };
	int ret;

	if (nr > BLKIF_MAX_SEGMENTS_PER_REQUEST)
		return -EINVAL;
	for (unsigned int i = 0; i < nr; i++) {
		if (segs[i].page >= fe->nr_granted ||
		    segs[i].first_sect > segs[i].last_sect ||
		    segs[i].last_sect >= BLKIF_SECTORS_PER_PAGE)
			return -EINVAL;
		req.seg[i].gref = fe->data_grefs[segs[i].page];
		req.seg[i].first_sect = segs[i].first_sect;
		req.seg[i].last_sect = segs[i].last_sect;
	}
	ret = frontend_queue_raw(fe, &req);
	if (ret < 0)
		return ret;
	fe->next_id++;
	if (id)
		*id = req.id;
	return 0;
}

int frontend_queue_flush(struct frontend *fe, uint64_t *id)
{
	return frontend_queue_rw(fe, BLKIF_OP_FLUSH_DISKCACHE, 0, NULL, 0, id);
}

int frontend_push(struct frontend *fe)
{
	int notify;

	if (fe->is_x86_64)
		RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&fe->ring.r64, notify);
	else
		RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&fe->ring.r32, notify);
	if (notify)
		return xensim_evtchn_notify(fe->dom, (uint32_t)fe->port);
	return 0;
}

/* Take one response off the ring if there is one: 1, 0 or -EPROTO. */
static int take_response(struct frontend *fe, struct frontend_response *rsp)
{
	RING_IDX prod;

	if (fe->is_x86_64) {
		struct blkif_x86_64_front_ring *r = &fe->ring.r64;
		struct blkif_x86_64_response *b;

		prod = r->sring->rsp_prod;
		xen_rmb();
		if (prod == r->rsp_cons)
			return 0;
		if (prod - r->rsp_cons > MAX_OUTSTANDING)
			return -EPROTO;
		b = RING_GET_RESPONSE(r, r->rsp_cons);
		*rsp = (struct frontend_response){ b->id, b->operation,
						   b->status };
		r->rsp_cons++;
	} else {
		struct blkif_x86_32_front_ring *r = &fe->ring.r32;
		struct blkif_x86_32_response *b;

		prod = r->sring->rsp_prod;
		xen_rmb();
		if (prod == r->rsp_cons)
			return 0;
		if (prod - r->rsp_cons > MAX_OUTSTANDING)
			return -EPROTO;
		b = RING_GET_RESPONSE(r, r->rsp_cons);
		*rsp = (struct frontend_response){ b->id, b->operation,
						   b->status };
		r->rsp_cons++;
	}
	return 1;
}

/* Match a response with its request; -EPROTO for a stray or wrong one. */
static int retire_request(struct frontend *fe,
			  const struct frontend_response *rsp)
{
	for (unsigned int i = 0; i < MAX_OUTSTANDING; i++) {
		struct outstanding *o = &fe->out[i];

		if (!o->busy || o->id != rsp->id)
			continue;
		o->busy = false;
		fe->nr_out--;
		return o->operation == rsp->operation ? 0 : -EPROTO;
	}
	return -EPROTO;
}

static bool more_responses(struct frontend *fe)
{
	int more;

	if (fe->is_x86_64)
		RING_FINAL_CHECK_FOR_RESPONSES(&fe->ring.r64, more);
	else
		RING_FINAL_CHECK_FOR_RESPONSES(&fe->ring.r32, more);
	return more;
}

/* Wait for the event channel and acknowledge it. */
static int wait_event(struct frontend *fe, int timeout_ms)
{
	struct pollfd pfd = { .fd = xensim_evtchn_fd(fe->dom),
			      .events = POLLIN };
	int ret, port;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	while ((port = xensim_evtchn_pending(fe->dom)) >= 0)
		xensim_evtchn_unmask(fe->dom, (uint32_t)port);
	return 0;
}

int frontend_wait(struct frontend *fe, struct frontend_response *rsp,
		  int timeout_ms)
{
	int64_t deadline = xenbus_now_ms() + timeout_ms;

	for (;;) {
		int ret = take_response(fe, rsp);
		int64_t left;

		if (ret > 0) {
			ret = retire_request(fe, rsp);
			return ret < 0 ? ret : 1;
		}
		if (ret < 0)
			return ret;
		if (more_responses(fe))
			continue;
		left = deadline - xenbus_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		ret = wait_event(fe, (int)left);
		if (ret < 0 && ret != -ETIMEDOUT)
			return ret;
	}
}

int frontend_backend_state(struct frontend *fe)
{
	uint64_t v = 0;

	if (xenbus_read_key_u64(fe->xs, fe->disk.backend_path, "state", &v) < 0)
		return 0;
	return (int)v;
}

/* Revoke every grant, retrying while the backend still maps one. */
static int end_grants(struct frontend *fe, int timeout_ms)
{
	int64_t deadline = xenbus_now_ms() + timeout_ms;
	int first = 0;

	for (uint32_t i = 0; i <= fe->nr_granted; i++) {
		grant_ref_t ref = i < fe->nr_granted ? fe->data_grefs[i]
						     : fe->ring_gref;
		int ret;

		if (!ref)
			continue;
		while ((ret = xensim_grant_end(fe->dom, ref)) == -EBUSY &&
		       xenbus_now_ms() < deadline)
			poll(NULL, 0, 10);
		if (ret < 0 && !first)
			first = ret;
	}
	fe->nr_granted = 0;
	fe->ring_gref = 0;
	return first;
}

int frontend_close(struct frontend *fe)
{
	int ret, first = 0;

	ret = write_own_state(fe, XB_CLOSING);
	if (ret < 0)
		first = ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XB_STATE_BIT(XB_CLOSING) |
					XB_STATE_BIT(XB_CLOSED),
				fe->cfg.timeout_ms, NULL);
	if (ret < 0 && !first)
		first = ret;
	ret = write_own_state(fe, XB_CLOSED);
	if (ret < 0 && !first)
		first = ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XB_STATE_BIT(XB_CLOSED), fe->cfg.timeout_ms,
				NULL);
	if (ret < 0 && !first)
		first = ret;
	ret = end_grants(fe, fe->cfg.timeout_ms);
	if (ret < 0 && !first)
		first = ret;
	if (fe->port > 0) {
		xensim_evtchn_close(fe->dom, (uint32_t)fe->port);
		fe->port = -1;
	}
	frontend_abandon(fe);
	return first;
}

void frontend_abandon(struct frontend *fe)
{
	if (fe->dom)
		xensim_domain_close(fe->dom);
	if (fe->xs)
		xs_close(fe->xs);
	free(fe->data_grefs);
	free(fe);
}

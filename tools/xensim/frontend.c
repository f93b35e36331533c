// SPDX-License-Identifier: MIT
/*
 * The simulated blkfront. The guest trusts its backend more than the
 * backend trusts the guest, but this frontend still checks every response
 * (id outstanding, operation matching, as Linux blkfront has since 5.14)
 * because catching a backend that answers wrongly is what the tests are
 * for.
 *
 * Guest memory layout, in page frames: the rings of all queues first
 * (2^order pages each), then each queue's indirect pages (a set per
 * request slot, plus one set for hand-made raw requests), then the data
 * pages.
 */
#include "tools/xensim/frontend.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenstore.h>

#include "libblk/xenbus.h"
#include "tools/xensim/xensim.h"

#define MAX_RING_PAGES (1u << FRONTEND_MAX_RING_ORDER)
#define RAW_IND_PAGES BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST
#define SEGS_PER_IND_PAGE BLKIF_SEGS_PER_INDIRECT_PAGE
#define AUTO_MAX_RING_ORDER 4u
#define ID_SLOT_BITS 16
#define ID_SLOT_MASK ((1ull << ID_SLOT_BITS) - 1)
#define GRANT_END_WAIT_MS 1000

struct slot {
	bool busy;
	uint8_t expect_op; /* what the response must carry */
	uint64_t id;
	unsigned int nr_grefs; /* per-request grants, ended at response */
	grant_ref_t *grefs;
};

struct fe_queue {
	struct xensim_domain *dom; /* owns this queue's port */
	union {
		struct blkif_x86_64_front_ring r64;
		struct blkif_x86_32_front_ring r32;
	} ring;
	uint32_t ring_pfn;
	grant_ref_t ring_grefs[MAX_RING_PAGES];
	int port;
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

static int xs_err(void)
{
	return errno ? -errno : -EIO;
}

const struct frontend_disk_info *frontend_disk_info(const struct frontend *fe)
{
	return &fe->disk;
}

uint32_t frontend_nr_data_pages(const struct frontend *fe)
{
	return fe->cfg.nr_data_pages;
}

void *frontend_data_page(struct frontend *fe, uint32_t page)
{
	if (page >= fe->cfg.nr_data_pages)
		return NULL;
	return xensim_domain_page(fe->dom, fe->data_pfn + page);
}

grant_ref_t frontend_data_gref(const struct frontend *fe, uint32_t page)
{
	return fe->data_grefs && page < fe->nr_data_granted
		       ? fe->data_grefs[page]
		       : 0;
}

static unsigned int ring_room(const struct frontend *fe,
			      const struct fe_queue *fq)
{
	unsigned int used;

	if (fe->is_x86_64)
		used = fq->ring.r64.req_prod_pvt - fq->ring.r64.rsp_cons;
	else
		used = fq->ring.r32.req_prod_pvt - fq->ring.r32.rsp_cons;
	return used >= fe->disk.ring_size ? 0 : fe->disk.ring_size - used;
}

unsigned int frontend_queue_free(const struct frontend *fe, unsigned int q)
{
	const struct fe_queue *fq = &fe->queue[q];
	unsigned int room = ring_room(fe, fq);
	unsigned int slots = fq->nr_slots - fq->nr_busy;

	return room < slots ? room : slots;
}

unsigned int frontend_queue_in_flight(const struct frontend *fe, unsigned int q)
{
	return fe->queue[q].nr_busy;
}

/* ---- the handshake ---- */

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

	return xenbus_read_uint(xs, dir, key, UINT64_MAX, &v) == 0 && v != 0;
}

static uint64_t read_or(struct xs_handle *xs, const char *dir, const char *key,
			uint64_t dflt)
{
	uint64_t v;

	return xenbus_read_uint(xs, dir, key, UINT64_MAX, &v) == 0 ? v : dflt;
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
	ret = xenbus_read_uint(fe->xs, fe->disk.frontend_path, "backend-id",
			       UINT64_MAX, &v);
	if (ret < 0)
		return ret;
	if (v > 0x7fef)
		return -EINVAL;
	fe->disk.backend_domid = (uint32_t)v;
	return 0;
}

static void read_backend_features(struct frontend *fe)
{
	struct frontend_disk_info *d = &fe->disk;
	const char *be = d->backend_path;

	d->feature_flush_cache = read_flag(fe->xs, be, "feature-flush-cache");
	d->feature_barrier = read_flag(fe->xs, be, "feature-barrier");
	d->feature_discard = read_flag(fe->xs, be, "feature-discard");
	d->discard_secure = read_flag(fe->xs, be, "discard-secure");
	d->discard_granularity =
		(uint32_t)read_or(fe->xs, be, "discard-granularity", 512);
	d->discard_alignment =
		(uint32_t)read_or(fe->xs, be, "discard-alignment", 0);
	d->backend_persistent = read_flag(fe->xs, be, "feature-persistent");
	d->backend_max_indirect = (uint32_t)read_or(
		fe->xs, be, "feature-max-indirect-segments", 0);
	d->backend_max_ring_order =
		(uint32_t)read_or(fe->xs, be, "max-ring-page-order", 0);
	d->backend_max_queues =
		(uint32_t)read_or(fe->xs, be, "multi-queue-max-queues", 1);
}

static unsigned int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

static unsigned int min_u(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

/* Linux blkfront's choices, or the caller's. */
static int negotiate(struct frontend *fe)
{
	const struct frontend_config *c = &fe->cfg;
	struct frontend_disk_info *d = &fe->disk;
	unsigned int ind;

	if (c->ring_order == FRONTEND_AUTO)
		d->ring_order =
			min_u(d->backend_max_ring_order, AUTO_MAX_RING_ORDER);
	else if (c->ring_order >= 0 && c->ring_order <= FRONTEND_MAX_RING_ORDER)
		d->ring_order = (unsigned int)c->ring_order;
	else
		return -EINVAL;
	if (c->nr_queues == FRONTEND_AUTO)
		d->nr_queues =
			min_u(min_u(d->backend_max_queues ?: 1, online_cpus()),
			      FRONTEND_MAX_QUEUES);
	else if (c->nr_queues >= 1 && c->nr_queues <= FRONTEND_MAX_QUEUES)
		d->nr_queues = (unsigned int)c->nr_queues;
	else
		return -EINVAL;
	ind = min_u(d->backend_max_indirect, BLKIF_MAX_INDIRECT_SEGMENTS);
	if (c->max_indirect != FRONTEND_AUTO)
		ind = min_u(ind, c->max_indirect < 0
					 ? 0
					 : (unsigned int)c->max_indirect);
	fe->max_indirect = ind;
	fe->ind_pages_per_req =
		ind ? (ind + SEGS_PER_IND_PAGE - 1) / SEGS_PER_IND_PAGE : 0;
	d->max_segments = ind > BLKIF_MAX_SEGMENTS_PER_REQUEST
				  ? ind
				  : BLKIF_MAX_SEGMENTS_PER_REQUEST;
	d->persistent = c->persistent != 0 && d->backend_persistent;
	d->large_sectors = c->large_sectors != 0;
	/* __CONST_RING_SIZE: 32 requests per page for both ABIs. */
	d->ring_size = 32u << d->ring_order;
	return 0;
}

static struct slot *alloc_slots(unsigned int n, unsigned int grefs_each)
{
	struct slot *s = calloc(n, sizeof(*s));

	if (!s)
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		s[i].grefs = calloc(grefs_each, sizeof(grant_ref_t));
		if (!s[i].grefs) {
			while (i--)
				free(s[i].grefs);
			free(s);
			return NULL;
		}
	}
	return s;
}

static int init_ring(struct frontend *fe, struct fe_queue *fq)
{
	size_t bytes = (size_t)XENSIM_PAGE_SIZE << fe->disk.ring_order;
	void *page = xensim_domain_page(fe->dom, fq->ring_pfn);

	if (!page)
		return -ENOMEM;
	memset(page, 0, bytes);
	if (fe->is_x86_64) {
		struct blkif_x86_64_sring *s = page;

		SHARED_RING_INIT(s);
		FRONT_RING_INIT(&fq->ring.r64, s, bytes);
	} else {
		struct blkif_x86_32_sring *s = page;

		SHARED_RING_INIT(s);
		FRONT_RING_INIT(&fq->ring.r32, s, bytes);
	}
	return 0;
}

static int grant_page(struct frontend *fe, struct xensim_domain *dom,
		      uint32_t pfn, bool readonly, grant_ref_t *out)
{
	int ret =
		xensim_grant_access(dom, fe->disk.backend_domid, pfn, readonly);

	if (ret < 0)
		return ret;
	*out = (grant_ref_t)ret;
	return 0;
}

/* One queue: its own event-channel handle, ring, slots and grants. */
static int open_queue(struct frontend *fe, unsigned int q, uint32_t ring_pfn,
		      uint32_t ind_pfn)
{
	struct fe_queue *fq = &fe->queue[q];
	unsigned int ipp = fe->ind_pages_per_req;
	int ret;

	fq->port = -1;
	fq->ring_pfn = ring_pfn;
	fq->ind_pfn = ind_pfn;
	fe->nr_queues_open = q + 1;
	ret = xensim_domain_open(xensim_dir(), fe->cfg.domid, &fq->dom);
	if (ret < 0)
		return ret;
	fq->slots = alloc_slots(fq->nr_slots, fe->disk.max_segments + ipp + 1);
	fq->ind_grefs =
		calloc((size_t)fq->nr_slots * ipp + 1, sizeof(grant_ref_t));
	if (!fq->slots || !fq->ind_grefs)
		return -ENOMEM;
	ret = init_ring(fe, fq);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < (1u << fe->disk.ring_order); i++) {
		ret = grant_page(fe, fe->dom, ring_pfn + i, false,
				 &fq->ring_grefs[i]);
		if (ret < 0)
			return ret;
	}
	/* Persistent grants must be writable (blkif.h); so are these. */
	for (unsigned int i = 0; fe->disk.persistent && i < fq->nr_slots * ipp;
	     i++) {
		ret = grant_page(fe, fe->dom, ind_pfn + i, false,
				 &fq->ind_grefs[i]);
		if (ret < 0)
			return ret;
	}
	for (unsigned int i = 0; i < RAW_IND_PAGES; i++) {
		ret = grant_page(fe, fe->dom, ind_pfn + fq->nr_slots * ipp + i,
				 false, &fq->raw_grefs[i]);
		if (ret < 0)
			return ret;
	}
	ret = xensim_evtchn_alloc_unbound(fq->dom, fe->disk.backend_domid);
	if (ret < 0)
		return ret;
	fq->port = ret;
	return 0;
}

static int open_queues(struct frontend *fe)
{
	const struct frontend_disk_info *d = &fe->disk;
	unsigned int nq = d->nr_queues, ipp = fe->ind_pages_per_req;
	unsigned int slots = d->ring_size;
	uint32_t ind_pfn, need;
	int ret;

	if (fe->cfg.max_in_flight && fe->cfg.max_in_flight < slots)
		slots = fe->cfg.max_in_flight;
	ind_pfn = nq << d->ring_order;
	fe->data_pfn = ind_pfn + nq * (slots * ipp + RAW_IND_PAGES);
	need = fe->data_pfn + fe->cfg.nr_data_pages;
	if (xensim_domain_nr_pages(fe->dom) < need)
		return -ENOMEM;
	for (unsigned int q = 0; q < nq; q++) {
		fe->queue[q].nr_slots = slots;
		ret = open_queue(fe, q, q << d->ring_order,
				 ind_pfn + q * (slots * ipp + RAW_IND_PAGES));
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int grant_data_pages(struct frontend *fe)
{
	if (!fe->disk.persistent)
		return 0;
	fe->data_grefs = calloc(fe->cfg.nr_data_pages + 1, sizeof(grant_ref_t));
	if (!fe->data_grefs)
		return -ENOMEM;
	for (uint32_t i = 0; i < fe->cfg.nr_data_pages; i++) {
		int ret = grant_page(fe, fe->dom, fe->data_pfn + i, false,
				     &fe->data_grefs[i]);

		if (ret < 0)
			return ret;
		fe->nr_data_granted = i + 1;
	}
	return 0;
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

/* ring-ref[N] and event-channel of one queue under @dir. */
static int write_queue_keys(struct frontend *fe, xs_transaction_t t,
			    const char *dir, const struct fe_queue *fq)
{
	char path[320];
	int ret = 0;

	for (unsigned int i = 0; !ret && i < (1u << fe->disk.ring_order); i++) {
		if (fe->disk.ring_order == 0)
			snprintf(path, sizeof(path), "%s/ring-ref", dir);
		else
			snprintf(path, sizeof(path), "%s/ring-ref%u", dir, i);
		ret = xenbus_printf(fe->xs, t, path, "%u", fq->ring_grefs[i]);
	}
	snprintf(path, sizeof(path), "%s/event-channel", dir);
	return ret ?: xenbus_printf(fe->xs, t, path, "%d", fq->port);
}

/*
 * Transport keys of an earlier connection (another ring order or queue
 * count) would contradict the new ones: remove them first.
 */
static void remove_stale_transport(struct frontend *fe, xs_transaction_t t)
{
	static const char *const keys[] = {
		"ring-ref",
		"ring-page-order",
		"event-channel",
		"multi-queue-num-queues",
		"feature-large-sector-size",
	};
	const char *dir = fe->disk.frontend_path;
	char path[320];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, keys[i]);
		xs_rm(fe->xs, t, path);
	}
	for (unsigned int i = 0; i < MAX_RING_PAGES; i++) {
		snprintf(path, sizeof(path), "%s/ring-ref%u", dir, i);
		xs_rm(fe->xs, t, path);
	}
	for (unsigned int q = 0; q < FRONTEND_MAX_QUEUES; q++) {
		snprintf(path, sizeof(path), "%s/queue-%u", dir, q);
		xs_rm(fe->xs, t, path);
	}
}

static int write_transport(struct frontend *fe, xs_transaction_t t)
{
	const char *dir = fe->disk.frontend_path;
	const char *proto = protocol_name(fe->cfg.protocol);
	const struct frontend_disk_info *d = &fe->disk;
	char path[320];
	int ret = 0;

	remove_stale_transport(fe, t);

	if (d->ring_order) {
		snprintf(path, sizeof(path), "%s/ring-page-order", dir);
		ret = xenbus_printf(fe->xs, t, path, "%u", d->ring_order);
	}
	if (!ret && d->nr_queues == 1) {
		ret = write_queue_keys(fe, t, dir, &fe->queue[0]);
	} else if (!ret) {
		snprintf(path, sizeof(path), "%s/multi-queue-num-queues", dir);
		ret = xenbus_printf(fe->xs, t, path, "%u", d->nr_queues);
		for (unsigned int q = 0; !ret && q < d->nr_queues; q++) {
			char qdir[300];

			snprintf(qdir, sizeof(qdir), "%s/queue-%u", dir, q);
			ret = write_queue_keys(fe, t, qdir, &fe->queue[q]);
		}
	}
	snprintf(path, sizeof(path), "%s/protocol", dir);
	if (!ret && proto)
		ret = xenbus_printf(fe->xs, t, path, "%s", proto);
	else if (!ret)
		xs_rm(fe->xs, t, path);
	snprintf(path, sizeof(path), "%s/feature-persistent", dir);
	if (!ret)
		ret = xenbus_printf(fe->xs, t, path, "%d",
				    fe->cfg.persistent != 0);
	snprintf(path, sizeof(path), "%s/feature-large-sector-size", dir);
	if (!ret && d->large_sectors)
		ret = xenbus_printf(fe->xs, t, path, "1");
	snprintf(path, sizeof(path), "%s/state", dir);
	return ret
		       ?: xenbus_printf(fe->xs, t, path, "%d",
					XenbusStateInitialised);
}

static int write_transport_in(struct xs_handle *xs, xs_transaction_t t,
			      void *fe)
{
	return write_transport(fe, t);
}

/* Everything of the transport and state 3 in one transaction. */
static int publish_transport(struct frontend *fe)
{
	return xenbus_transact(fe->xs, write_transport_in, fe);
}

static int read_disk_properties(struct frontend *fe)
{
	const char *be = fe->disk.backend_path;
	uint64_t v;
	int ret;

	ret = xenbus_read_uint(fe->xs, be, "sectors", UINT64_MAX,
			       &fe->disk.sectors);
	if (ret < 0)
		return ret;
	ret = xenbus_read_uint(fe->xs, be, "sector-size", UINT64_MAX, &v);
	if (ret < 0)
		return ret;
	if (v < 512 || v > XENSIM_PAGE_SIZE || (v & (v - 1)))
		return -EINVAL;
	fe->disk.sector_size = (uint32_t)v;
	if (xenbus_read_uint(fe->xs, be, "physical-sector-size", UINT64_MAX,
			     &v) < 0)
		v = fe->disk.sector_size;
	fe->disk.physical_sector_size = (uint32_t)v;
	ret = xenbus_read_uint(fe->xs, be, "info", UINT64_MAX, &v);
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
	ret = xenbus_read_uint(fe->xs, fe->disk.frontend_path, "state",
			       UINT64_MAX, &v);
	if (ret < 0 || v != XenbusStateInitialising) {
		ret = write_own_state(fe, XenbusStateInitialising);
		if (ret < 0)
			return ret;
	}
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XENBUS_STATE_BIT(XenbusStateInitWait),
				fe->cfg.timeout_ms, NULL);
	if (ret < 0)
		return ret;
	read_backend_features(fe);
	ret = negotiate(fe);
	if (ret < 0)
		return ret;
	ret = xensim_domain_open(xensim_dir(), fe->cfg.domid, &fe->dom);
	if (ret < 0)
		return ret;
	ret = open_queues(fe);
	if (ret < 0)
		return ret;
	ret = grant_data_pages(fe);
	if (ret < 0)
		return ret;
	ret = publish_transport(fe);
	if (ret < 0)
		return ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XENBUS_STATE_BIT(XenbusStateConnected) |
					XENBUS_STATE_BIT(XenbusStateClosing) |
					XENBUS_STATE_BIT(XenbusStateClosed),
				fe->cfg.timeout_ms, NULL);
	if (ret < 0)
		return ret;
	if (ret != XenbusStateConnected) {
		/* As blkfront_closing: the backend gave up, so do we. */
		write_own_state(fe, XenbusStateClosed);
		return -ECONNREFUSED;
	}
	ret = read_disk_properties(fe);
	if (ret < 0)
		return ret;
	return write_own_state(fe, XenbusStateConnected);
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

/* ---- requests ---- */

static int take_slot(struct fe_queue *fq, uint64_t raw_id, bool raw,
		     uint8_t expect_op, struct slot **out)
{
	for (unsigned int n = 0; n < fq->nr_slots; n++) {
		unsigned int i = (fq->free_hint + n) % fq->nr_slots;
		struct slot *s = &fq->slots[i];

		if (s->busy)
			continue;
		s->busy = true;
		s->expect_op = expect_op;
		s->nr_grefs = 0;
		s->id = raw ? raw_id
			    : (++fq->generation << ID_SLOT_BITS) | (uint64_t)i;
		fq->nr_busy++;
		fq->free_hint = i + 1;
		*out = s;
		return 0;
	}
	return -EBUSY;
}

static struct slot *find_slot(struct fe_queue *fq, uint64_t id)
{
	uint64_t i = id & ID_SLOT_MASK;

	if (i < fq->nr_slots && fq->slots[i].busy && fq->slots[i].id == id)
		return &fq->slots[i];
	for (unsigned int n = 0; n < fq->nr_slots; n++) {
		if (fq->slots[n].busy && fq->slots[n].id == id)
			return &fq->slots[n];
	}
	return NULL;
}

/* End a slot's per-request grants, waiting briefly while still in use. */
static int end_slot_grants(struct fe_queue *fq, struct slot *s)
{
	int64_t deadline = xenbus_now_ms() + GRANT_END_WAIT_MS;
	int first = 0;

	for (unsigned int i = 0; i < s->nr_grefs; i++) {
		int ret;

		while ((ret = xensim_grant_end(fq->dom, s->grefs[i])) ==
			       -EBUSY &&
		       xenbus_now_ms() < deadline)
			poll(NULL, 0, 1);
		if (ret < 0 && !first)
			first = ret;
	}
	s->nr_grefs = 0;
	return first;
}

static void release_slot(struct fe_queue *fq, struct slot *s)
{
	end_slot_grants(fq, s);
	s->busy = false;
	fq->nr_busy--;
}

static void *next_request_slot(struct frontend *fe, struct fe_queue *fq)
{
	void *slot;

	if (fe->is_x86_64) {
		struct blkif_x86_64_front_ring *r = &fq->ring.r64;

		slot = RING_GET_REQUEST(r, r->req_prod_pvt);
		memset(slot, 0, sizeof(union blkif_x86_64_slot));
		r->req_prod_pvt++;
	} else {
		struct blkif_x86_32_front_ring *r = &fq->ring.r32;

		slot = RING_GET_REQUEST(r, r->req_prod_pvt);
		memset(slot, 0, sizeof(union blkif_x86_32_slot));
		r->req_prod_pvt++;
	}
	return slot;
}

/*
 * Both ABIs name the same fields; one macro fills either slot type. The
 * sector and the segments are the fields no response overlaps (the
 * response's 12 or 16 bytes cover operation to id).
 */
#define FILL_SECTOR_AND_SEGMENTS(r, req)                                       \
	do {                                                                   \
		(r)->sector_number = (req)->sector_number;                     \
		for (unsigned int i_ = 0; i_ < BLKIF_MAX_SEGMENTS_PER_REQUEST; \
		     i_++) {                                                   \
			(r)->seg[i_].gref = (req)->seg[i_].gref;               \
			(r)->seg[i_].first_sect = (req)->seg[i_].first_sect;   \
			(r)->seg[i_].last_sect = (req)->seg[i_].last_sect;     \
		}                                                              \
	} while (0)

#define FILL_RW(r, req)                                \
	do {                                           \
		(r)->operation = (req)->operation;     \
		(r)->nr_segments = (req)->nr_segments; \
		(r)->handle = (req)->handle;           \
		(r)->id = (req)->id;                   \
		FILL_SECTOR_AND_SEGMENTS(r, req);      \
	} while (0)

#define FILL_INDIRECT(r, req)                                      \
	do {                                                       \
		(r)->operation = BLKIF_OP_INDIRECT;                \
		(r)->indirect_op = (req)->indirect_op;             \
		(r)->nr_segments = (req)->nr_segments;             \
		(r)->handle = (req)->handle;                       \
		(r)->id = (req)->id;                               \
		(r)->sector_number = (req)->sector_number;         \
		memcpy((r)->indirect_grefs, (req)->indirect_grefs, \
		       sizeof((r)->indirect_grefs));               \
	} while (0)

static void write_rw(struct frontend *fe, struct fe_queue *fq,
		     const struct frontend_request *req)
{
	void *slot = next_request_slot(fe, fq);

	if (fe->is_x86_64)
		FILL_RW(&((union blkif_x86_64_slot *)slot)->rw, req);
	else
		FILL_RW(&((union blkif_x86_32_slot *)slot)->rw, req);
}

static void write_indirect(struct frontend *fe, struct fe_queue *fq,
			   const struct frontend_indirect_request *req)
{
	void *slot = next_request_slot(fe, fq);

	if (fe->is_x86_64)
		FILL_INDIRECT(&((union blkif_x86_64_slot *)slot)->indirect,
			      req);
	else
		FILL_INDIRECT(&((union blkif_x86_32_slot *)slot)->indirect,
			      req);
}

int frontend_queue_raw_on(struct frontend *fe, unsigned int q,
			  const struct frontend_request *req)
{
	struct fe_queue *fq = &fe->queue[q];
	struct slot *s;
	int ret;

	if (!frontend_queue_free(fe, q))
		return -EBUSY;
	ret = take_slot(fq, req->id, true, req->operation, &s);
	if (ret < 0)
		return ret;
	write_rw(fe, fq, req);
	return 0;
}

int frontend_queue_raw_indirect(struct frontend *fe, unsigned int q,
				const struct frontend_indirect_request *req)
{
	struct fe_queue *fq = &fe->queue[q];
	struct slot *s;
	int ret;

	if (!frontend_queue_free(fe, q))
		return -EBUSY;
	ret = take_slot(fq, req->id, true, req->indirect_op, &s);
	if (ret < 0)
		return ret;
	write_indirect(fe, fq, req);
	return 0;
}

static void write_segments(struct blkif_request_segment *pages[],
			   const struct frontend_segment *segs,
			   const grant_ref_t *grefs, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		struct blkif_request_segment *e =
			&pages[i / SEGS_PER_IND_PAGE][i % SEGS_PER_IND_PAGE];

		e->gref = grefs[i];
		e->first_sect = segs[i].first_sect;
		e->last_sect = segs[i].last_sect;
	}
}

int frontend_raw_indirect_pages(struct frontend *fe, unsigned int q,
				const struct blkif_request_segment *entries,
				unsigned int nr, grant_ref_t *grefs)
{
	struct fe_queue *fq = &fe->queue[q];
	uint32_t pfn = fq->ind_pfn + fq->nr_slots * fe->ind_pages_per_req;

	if (nr > BLKIF_MAX_INDIRECT_SEGMENTS)
		return -EINVAL;
	for (unsigned int i = 0; i < RAW_IND_PAGES; i++) {
		struct blkif_request_segment *page =
			xensim_domain_page(fe->dom, pfn + i);
		unsigned int from = i * SEGS_PER_IND_PAGE;

		memset(page, 0, XENSIM_PAGE_SIZE);
		for (unsigned int k = 0; from + k < nr && k < SEGS_PER_IND_PAGE;
		     k++)
			page[k] = entries[from + k];
		grefs[i] = fq->raw_grefs[i];
	}
	return 0;
}

static uint32_t sectors_per_page(const struct frontend *fe)
{
	return XENSIM_PAGE_SIZE / fe->disk.sector_size;
}

static int check_segments(const struct frontend *fe,
			  const struct frontend_segment *segs, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		if (segs[i].page >= fe->cfg.nr_data_pages ||
		    segs[i].first_sect > segs[i].last_sect ||
		    segs[i].last_sect >= sectors_per_page(fe))
			return -EINVAL;
	}
	return 0;
}

static bool writes_data(uint8_t op)
{
	return op != BLKIF_OP_READ;
}

/*
 * The grant of each segment's page: the persistent one, or a new grant
 * for this request only (read-only when the backend only reads it).
 */
static int segment_grefs(struct frontend *fe, struct fe_queue *fq,
			 struct slot *s, uint8_t op,
			 const struct frontend_segment *segs, unsigned int nr,
			 grant_ref_t *out)
{
	for (unsigned int i = 0; i < nr; i++) {
		int ret;

		if (fe->disk.persistent) {
			out[i] = fe->data_grefs[segs[i].page];
			continue;
		}
		ret = grant_page(fe, fq->dom, fe->data_pfn + segs[i].page,
				 writes_data(op), &out[i]);
		if (ret < 0)
			return ret;
		s->grefs[s->nr_grefs++] = out[i];
	}
	return 0;
}

static int indirect_grefs(struct frontend *fe, struct fe_queue *fq,
			  struct slot *s, unsigned int npages, uint32_t first,
			  grant_ref_t *out)
{
	unsigned int base =
		(unsigned int)(s - fq->slots) * fe->ind_pages_per_req;

	for (unsigned int i = 0; i < npages; i++) {
		int ret;

		if (fe->disk.persistent) {
			out[i] = fq->ind_grefs[base + i];
			continue;
		}
		ret = grant_page(fe, fq->dom, first + i, true, &out[i]);
		if (ret < 0)
			return ret;
		s->grefs[s->nr_grefs++] = out[i];
	}
	return 0;
}

static int queue_indirect(struct frontend *fe, struct fe_queue *fq,
			  struct slot *s, struct frontend_indirect_request *ir,
			  const struct frontend_segment *segs, unsigned int nr,
			  grant_ref_t *seg_grefs)
{
	unsigned int npages = (nr + SEGS_PER_IND_PAGE - 1) / SEGS_PER_IND_PAGE;
	unsigned int idx = (unsigned int)(s - fq->slots);
	uint32_t first = fq->ind_pfn + idx * fe->ind_pages_per_req;
	struct blkif_request_segment *pages[RAW_IND_PAGES];
	int ret;

	for (unsigned int i = 0; i < npages; i++)
		pages[i] = xensim_domain_page(fe->dom, first + i);
	write_segments(pages, segs, seg_grefs, nr);
	ret = indirect_grefs(fe, fq, s, npages, first, ir->indirect_grefs);
	if (ret < 0)
		return ret;
	write_indirect(fe, fq, ir);
	return 0;
}

int frontend_queue_io(struct frontend *fe, unsigned int q, uint8_t op,
		      uint64_t sector, const struct frontend_segment *segs,
		      unsigned int nr, uint64_t *id)
{
	struct fe_queue *fq = &fe->queue[q];
	bool indirect = nr > BLKIF_MAX_SEGMENTS_PER_REQUEST;
	struct slot *s = NULL;
	grant_ref_t *grefs;
	int ret;

	if (check_segments(fe, segs, nr) < 0)
		return -EINVAL;
	if (indirect && (nr > fe->max_indirect ||
			 (op != BLKIF_OP_READ && op != BLKIF_OP_WRITE)))
		return -E2BIG;
	if (!frontend_queue_free(fe, q))
		return -EBUSY;
	grefs = malloc((nr + 1) * sizeof(*grefs));
	if (!grefs)
		return -ENOMEM;
	ret = take_slot(fq, 0, false, op, &s);
	if (ret == 0)
		ret = segment_grefs(fe, fq, s, op, segs, nr, grefs);
	if (ret == 0 && indirect) {
		struct frontend_indirect_request ir = {
			.indirect_op = op,
			.nr_segments = (uint16_t)nr,
			.handle = (uint16_t)fe->cfg.devid,
			.id = s->id,
			.sector_number = sector,
		};

		ret = queue_indirect(fe, fq, s, &ir, segs, nr, grefs);
	} else if (ret == 0) {
		struct frontend_request req = { .operation = op,
						.nr_segments = (uint8_t)nr,
						.handle =
							(uint16_t)fe->cfg.devid,
						.id = s->id,
						.sector_number = sector };

		for (unsigned int i = 0; i < nr; i++) {
			req.seg[i].gref = grefs[i];
			req.seg[i].first_sect = segs[i].first_sect;
			req.seg[i].last_sect = segs[i].last_sect;
		}
		write_rw(fe, fq, &req);
	}
	free(grefs);
	if (ret < 0) {
		if (s)
			release_slot(fq, s);
		return ret;
	}
	if (id)
		*id = s->id;
	return 0;
}

int frontend_queue_discard(struct frontend *fe, unsigned int q, uint64_t sector,
			   uint64_t nr_sectors, uint8_t flags, uint64_t *id)
{
	struct fe_queue *fq = &fe->queue[q];
	struct slot *s;
	void *slot;
	int ret;

	if (!frontend_queue_free(fe, q))
		return -EBUSY;
	ret = take_slot(fq, 0, false, BLKIF_OP_DISCARD, &s);
	if (ret < 0)
		return ret;
	slot = next_request_slot(fe, fq);
	if (fe->is_x86_64) {
		struct blkif_x86_64_request_discard *d =
			&((union blkif_x86_64_slot *)slot)->discard;

		*d = (struct blkif_x86_64_request_discard){
			.operation = BLKIF_OP_DISCARD,
			.flag = flags,
			.handle = (uint16_t)fe->cfg.devid,
			.id = s->id,
			.sector_number = sector,
			.nr_sectors = nr_sectors,
		};
	} else {
		struct blkif_x86_32_request_discard *d =
			&((union blkif_x86_32_slot *)slot)->discard;

		*d = (struct blkif_x86_32_request_discard){
			.operation = BLKIF_OP_DISCARD,
			.flag = flags,
			.handle = (uint16_t)fe->cfg.devid,
			.id = s->id,
			.sector_number = sector,
			.nr_sectors = nr_sectors,
		};
	}
	if (id)
		*id = s->id;
	return 0;
}

int frontend_push_on(struct frontend *fe, unsigned int q)
{
	struct fe_queue *fq = &fe->queue[q];
	int notify;

	if (fe->is_x86_64)
		RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&fq->ring.r64, notify);
	else
		RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&fq->ring.r32, notify);
	if (notify)
		return xensim_evtchn_notify(fq->dom, (uint32_t)fq->port);
	return 0;
}

/* Take one response off the ring if there is one: 1, 0 or -EPROTO. */
static int take_response(struct frontend *fe, struct fe_queue *fq,
			 struct frontend_response *rsp)
{
	unsigned int size = fe->disk.ring_size;
	RING_IDX prod;

	if (fe->is_x86_64) {
		struct blkif_x86_64_front_ring *r = &fq->ring.r64;
		struct blkif_x86_64_response *b;

		prod = r->sring->rsp_prod;
		xen_rmb();
		if (prod == r->rsp_cons)
			return 0;
		if (prod - r->rsp_cons > size)
			return -EPROTO;
		b = RING_GET_RESPONSE(r, r->rsp_cons);
		*rsp = (struct frontend_response){ b->id, b->operation,
						   b->status };
		r->rsp_cons++;
	} else {
		struct blkif_x86_32_front_ring *r = &fq->ring.r32;
		struct blkif_x86_32_response *b;

		prod = r->sring->rsp_prod;
		xen_rmb();
		if (prod == r->rsp_cons)
			return 0;
		if (prod - r->rsp_cons > size)
			return -EPROTO;
		b = RING_GET_RESPONSE(r, r->rsp_cons);
		*rsp = (struct frontend_response){ b->id, b->operation,
						   b->status };
		r->rsp_cons++;
	}
	return 1;
}

/* Match a response with its request; -EPROTO for a stray or wrong one. */
static int retire_request(struct fe_queue *fq,
			  const struct frontend_response *rsp)
{
	struct slot *s = find_slot(fq, rsp->id);
	bool op_ok;
	int ret;

	if (!s)
		return -EPROTO;
	op_ok = s->expect_op == rsp->operation;
	ret = end_slot_grants(fq, s);
	s->busy = false;
	fq->nr_busy--;
	if (!op_ok)
		return -EPROTO;
	return ret < 0 ? -EIO : 0;
}

static bool more_responses(struct frontend *fe, struct fe_queue *fq)
{
	int more;

	if (fe->is_x86_64)
		RING_FINAL_CHECK_FOR_RESPONSES(&fq->ring.r64, more);
	else
		RING_FINAL_CHECK_FOR_RESPONSES(&fq->ring.r32, more);
	return more;
}

/*
 * Acknowledge every event the queue's domain has pending: one read takes
 * them all (fewer than asked for means there were no more), as an upcall
 * finds them all.
 */
static void ack_events(struct fe_queue *fq)
{
	uint32_t ports[64];
	int n;

	do {
		n = xensim_evtchn_read(fq->dom, ports, 64);
		for (int i = 0; i < n; i++)
			xensim_evtchn_unmask(fq->dom, ports[i]);
	} while (n == 64);
}

/* Wait for the queue's event channel and acknowledge it. */
static int wait_event(struct fe_queue *fq, int timeout_ms)
{
	struct pollfd pfd = { .fd = xensim_evtchn_fd(fq->dom),
			      .events = POLLIN };
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	ack_events(fq);
	return 0;
}

void frontend_take_events(struct frontend *fe)
{
	for (unsigned int q = 0; q < fe->nr_queues_open; q++)
		ack_events(&fe->queue[q]);
}

int frontend_wait_on(struct frontend *fe, unsigned int q,
		     struct frontend_response *rsp, int timeout_ms)
{
	struct fe_queue *fq = &fe->queue[q];
	int64_t deadline = xenbus_now_ms() + timeout_ms;
	bool ran_out = false;

	for (;;) {
		int ret = take_response(fe, fq, rsp);
		int64_t left;

		if (ret > 0) {
			fq->unannounced += ran_out;
			ret = retire_request(fq, rsp);
			return ret < 0 ? ret : 1;
		}
		if (ret < 0)
			return ret;
		if (more_responses(fe, fq))
			continue;
		left = deadline - xenbus_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		ret = wait_event(fq, (int)left);
		if (ret == -ETIMEDOUT)
			ran_out = true;
		else if (ret < 0)
			return ret;
	}
}

uint64_t frontend_unannounced(const struct frontend *fe)
{
	uint64_t n = 0;

	for (unsigned int q = 0; q < FRONTEND_MAX_QUEUES; q++)
		n += fe->queue[q].unannounced;
	return n;
}

/* ---- queue 0 ---- */

unsigned int frontend_free_slots(const struct frontend *fe)
{
	return frontend_queue_free(fe, 0);
}

unsigned int frontend_in_flight(const struct frontend *fe)
{
	return frontend_queue_in_flight(fe, 0);
}

int frontend_queue_rw(struct frontend *fe, uint8_t op, uint64_t sector,
		      const struct frontend_segment *segs, unsigned int nr,
		      uint64_t *id)
{
	return frontend_queue_io(fe, 0, op, sector, segs, nr, id);
}

int frontend_queue_flush(struct frontend *fe, uint64_t *id)
{
	return frontend_queue_io(fe, 0, BLKIF_OP_FLUSH_DISKCACHE, 0, NULL, 0,
				 id);
}

int frontend_queue_raw(struct frontend *fe, const struct frontend_request *req)
{
	return frontend_queue_raw_on(fe, 0, req);
}

int frontend_push(struct frontend *fe)
{
	return frontend_push_on(fe, 0);
}

int frontend_wait(struct frontend *fe, struct frontend_response *rsp,
		  int timeout_ms)
{
	return frontend_wait_on(fe, 0, rsp, timeout_ms);
}

/* ---- hostile hooks ---- */

struct xensim_domain *frontend_domain(struct frontend *fe)
{
	return fe->dom;
}

uint32_t frontend_data_pfn(const struct frontend *fe, uint32_t page)
{
	return fe->data_pfn + page;
}

uint32_t frontend_req_prod_pvt(const struct frontend *fe, unsigned int q)
{
	const struct fe_queue *fq = &fe->queue[q];

	return fe->is_x86_64 ? fq->ring.r64.req_prod_pvt
			     : fq->ring.r32.req_prod_pvt;
}

int frontend_notify(struct frontend *fe, unsigned int q)
{
	struct fe_queue *fq = &fe->queue[q];

	return xensim_evtchn_notify(fq->dom, (uint32_t)fq->port);
}

int frontend_set_req_prod(struct frontend *fe, unsigned int q, uint32_t value)
{
	struct fe_queue *fq = &fe->queue[q];

	xen_wmb();
	if (fe->is_x86_64)
		fq->ring.r64.sring->req_prod = value;
	else
		fq->ring.r32.sring->req_prod = value;
	return frontend_notify(fe, q);
}

void frontend_rewrite_last(struct frontend *fe, unsigned int q,
			   const struct frontend_request *req)
{
	struct fe_queue *fq = &fe->queue[q];

	if (fe->is_x86_64) {
		struct blkif_x86_64_front_ring *r = &fq->ring.r64;
		union blkif_x86_64_slot *slot =
			(void *)RING_GET_REQUEST(r, r->req_prod_pvt - 1);

		FILL_SECTOR_AND_SEGMENTS(&slot->rw, req);
	} else {
		struct blkif_x86_32_front_ring *r = &fq->ring.r32;
		union blkif_x86_32_slot *slot =
			(void *)RING_GET_REQUEST(r, r->req_prod_pvt - 1);

		FILL_SECTOR_AND_SEGMENTS(&slot->rw, req);
	}
}

/* ---- state ---- */

int frontend_backend_state(struct frontend *fe)
{
	uint64_t v = 0;

	if (xenbus_read_uint(fe->xs, fe->disk.backend_path, "state", UINT64_MAX,
			     &v) < 0)
		return 0;
	return (int)v;
}

static void drain_watch(struct xs_handle *xs)
{
	char **ev;

	while ((ev = xs_check_watch(xs)))
		free(ev);
}

int frontend_wait_resize(struct frontend *fe, int timeout_ms)
{
	int64_t deadline = xenbus_now_ms() + timeout_ms;
	char path[300];
	const char *token = "xensim-blkfront-resize";
	int ret = -ETIMEDOUT;

	snprintf(path, sizeof(path), "%s/state", fe->disk.backend_path);
	if (!xs_watch(fe->xs, path, token))
		return xs_err();
	for (;;) {
		struct pollfd pfd = { .fd = xs_fileno(fe->xs),
				      .events = POLLIN };
		uint64_t sectors;
		int64_t left;

		drain_watch(fe->xs);
		if (xenbus_read_uint(fe->xs, fe->disk.backend_path, "sectors",
				     UINT64_MAX, &sectors) == 0 &&
		    sectors != fe->disk.sectors) {
			fe->disk.sectors = sectors;
			ret = 0;
			break;
		}
		left = deadline - xenbus_now_ms();
		if (left <= 0)
			break;
		poll(&pfd, 1, left > 200 ? 200 : (int)left);
	}
	xs_unwatch(fe->xs, path, token);
	drain_watch(fe->xs);
	return ret;
}

/* Revoke a grant, retrying while the backend still maps it. */
static int end_grant(struct xensim_domain *dom, grant_ref_t ref,
		     int64_t deadline)
{
	int ret;

	if (!ref)
		return 0;
	while ((ret = xensim_grant_end(dom, ref)) == -EBUSY &&
	       xenbus_now_ms() < deadline)
		poll(NULL, 0, 10);
	return ret;
}

static int end_queue_grants(struct frontend *fe, struct fe_queue *fq,
			    int64_t deadline)
{
	unsigned int ind =
		fe->disk.persistent ? fq->nr_slots * fe->ind_pages_per_req : 0;
	int ret, first = 0;

	for (unsigned int i = 0; fq->slots && i < fq->nr_slots; i++) {
		if (fq->slots[i].busy)
			release_slot(fq, &fq->slots[i]);
	}
	for (unsigned int i = 0; i < MAX_RING_PAGES; i++) {
		ret = end_grant(fe->dom, fq->ring_grefs[i], deadline);
		if (ret < 0 && !first)
			first = ret;
		fq->ring_grefs[i] = 0;
	}
	for (unsigned int i = 0; fq->ind_grefs && i < ind; i++) {
		ret = end_grant(fe->dom, fq->ind_grefs[i], deadline);
		if (ret < 0 && !first)
			first = ret;
		fq->ind_grefs[i] = 0;
	}
	for (unsigned int i = 0; i < RAW_IND_PAGES; i++) {
		ret = end_grant(fe->dom, fq->raw_grefs[i], deadline);
		if (ret < 0 && !first)
			first = ret;
		fq->raw_grefs[i] = 0;
	}
	return first;
}

/* Revoke every grant, retrying while the backend still maps one. */
static int end_grants(struct frontend *fe, int timeout_ms)
{
	int64_t deadline = xenbus_now_ms() + timeout_ms;
	int ret, first = 0;

	for (uint32_t i = 0; i < fe->nr_data_granted; i++) {
		ret = end_grant(fe->dom, fe->data_grefs[i], deadline);
		if (ret < 0 && !first)
			first = ret;
	}
	fe->nr_data_granted = 0;
	for (unsigned int q = 0; q < fe->nr_queues_open; q++) {
		ret = end_queue_grants(fe, &fe->queue[q], deadline);
		if (ret < 0 && !first)
			first = ret;
	}
	return first;
}

int frontend_close(struct frontend *fe)
{
	int ret, first = 0;

	ret = write_own_state(fe, XenbusStateClosing);
	if (ret < 0)
		first = ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XENBUS_STATE_BIT(XenbusStateClosing) |
					XENBUS_STATE_BIT(XenbusStateClosed),
				fe->cfg.timeout_ms, NULL);
	if (ret < 0 && !first)
		first = ret;
	ret = write_own_state(fe, XenbusStateClosed);
	if (ret < 0 && !first)
		first = ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XENBUS_STATE_BIT(XenbusStateClosed),
				fe->cfg.timeout_ms, NULL);
	if (ret < 0 && !first)
		first = ret;
	ret = end_grants(fe, fe->cfg.timeout_ms);
	if (ret < 0 && !first)
		first = ret;
	for (unsigned int q = 0; q < fe->nr_queues_open; q++) {
		struct fe_queue *fq = &fe->queue[q];

		if (fq->port > 0)
			xensim_evtchn_close(fq->dom, (uint32_t)fq->port);
		fq->port = -1;
	}
	frontend_abandon(fe);
	return first;
}

void frontend_abandon(struct frontend *fe)
{
	for (unsigned int q = 0; q < fe->nr_queues_open; q++) {
		struct fe_queue *fq = &fe->queue[q];

		if (fq->dom)
			xensim_domain_close(fq->dom);
		for (unsigned int i = 0; fq->slots && i < fq->nr_slots; i++)
			free(fq->slots[i].grefs);
		free(fq->slots);
		free(fq->ind_grefs);
	}
	if (fe->dom)
		xensim_domain_close(fe->dom);
	if (fe->xs)
		xs_close(fe->xs);
	free(fe->data_grefs);
	free(fe);
}

// SPDX-License-Identifier: MIT
/*
 * The simulated blkfront's xenbus handshake (frontend-internal.h): find
 * the backend, take what it offers the way Linux blkfront does (or what
 * the caller forces), set up each queue's ring, slots and grants, and
 * publish them with state Initialised in one transaction. Also the
 * backend's state and size as the guest reads them later.
 */
#include "tools/xensim/frontend-internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenstore.h>

#include "libblk/xenbus.h"
#include "tools/xensim/xensim.h"

#define AUTO_MAX_RING_ORDER 4u
#define MAX_RING_PAGES (1u << FRONTEND_MAX_RING_ORDER)

static int xs_err(void)
{
	return errno ? -errno : -EIO;
}

const struct frontend_disk_info *frontend_disk_info(const struct frontend *fe)
{
	return &fe->disk;
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

int fe_grant_page(struct frontend *fe, struct xensim_domain *dom, uint32_t pfn,
		  bool readonly, grant_ref_t *out)
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

	fq->gr.port = -1;
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
	ret = guest_ring_init(&fq->gr, fq->dom, fe->disk.backend_domid,
			      ring_pfn, fe->disk.ring_order, fe->is_x86_64);
	if (ret < 0)
		return ret;
	/* Persistent grants must be writable (blkif.h); so are these. */
	for (unsigned int i = 0; fe->disk.persistent && i < fq->nr_slots * ipp;
	     i++) {
		ret = fe_grant_page(fe, fe->dom, ind_pfn + i, false,
				    &fq->ind_grefs[i]);
		if (ret < 0)
			return ret;
	}
	for (unsigned int i = 0; i < RAW_IND_PAGES; i++) {
		ret = fe_grant_page(fe, fe->dom,
				    ind_pfn + fq->nr_slots * ipp + i, false,
				    &fq->raw_grefs[i]);
		if (ret < 0)
			return ret;
	}
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
		int ret = fe_grant_page(fe, fe->dom, fe->data_pfn + i, false,
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
		ret = xenbus_printf(fe->xs, t, path, "%u", fq->gr.grefs[i]);
	}
	snprintf(path, sizeof(path), "%s/event-channel", dir);
	return ret ?: xenbus_printf(fe->xs, t, path, "%d", fq->gr.port);
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

int fe_write_state(struct frontend *fe, int state)
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
		ret = fe_write_state(fe, XenbusStateInitialising);
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
		fe_write_state(fe, XenbusStateClosed);
		return -ECONNREFUSED;
	}
	ret = read_disk_properties(fe);
	if (ret < 0)
		return ret;
	return fe_write_state(fe, XenbusStateConnected);
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

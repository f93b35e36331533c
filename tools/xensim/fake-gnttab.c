// SPDX-License-Identifier: MIT
/*
 * Fake libxengnttab.so.1 for xensim: grant maps and grant copies against
 * the simulated domains in $XENSIM_DIR, with the checks Xen makes. The
 * caller's own domain is $XENSIM_DOMID (default 0). The version script
 * fake-gnttab.map gives every symbol the node the real library uses.
 *
 * Every mapped page is also recorded in the handle's ledger (sim-ledger.c),
 * so that if the process dies without unmapping, the simulated host can
 * release its pins the way the kernel's gntdev does at exit.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdint.h>
#include <xen/grant_table.h>
#include <xengnttab.h>

#include "tools/xensim/sim-internal.h"

/* One map_* call's pages: unmap() takes them back as a whole. */
struct gnt_mapping {
	struct gnt_mapping *next;
	uint8_t *addr;
	uint32_t count;
	struct sim_dom **doms;
	uint32_t *refs;
	uint32_t *slots; /* in the handle's ledger */
	int64_t notify_offset;
	int64_t notify_port;
	int prot;
};

struct xengntdev_handle {
	struct sim_cache cache;
	struct sim_ledger ledger;
	uint32_t domid;
	int fd;
	pthread_mutex_t lock;
	struct gnt_mapping *maps;
};

xengnttab_handle *xengnttab_open(struct xentoollog_logger *logger,
				 unsigned open_flags)
{
	const char *dir = getenv("XENSIM_DIR");
	xengnttab_handle *h;
	int ret;

	if (!dir || !*dir) {
		/* What the real library says without /dev/xen/gntdev. */
		errno = ENOENT;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sim_cache_init(&h->cache, dir);
	if (ret) {
		free(h);
		errno = -ret;
		return NULL;
	}
	ret = sim_ledger_open(&h->ledger, dir);
	if (ret) {
		sim_cache_fini(&h->cache);
		free(h);
		errno = -ret;
		return NULL;
	}
	h->domid = sim_env_domid();
	h->fd = eventfd(0, EFD_CLOEXEC);
	pthread_mutex_init(&h->lock, NULL);
	return h;
}

int xengnttab_set_max_grants(xengnttab_handle *xgt, uint32_t nr_grants)
{
	return 0;
}

int xengnttab_fd(xengnttab_handle *xgt)
{
	return xgt->fd;
}

static void release_pages(xengnttab_handle *h, struct gnt_mapping *m,
			  uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		sim_ledger_remove(&h->ledger, m->slots[i]);
		sim_grant_unpin(m->doms[i], m->refs[i], true);
		sim_dom_remove_if_released(h->cache.dir, m->doms[i]);
	}
}

static void free_mapping(struct gnt_mapping *m)
{
	free(m->doms);
	free(m->refs);
	free(m->slots);
	free(m);
}

static struct gnt_mapping *alloc_mapping(uint32_t count)
{
	struct gnt_mapping *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->doms = calloc(count, sizeof(*m->doms));
	m->refs = calloc(count, sizeof(*m->refs));
	m->slots = calloc(count, sizeof(*m->slots));
	if (!m->doms || !m->refs || !m->slots) {
		free_mapping(m);
		return NULL;
	}
	m->count = count;
	m->notify_offset = -1;
	m->notify_port = -1;
	return m;
}

static int status_to_errno(int st)
{
	switch (st) {
	case GNTST_bad_domain:
		return ESRCH;
	case GNTST_no_space:
		return ENOSPC;
	default:
		return EINVAL;
	}
}

/* Pin page @i of @m and map it at its place in the reserved area. */
static int map_one(xengnttab_handle *h, struct gnt_mapping *m, uint32_t i,
		   uint32_t domid, int prot)
{
	uint32_t frame;
	void *at;
	int ret, st;

	ret = sim_cache_get(&h->cache, domid, &m->doms[i]);
	if (ret)
		return ret == -ENOENT ? ESRCH : -ret;
	st = sim_grant_pin(m->doms[i], h->domid, m->refs[i], prot & PROT_WRITE,
			   true, &frame);
	if (st)
		return status_to_errno(st);
	ret = sim_ledger_add(&h->ledger, m->doms[i], m->refs[i]);
	if (ret < 0) {
		sim_grant_unpin(m->doms[i], m->refs[i], true);
		return -ret;
	}
	m->slots[i] = (uint32_t)ret;
	at = mmap(m->addr + (size_t)i * XENSIM_PAGE_SIZE, XENSIM_PAGE_SIZE,
		  prot, MAP_SHARED | MAP_FIXED, m->doms[i]->memfd,
		  (off_t)frame * XENSIM_PAGE_SIZE);
	if (at == MAP_FAILED) {
		ret = errno;
		sim_ledger_remove(&h->ledger, m->slots[i]);
		sim_grant_unpin(m->doms[i], m->refs[i], true);
		return ret;
	}
	return 0;
}

/* All or nothing, like the real gntdev: one failure undoes the rest. */
static void *map_refs(xengnttab_handle *h, uint32_t count,
		      const uint32_t *domids, uint32_t one_domid,
		      const uint32_t *refs, int prot, struct gnt_mapping **out)
{
	size_t len = (size_t)count * XENSIM_PAGE_SIZE;
	struct gnt_mapping *m;
	uint32_t i;
	int err = 0;

	if (!count || count > SIM_NR_GRANTS || !refs ||
	    (prot & ~(PROT_READ | PROT_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	m = alloc_mapping(count);
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->addr =
		mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->addr == MAP_FAILED) {
		err = errno;
		free_mapping(m);
		errno = err;
		return NULL;
	}
	for (i = 0; i < count && !err; i++) {
		m->refs[i] = refs[i];
		err = map_one(h, m, i, domids ? domids[i] : one_domid, prot);
	}
	if (err) {
		munmap(m->addr, len);
		release_pages(h, m, i - 1);
		free_mapping(m);
		errno = err;
		return NULL;
	}
	pthread_mutex_lock(&h->lock);
	m->next = h->maps;
	h->maps = m;
	pthread_mutex_unlock(&h->lock);
	m->prot = prot;
	if (out)
		*out = m;
	return m->addr;
}

void *xengnttab_map_grant_ref(xengnttab_handle *xgt, uint32_t domid,
			      uint32_t ref, int prot)
{
	return map_refs(xgt, 1, NULL, domid, &ref, prot, NULL);
}

void *xengnttab_map_grant_refs(xengnttab_handle *xgt, uint32_t count,
			       uint32_t *domids, uint32_t *refs, int prot)
{
	if (!domids) {
		errno = EINVAL;
		return NULL;
	}
	return map_refs(xgt, count, domids, 0, refs, prot, NULL);
}

void *xengnttab_map_domain_grant_refs(xengnttab_handle *xgt, uint32_t count,
				      uint32_t domid, uint32_t *refs, int prot)
{
	return map_refs(xgt, count, NULL, domid, refs, prot, NULL);
}

void *xengnttab_map_grant_ref_notify(xengnttab_handle *xgt, uint32_t domid,
				     uint32_t ref, int prot,
				     uint32_t notify_offset,
				     evtchn_port_t notify_port)
{
	struct gnt_mapping *m;
	void *addr;

	if (notify_offset != (uint32_t)-1 &&
	    notify_offset >= XENSIM_PAGE_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	addr = map_refs(xgt, 1, NULL, domid, &ref, prot, &m);
	if (addr) {
		if (notify_offset != (uint32_t)-1)
			m->notify_offset = notify_offset;
		if (notify_port != (evtchn_port_t)-1)
			m->notify_port = notify_port;
	}
	return addr;
}

static struct gnt_mapping *take_mapping(xengnttab_handle *h, void *addr,
					uint32_t count)
{
	struct gnt_mapping **pp, *m = NULL;

	pthread_mutex_lock(&h->lock);
	for (pp = &h->maps; *pp; pp = &(*pp)->next) {
		if ((*pp)->addr == addr && (*pp)->count == count) {
			m = *pp;
			*pp = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return m;
}

/* What the kernel's gntdev does for a mapping made with _notify. */
static void unmap_notify(xengnttab_handle *h, struct gnt_mapping *m)
{
	struct sim_dom *self;

	if (m->notify_offset >= 0 && (m->prot & PROT_WRITE))
		m->addr[m->notify_offset] = 0;
	if (m->notify_port >= 0 && !sim_cache_get(&h->cache, h->domid, &self))
		sim_port_send(&h->cache, self, (uint32_t)m->notify_port);
}

static void unmap_mapping(xengnttab_handle *h, struct gnt_mapping *m)
{
	unmap_notify(h, m);
	munmap(m->addr, (size_t)m->count * XENSIM_PAGE_SIZE);
	release_pages(h, m, m->count);
	free_mapping(m);
}

int xengnttab_unmap(xengnttab_handle *xgt, void *start_address, uint32_t count)
{
	struct gnt_mapping *m = take_mapping(xgt, start_address, count);

	if (!m) {
		errno = EINVAL;
		return -1;
	}
	unmap_mapping(xgt, m);
	return 0;
}

/*
 * Resolve one side of a copy: a local pointer, or a pinned foreign page
 * that must lie within one 4 KiB frame.
 */
static int resolve_side(xengnttab_handle *h, union xengnttab_copy_ptr *p,
			bool is_gref, bool write, uint16_t len,
			struct sim_dom **dom, uint8_t **out)
{
	uint32_t frame;
	int st;

	*dom = NULL;
	if (!is_gref) {
		*out = p->virt;
		return GNTST_okay;
	}
	if ((uint32_t)p->foreign.offset + len > XENSIM_PAGE_SIZE)
		return GNTST_bad_copy_arg;
	if (sim_cache_get(&h->cache, p->foreign.domid, dom))
		return GNTST_bad_domain;
	st = sim_grant_pin(*dom, h->domid, p->foreign.ref, write, false,
			   &frame);
	if (st) {
		*dom = NULL;
		return st;
	}
	*out = (*dom)->mem + (size_t)frame * XENSIM_PAGE_SIZE +
	       p->foreign.offset;
	return GNTST_okay;
}

static int16_t copy_segment(xengnttab_handle *h,
			    xengnttab_grant_copy_segment_t *seg)
{
	struct sim_dom *sdom = NULL, *ddom = NULL;
	uint8_t *src, *dst;
	int st;

	st = resolve_side(h, &seg->source, seg->flags & GNTCOPY_source_gref,
			  false, seg->len, &sdom, &src);
	if (!st)
		st = resolve_side(h, &seg->dest, seg->flags & GNTCOPY_dest_gref,
				  true, seg->len, &ddom, &dst);
	if (!st)
		memmove(dst, src, seg->len);
	if (sdom)
		sim_grant_unpin(sdom, seg->source.foreign.ref, false);
	if (ddom)
		sim_grant_unpin(ddom, seg->dest.foreign.ref, false);
	return (int16_t)st;
}

int xengnttab_grant_copy(xengnttab_handle *xgt, uint32_t count,
			 xengnttab_grant_copy_segment_t *segs)
{
	uint32_t i;

	if (count && !segs) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < count; i++)
		segs[i].status = copy_segment(xgt, &segs[i]);
	return 0;
}

int xengnttab_close(xengnttab_handle *xgt)
{
	struct gnt_mapping *m;

	if (!xgt)
		return 0;
	while ((m = xgt->maps)) {
		xgt->maps = m->next;
		unmap_mapping(xgt, m);
	}
	if (xgt->fd >= 0)
		close(xgt->fd);
	pthread_mutex_destroy(&xgt->lock);
	sim_ledger_close(&xgt->ledger);
	sim_cache_fini(&xgt->cache);
	free(xgt);
	return 0;
}

/* dma-buf export/import has no simulated counterpart. */
int xengnttab_dmabuf_exp_from_refs(xengnttab_handle *xgt, uint32_t domid,
				   uint32_t flags, uint32_t count,
				   const uint32_t *refs, uint32_t *fd)
{
	errno = EOPNOTSUPP;
	return -1;
}

int xengnttab_dmabuf_exp_wait_released(xengnttab_handle *xgt, uint32_t fd,
				       uint32_t wait_to_ms)
{
	errno = EOPNOTSUPP;
	return -1;
}

int xengnttab_dmabuf_imp_to_refs(xengnttab_handle *xgt, uint32_t domid,
				 uint32_t fd, uint32_t count, uint32_t *refs)
{
	errno = EOPNOTSUPP;
	return -1;
}

int xengnttab_dmabuf_imp_release(xengnttab_handle *xgt, uint32_t fd)
{
	errno = EOPNOTSUPP;
	return -1;
}

/*
 * Sharing pages out (gntalloc) is what a frontend does; the simulated
 * guests use xensim.h for that, so the backend-side fake refuses, as the
 * real library does where /dev/xen/gntalloc is missing.
 */
xengntshr_handle *xengntshr_open(struct xentoollog_logger *logger,
				 unsigned open_flags)
{
	errno = ENOENT;
	return NULL;
}

int xengntshr_close(xengntshr_handle *xgs)
{
	return 0;
}

int xengntshr_fd(xengntshr_handle *xgs)
{
	errno = EBADF;
	return -1;
}

void *xengntshr_share_pages(xengntshr_handle *xgs, uint32_t domid, int count,
			    uint32_t *refs, int writable)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void *xengntshr_share_page_notify(xengntshr_handle *xgs, uint32_t domid,
				  uint32_t *ref, int writable,
				  uint32_t notify_offset,
				  evtchn_port_t notify_port)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int xengntshr_unshare(xengntshr_handle *xgs, void *start_address,
		      uint32_t count)
{
	errno = EOPNOTSUPP;
	return -1;
}

// SPDX-License-Identifier: MIT
/*
 * xensim: the guest's handle on its own domain — its memory, its grant
 * table and its event channels (the API in xensim.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "tools/xensim/sim-internal.h"
#include "tools/xensim/xensim.h"

struct xensim_domain {
	struct sim_cache cache;
	struct sim_dom *self;
	struct sim_waker waker;
	uint32_t grant_hint;
};

int xensim_domain_open(const char *dir, uint32_t domid,
		       struct xensim_domain **out)
{
	struct xensim_domain *d;
	int ret;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->waker.fd = -1;
	ret = sim_cache_init(&d->cache, dir);
	if (ret) {
		free(d);
		return ret;
	}
	ret = sim_cache_get(&d->cache, domid, &d->self);
	if (!ret)
		ret = sim_waker_open(&d->waker, dir);
	if (ret) {
		xensim_domain_close(d);
		return ret;
	}
	*out = d;
	return 0;
}

void xensim_domain_close(struct xensim_domain *d)
{
	if (!d)
		return;
	if (d->self && d->waker.fd >= 0)
		sim_port_close_all(&d->cache, d->self, &d->waker);
	sim_waker_close(&d->waker);
	sim_cache_fini(&d->cache);
	free(d);
}

uint32_t xensim_domain_id(const struct xensim_domain *d)
{
	return d->self->domid;
}

uint32_t xensim_domain_nr_pages(const struct xensim_domain *d)
{
	return d->self->sh->hdr.nr_pages;
}

void *xensim_domain_page(struct xensim_domain *d, uint32_t pfn)
{
	if (pfn >= d->self->sh->hdr.nr_pages || !d->self->mem)
		return NULL;
	return d->self->mem + (size_t)pfn * XENSIM_PAGE_SIZE;
}

int xensim_grant_access(struct xensim_domain *d, uint32_t peer, uint32_t pfn,
			bool readonly)
{
	return sim_grant_access(d->self, &d->grant_hint, peer, pfn, readonly);
}

int xensim_grant_end(struct xensim_domain *d, uint32_t ref)
{
	int ret = sim_grant_end(d->self, ref);

	/* Still mapped: perhaps only by a process that died holding it. */
	if (ret == -EBUSY && sim_reap_orphaned_maps(d->cache.dir) > 0)
		ret = sim_grant_end(d->self, ref);
	return ret;
}

int xensim_evtchn_alloc_unbound(struct xensim_domain *d, uint32_t remote)
{
	return sim_port_alloc_unbound(d->cache.dir, d->self, &d->waker, remote);
}

int xensim_evtchn_fd(struct xensim_domain *d)
{
	return d->waker.fd;
}

int xensim_evtchn_pending(struct xensim_domain *d)
{
	return sim_port_pending(&d->waker);
}

int xensim_evtchn_read(struct xensim_domain *d, uint32_t *ports, unsigned int n)
{
	int got = sim_port_read(&d->waker, ports, n);

	return got == 0 ? -EAGAIN : got;
}

int xensim_evtchn_unmask(struct xensim_domain *d, uint32_t port)
{
	return sim_port_unmask(d->self, &d->waker, port);
}

int xensim_evtchn_notify(struct xensim_domain *d, uint32_t port)
{
	return sim_port_notify(&d->cache, d->self, &d->waker, port);
}

int xensim_evtchn_close(struct xensim_domain *d, uint32_t port)
{
	return sim_port_close(&d->cache, d->self, &d->waker, port);
}

int xensim_evtchn_is_connected(struct xensim_domain *d, uint32_t port)
{
	int st = sim_port_state(d->self, port);

	if (st < 0 || st == SIM_PORT_FREE)
		return -EINVAL;
	return st == SIM_PORT_INTERDOMAIN;
}

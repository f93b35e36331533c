// SPDX-License-Identifier: MIT
/*
 * Fake libxenevtchn.so.1 for xensim: event channels between the caller's
 * domain ($XENSIM_DOMID, default 0) and the simulated domains in
 * $XENSIM_DIR. xenevtchn_fd() reads as /dev/xen/evtchn does: each
 * delivered port once, as a 32-bit number, as many in one read as are
 * queued; it polls readable while one is. Unlike the device it takes no
 * writes: ports are unmasked by xenevtchn_unmask() (see sim-evtchn.c).
 * The version script fake-evtchn.map gives every symbol the node the real
 * library uses.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <xenevtchn.h>

#include "tools/xensim/sim-internal.h"

struct xenevtchn_handle {
	struct sim_cache cache;
	struct sim_dom *self;
	struct sim_waker waker;
};

static int result(int ret)
{
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

static int attach_own_domain(xenevtchn_handle *h)
{
	uint32_t domid = sim_env_domid();
	int ret;

	ret = sim_cache_get(&h->cache, domid, &h->self);
	if (ret == -ENOENT && domid == 0) {
		/* dom0 always exists; make its table if nobody has yet. */
		ret = sim_dom_create(h->cache.dir, 0, 0);
		if (!ret || ret == -EEXIST)
			ret = sim_cache_get(&h->cache, domid, &h->self);
	}
	return ret;
}

xenevtchn_handle *xenevtchn_open(struct xentoollog_logger *logger,
				 unsigned int flags)
{
	const char *dir = getenv("XENSIM_DIR");
	xenevtchn_handle *h;
	int ret;

	if (!dir || !*dir) {
		/* What the real library says without /dev/xen/evtchn. */
		errno = ENOENT;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->waker.fd = -1;
	ret = sim_cache_init(&h->cache, dir);
	if (ret) {
		free(h);
		errno = -ret;
		return NULL;
	}
	ret = attach_own_domain(h);
	if (!ret)
		ret = sim_waker_open(&h->waker, dir);
	if (ret) {
		sim_waker_close(&h->waker);
		sim_cache_fini(&h->cache);
		free(h);
		errno = -ret;
		return NULL;
	}
	return h;
}

/* Adopting an inherited evtchn fd (live update) has no simulated form. */
xenevtchn_handle *xenevtchn_fdopen(struct xentoollog_logger *logger, int fd,
				   unsigned open_flags)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int xenevtchn_close(xenevtchn_handle *xce)
{
	if (!xce)
		return 0;
	sim_port_close_all(&xce->cache, xce->self, &xce->waker);
	sim_waker_close(&xce->waker);
	sim_cache_fini(&xce->cache);
	free(xce);
	return 0;
}

int xenevtchn_fd(xenevtchn_handle *xce)
{
	return xce->waker.fd;
}

int xenevtchn_notify(xenevtchn_handle *xce, evtchn_port_t port)
{
	return result(
		sim_port_notify(&xce->cache, xce->self, &xce->waker, port));
}

xenevtchn_port_or_error_t xenevtchn_bind_unbound_port(xenevtchn_handle *xce,
						      uint32_t domid)
{
	return result(sim_port_alloc_unbound(xce->cache.dir, xce->self,
					     &xce->waker, domid));
}

xenevtchn_port_or_error_t xenevtchn_bind_interdomain(xenevtchn_handle *xce,
						     uint32_t domid,
						     evtchn_port_t remote_port)
{
	return result(sim_port_bind_interdomain(
		&xce->cache, xce->self, &xce->waker, domid, remote_port));
}

/* A VIRQ port that never fires: only xenstored's (in the shim) does. */
xenevtchn_port_or_error_t xenevtchn_bind_virq(xenevtchn_handle *xce,
					      unsigned int virq)
{
	return result(
		sim_port_bind_virq(xce->cache.dir, xce->self, &xce->waker));
}

int xenevtchn_unbind(xenevtchn_handle *xce, evtchn_port_t port)
{
	return result(
		sim_port_close(&xce->cache, xce->self, &xce->waker, port));
}

xenevtchn_port_or_error_t xenevtchn_pending(xenevtchn_handle *xce)
{
	return result(sim_port_pending(&xce->waker));
}

int xenevtchn_unmask(xenevtchn_handle *xce, evtchn_port_t port)
{
	return result(sim_port_unmask(xce->self, &xce->waker, port));
}

int xenevtchn_restrict(xenevtchn_handle *xce, domid_t domid)
{
	return 0;
}

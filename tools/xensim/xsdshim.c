// SPDX-License-Identifier: MIT
/*
 * xsdshim.so: LD_PRELOADed into the packaged xenstored so that it runs on
 * a machine without Xen, as the xenstored of a simulated host.
 *
 * - xc_interface_open/close succeed; xc_domain_getinfo answers from
 *   $XENSIM_DIR (a domain exists while its xensim state does, and is dying
 *   once xensim_domain_destroy ran), so xenstored and xensim agree.
 * - The gnttab calls xenstored makes (mapping an introduced domain's ring
 *   page) get anonymous pages: simulated guests do not speak xenbus.
 * - The evtchn handle's fd is an abstract datagram socket that
 *   xensim_domain_destroy pokes: that is VIRQ_DOM_EXC, which makes
 *   xenstored look at its domains and fire @releaseDomain.
 * - open() of /proc/xen/xsd_kva and /proc/xen/xsd_port goes to the files
 *   named by $XSDSHIM_KVA and $XSDSHIM_PORT (default: in
 *   $XENSTORED_RUNDIR).
 *
 * These definitions carry no version, which satisfies the versioned
 * references in xenstored; fake-* libraries are not involved here.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xenctrl.h>
#include <xenevtchn.h>
#include <xengnttab.h>

#include "tools/xensim/sim-internal.h"

/* Everything the shim overrides; all else stays local (xsdshim.map). */
int open(const char *path, int flags, ...);
int open64(const char *path, int flags, ...);

xc_interface *xc_interface_open(xentoollog_logger *logger,
				xentoollog_logger *dombuild_logger,
				unsigned open_flags)
{
	return calloc(1, 64);
}

int xc_interface_close(xc_interface *xch)
{
	free(xch);
	return 0;
}

static bool domain_state(uint32_t domid, bool *dying)
{
	const char *dir = getenv("XENSIM_DIR");

	*dying = false;
	if (!dir || !*dir || domid == 0)
		return true;
	return sim_dom_exists(dir, domid, dying);
}

/*
 * xenstored asks for one domain at a time and checks the domid it gets
 * back, so answering only for @first_domid itself is enough.
 */
int xc_domain_getinfo(xc_interface *xch, uint32_t first_domid,
		      unsigned int max_doms, xc_dominfo_t *info)
{
	bool dying;

	if (!max_doms || !info)
		return 0;
	if (!domain_state(first_domid, &dying))
		return 0;
	memset(info, 0, sizeof(*info));
	info->domid = first_domid;
	info->dying = dying;
	info->running = !dying;
	info->nr_online_vcpus = 1;
	return 1;
}

struct xengntdev_handle {
	int unused;
};

xengnttab_handle *xengnttab_open(struct xentoollog_logger *logger,
				 unsigned open_flags)
{
	return calloc(1, sizeof(struct xengntdev_handle));
}

int xengnttab_close(xengnttab_handle *xgt)
{
	free(xgt);
	return 0;
}

int xengnttab_set_max_grants(xengnttab_handle *xgt, uint32_t nr_grants)
{
	return 0;
}

/* An introduced domain's xenstore ring: an idle page nobody writes. */
void *xengnttab_map_grant_ref(xengnttab_handle *xgt, uint32_t domid,
			      uint32_t ref, int prot)
{
	void *p = mmap(NULL, XENSIM_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int xengnttab_unmap(xengnttab_handle *xgt, void *start_address, uint32_t count)
{
	return munmap(start_address, (size_t)count * XENSIM_PAGE_SIZE);
}

struct xenevtchn_handle {
	int fd;
	uint32_t next_port;
};

/* Bind the VIRQ_DOM_EXC socket of this host, if there is a host. */
static void bind_virq_socket(int fd)
{
	const char *dir = getenv("XENSIM_DIR");
	char name[128];

	if (dir && *dir && !sim_virq_name(dir, name, sizeof(name)))
		(void)sim_abstract_bind(fd, name);
}

xenevtchn_handle *xenevtchn_open(struct xentoollog_logger *logger,
				 unsigned int flags)
{
	xenevtchn_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->fd < 0) {
		free(h);
		return NULL;
	}
	bind_virq_socket(h->fd);
	h->next_port = 1;
	return h;
}

xenevtchn_handle *xenevtchn_fdopen(struct xentoollog_logger *logger, int fd,
				   unsigned open_flags)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int xenevtchn_close(xenevtchn_handle *xce)
{
	if (xce) {
		close(xce->fd);
		free(xce);
	}
	return 0;
}

int xenevtchn_fd(xenevtchn_handle *xce)
{
	return xce->fd;
}

xenevtchn_port_or_error_t xenevtchn_bind_virq(xenevtchn_handle *xce,
					      unsigned int virq)
{
	return SIM_VIRQ_PORT;
}

/* Domains' xenstore channels: local numbers that never fire. */
xenevtchn_port_or_error_t xenevtchn_bind_interdomain(xenevtchn_handle *xce,
						     uint32_t domid,
						     evtchn_port_t remote_port)
{
	if (xce->next_port >= SIM_VIRQ_PORT)
		xce->next_port = 1;
	return (xenevtchn_port_or_error_t)xce->next_port++;
}

int xenevtchn_unbind(xenevtchn_handle *xce, evtchn_port_t port)
{
	return 0;
}

int xenevtchn_notify(xenevtchn_handle *xce, evtchn_port_t port)
{
	return 0;
}

/*
 * xenstored calls this only when the fd polled readable and treats -1 as
 * fatal, so it always answers with the VIRQ port (a spurious domain check
 * is harmless).
 */
xenevtchn_port_or_error_t xenevtchn_pending(xenevtchn_handle *xce)
{
	char buf[16];

	while (recv(xce->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
	return SIM_VIRQ_PORT;
}

int xenevtchn_unmask(xenevtchn_handle *xce, evtchn_port_t port)
{
	return 0;
}

static const char *redirect(const char *path)
{
	static const struct {
		const char *path, *env, *leaf;
	} map[] = {
		{ "/proc/xen/xsd_kva", "XSDSHIM_KVA", "xsd_kva" },
		{ "/proc/xen/xsd_port", "XSDSHIM_PORT", "xsd_port" },
	};
	static __thread char buf[4096];
	const char *to, *rundir;
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(path, map[i].path))
			continue;
		to = getenv(map[i].env);
		if (to && *to)
			return to;
		rundir = getenv("XENSTORED_RUNDIR");
		if (!rundir || !*rundir)
			return path;
		snprintf(buf, sizeof(buf), "%s/%s", rundir, map[i].leaf);
		return buf;
	}
	return path;
}

typedef int (*open_fn)(const char *, int, ...);

static int open_redirected(const char *sym, const char *path, int flags,
			   mode_t mode)
{
	open_fn real = (open_fn)dlsym(RTLD_NEXT, sym);

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(path ? redirect(path) : path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return open_redirected("open", path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return open_redirected("open64", path, flags, mode);
}

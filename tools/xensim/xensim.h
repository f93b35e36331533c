/* SPDX-License-Identifier: MIT */
/*
 * xensim: the simulated hypervisor's interface for simulated guests and the
 * simulated toolstack.
 *
 * One simulated host lives in a state directory named by $XENSIM_DIR. Each
 * domain there has guest memory (a shared-memory file of pages), a grant
 * table and an event-channel table, all shared between processes. The fake
 * libxengnttab/libxenevtchn that the backend loads read the same state, so
 * the real daemon binary sees grants and event channels that behave like
 * Xen's: an ungranted or revoked ref fails, a read-only grant cannot be
 * written, an event channel's fd polls readable exactly while a port is
 * pending.
 *
 * Functions return 0 (or a non-negative value) on success and -errno on
 * failure; none of them prints or exits.
 */
#ifndef XENSIM_H
#define XENSIM_H

#include <stdbool.h>
#include <stdint.h>

#define XENSIM_PAGE_SIZE 4096u

struct xensim_domain;

/* The state directory from $XENSIM_DIR, or NULL when it is not set. */
const char *xensim_dir(void);

/*
 * Toolstack: create domain @domid with @nr_pages pages of zeroed guest
 * memory, an empty grant table and an empty event-channel table. -EEXIST if
 * the domain exists.
 */
int xensim_domain_create(const char *dir, uint32_t domid, uint32_t nr_pages);

/*
 * Host: make @dir a simulated host (creating it if needed) with dom0, the
 * backend's domain, which has an event-channel table but no guest memory.
 * Idempotent; xensim-host start calls it. A domain must be created before
 * the toolstack introduces it to xenstored: xenstored's view of which
 * domains exist (xc_domain_getinfo in the shim) comes from @dir.
 */
int xensim_host_init(const char *dir);

/*
 * Toolstack: the domain dies. Grant copies and new mappings of its grants
 * fail from now on (GNTST_bad_domain), its event channels are closed, and
 * its state is kept, as Xen keeps a dying domain, until the last mapping of
 * its memory is unmapped; then its files are removed. It also raises
 * VIRQ_DOM_EXC towards this host's xenstored, which then releases the
 * domain if it was introduced and fires @releaseDomain, as on Xen.
 */
int xensim_domain_destroy(const char *dir, uint32_t domid);

/*
 * Guest: attach to the domain's memory, grant table and event channels.
 * Use a handle from one thread at a time. Closing it closes the event
 * channels it allocated; grants stay, as they belong to the domain.
 */
int xensim_domain_open(const char *dir, uint32_t domid,
		       struct xensim_domain **out);
void xensim_domain_close(struct xensim_domain *d);

uint32_t xensim_domain_id(const struct xensim_domain *d);
uint32_t xensim_domain_nr_pages(const struct xensim_domain *d);
/* Guest: the page at frame @pfn of its own memory, or NULL past the end. */
void *xensim_domain_page(struct xensim_domain *d, uint32_t pfn);

/*
 * Guest: grant @peer access to frame @pfn (like gnttab_grant_foreign_access).
 * Returns the grant reference (> 0) or -ENOSPC when the table is full.
 */
int xensim_grant_access(struct xensim_domain *d, uint32_t peer, uint32_t pfn,
			bool readonly);
/*
 * Guest: revoke grant @ref. -EBUSY while the peer still has it mapped (the
 * grant stays valid then, as in Xen); -EINVAL for a ref not in use.
 * Mappings made by a process that has since exited (even by SIGKILL) do
 * not count: the kernel's gntdev unmaps them when the process dies, and
 * xensim releases them the first time someone looks.
 */
int xensim_grant_end(struct xensim_domain *d, uint32_t ref);

/*
 * Guest: allocate an unbound event-channel port that @remote may bind to
 * (like EVTCHNOP_alloc_unbound). Returns the port (> 0).
 */
int xensim_evtchn_alloc_unbound(struct xensim_domain *d, uint32_t remote);
/* Guest: a file descriptor that polls readable while any port is pending. */
int xensim_evtchn_fd(struct xensim_domain *d);
/* Guest: the next pending port (now masked), or -EAGAIN when none is. */
int xensim_evtchn_pending(struct xensim_domain *d);
/*
 * Guest: up to @n pending ports (now masked) in one system call, as an
 * upcall finds every pending port at once: how many (> 0), or -EAGAIN
 * when none is.
 */
int xensim_evtchn_read(struct xensim_domain *d, uint32_t *ports,
		       unsigned int n);
int xensim_evtchn_unmask(struct xensim_domain *d, uint32_t port);
/* Guest: send an event to the other end of @port. */
int xensim_evtchn_notify(struct xensim_domain *d, uint32_t port);
int xensim_evtchn_close(struct xensim_domain *d, uint32_t port);
/*
 * Guest: 1 while @port is connected to a peer, 0 while it is unbound (not
 * yet bound, or the peer closed its end or died), -EINVAL for a port this
 * domain does not have.
 */
int xensim_evtchn_is_connected(struct xensim_domain *d, uint32_t port);

/*
 * Inspection, for tests and the toolstack: how many mappings of @domid's
 * grants other domains hold right now (a grant mapped twice counts twice),
 * and how many ports other domains hold towards @domid (bound to its ports,
 * or left unbound after @domid closed its end or died: the peer still has
 * to unbind them). Valid for a dying domain, and after its files are gone
 * (then mapped_grants is 0 and dying is true); -ENOENT for a domain that
 * never existed.
 */
struct xensim_domain_stats {
	uint32_t mapped_grants;
	uint32_t bound_ports;
	bool dying;
};
int xensim_domain_stats(const char *dir, uint32_t domid,
			struct xensim_domain_stats *out);

#endif /* XENSIM_H */

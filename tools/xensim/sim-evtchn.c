// SPDX-License-Identifier: MIT
/*
 * xensim: event channels. A port lives in its domain's table; an
 * interdomain channel is two ports naming each other. Binding and closing
 * change both ends, so they hold the host's lock file; notify and unmask
 * touch only atomics and, when an event is delivered, one write.
 *
 * Delivery is the kernel's /dev/xen/evtchn protocol, so that a backend
 * reads its events in simulation exactly as it will under Xen: every
 * handle owns a FIFO, $XENSIM_DIR/ev/<pid>.<id>, which its fd reads; a
 * read returns whole 32-bit port numbers, as many as are queued and fit,
 * one per delivered event. A port is delivered when it is raised while
 * unmasked, and delivery masks it (as the kernel's handler does), so each
 * port is queued at most once until its owner unmasks it; raised while
 * masked it is only marked pending, and the unmask delivers it. The mask
 * and the pending mark are one atomic word, so a raise and an unmask
 * racing from two processes deliver exactly once.
 *
 * Senders keep the FIFOs they write to open (struct sim_waker's peers),
 * so that a notification costs one write, as the kernel's costs one
 * hypercall; they open them read-write, so that a write to an owner that
 * died fills a pipe nobody reads instead of raising SIGPIPE.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tools/xensim/sim-internal.h"

/* struct sim_port's ev word */
#define EV_MASKED 1u /* delivered, not yet unmasked */
#define EV_PENDING 2u /* raised since: deliver at the unmask */

int sim_host_lock(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return -errno;
		}
	}
	return fd;
}

void sim_host_unlock(int fd)
{
	close(fd);
}

static socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	size_t len = strlen(name);

	if (len > sizeof(sa->sun_path) - 1)
		len = sizeof(sa->sun_path) - 1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, name, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
}

/*
 * Send a wakeup datagram to the abstract socket @name: how xensim raises
 * xenstored's VIRQ_DOM_EXC in the shim, which polls a socket of its own.
 */
static void send_datagram(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	(void)!sendto(fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL,
		      (struct sockaddr *)&sa, len);
	close(fd);
}

static int fifo_path(char *buf, size_t len, const char *dir, uint32_t pid,
		     uint32_t id)
{
	int n = snprintf(buf, len, "%s/ev/%u.%u", dir, pid, id);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/*
 * The id makes the FIFO's name unique on the host for good: pids come
 * back, and a sender still holding the FIFO of a dead owner open must not
 * mistake a new owner with the same pid for it.
 */
static uint32_t new_waker_id(void)
{
	uint32_t id = 0;

	while (id == 0)
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint32_t)getpid() ^ (uint32_t)rand();
	return id;
}

int sim_waker_open(struct sim_waker *w, const char *dir)
{
	char path[4096];
	int ret;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->dir = strdup(dir);
	if (!w->dir)
		return -ENOMEM;
	w->pid = (uint32_t)getpid();
	w->id = new_waker_id();
	snprintf(path, sizeof(path), "%s/ev", dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		goto fail;
	}
	ret = fifo_path(path, sizeof(path), dir, w->pid, w->id);
	if (ret)
		goto fail;
	if (mkfifo(path, 0600) < 0) {
		ret = -errno;
		goto fail;
	}
	/* Read-write: the FIFO never reads as closed for want of writers. */
	w->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (w->fd < 0) {
		ret = -errno;
		unlink(path);
		goto fail;
	}
	return 0;
fail:
	free(w->dir);
	w->dir = NULL;
	return ret;
}

void sim_waker_close(struct sim_waker *w)
{
	char path[4096];

	for (unsigned int i = 0; i < SIM_WAKER_PEERS; i++)
		if (w->peers[i].fd > 0)
			close(w->peers[i].fd);
	if (w->fd >= 0) {
		if (!fifo_path(path, sizeof(path), w->dir, w->pid, w->id))
			unlink(path);
		close(w->fd);
	}
	free(w->dir);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}

/* The FIFO of the handle (@pid, @id), opened for writing, or -errno. */
static int open_peer(const char *dir, uint32_t pid, uint32_t id)
{
	char path[4096];
	int fd, ret = fifo_path(path, sizeof(path), dir, pid, id);

	if (ret)
		return ret;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* @via's open FIFO of (@pid, @id), opened and kept on first use. */
static int peer_fd(struct sim_waker *via, uint32_t pid, uint32_t id)
{
	struct sim_waker_peer *victim;
	int fd;

	for (unsigned int i = 0; i < SIM_WAKER_PEERS; i++)
		if (via->peers[i].fd > 0 && via->peers[i].pid == pid &&
		    via->peers[i].id == id)
			return via->peers[i].fd;
	fd = open_peer(via->dir, pid, id);
	if (fd < 0)
		return fd;
	victim = &via->peers[via->next_victim++ % SIM_WAKER_PEERS];
	if (victim->fd > 0)
		close(victim->fd);
	*victim = (struct sim_waker_peer){ .pid = pid, .id = id, .fd = fd };
	return fd;
}

/*
 * No @via: gntdev's unmap notification. An owner that is gone needs
 * nothing; a full FIFO belongs to an owner that stopped reading.
 */
void sim_deliver(struct sim_waker *via, const char *dir, uint32_t pid,
		 uint32_t id, uint32_t port)
{
	int fd, once = -1;

	if (via && via->pid == pid && via->id == id)
		fd = via->fd;
	else if (via)
		fd = peer_fd(via, pid, id);
	else
		fd = once = open_peer(dir, pid, id);
	if (fd >= 0)
		(void)!write(fd, &port, sizeof(port));
	if (once >= 0)
		close(once);
}

int sim_port_read(struct sim_waker *w, uint32_t *ports, unsigned int n)
{
	ssize_t got = read(w->fd, ports, (size_t)n * sizeof(*ports));

	if (got < 0)
		return -errno;
	return (int)(got / (ssize_t)sizeof(*ports));
}

static bool owned_by(const struct sim_port *p, const struct sim_waker *w)
{
	return atomic_load(&p->state) != SIM_PORT_FREE &&
	       atomic_load(&p->owner_pid) == w->pid &&
	       atomic_load(&p->owner_id) == w->id;
}

/*
 * A port whose owning process is gone: the kernel would have closed it
 * with the process's /dev/xen/evtchn, so xensim treats it as closed.
 */
bool sim_port_orphaned(const struct sim_port *p)
{
	uint32_t pid = atomic_load(&p->owner_pid);

	return atomic_load(&p->state) != SIM_PORT_FREE && pid != 0 &&
	       kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static struct sim_port *port_of(struct sim_dom *d, uint32_t port)
{
	if (port == 0 || port >= SIM_NR_PORTS)
		return NULL;
	return &d->sh->ports[port];
}

static void set_port(struct sim_port *p, uint32_t state, uint32_t rdom,
		     uint32_t rport, const struct sim_waker *w)
{
	atomic_store(&p->ev, 0);
	atomic_store(&p->remote_dom, rdom);
	atomic_store(&p->remote_port, rport);
	atomic_store(&p->owner_pid, w ? w->pid : 0);
	atomic_store(&p->owner_id, w ? w->id : 0);
	atomic_store(&p->state, state);
}

/* Called with the host lock held. The VIRQ slot stays for the shim. */
static int find_free_port(struct sim_dom *d)
{
	uint32_t i;

	for (i = 1; i < SIM_VIRQ_PORT; i++) {
		if (atomic_load(&d->sh->ports[i].state) != SIM_PORT_FREE)
			continue;
		/* Lets pending() scan only the ports ever handed out. */
		if (atomic_load(&d->sh->hdr.ports_high) <= i)
			atomic_store(&d->sh->hdr.ports_high, i + 1);
		return (int)i;
	}
	return -ENOSPC;
}

static int alloc_port(const char *dir, struct sim_dom *self,
		      const struct sim_waker *w, uint32_t state, uint32_t rdom)
{
	int lock, port;

	if (atomic_load(&self->sh->hdr.dying))
		return -ESRCH;
	lock = sim_host_lock(dir);
	if (lock < 0)
		return lock;
	port = find_free_port(self);
	if (port > 0)
		set_port(&self->sh->ports[port], state, rdom, 0, w);
	sim_host_unlock(lock);
	return port;
}

int sim_port_alloc_unbound(const char *dir, struct sim_dom *self,
			   const struct sim_waker *w, uint32_t remote)
{
	if (remote > 0xffff)
		return -EINVAL;
	return alloc_port(dir, self, w, SIM_PORT_UNBOUND, remote);
}

int sim_port_bind_virq(const char *dir, struct sim_dom *self,
		       const struct sim_waker *w)
{
	return alloc_port(dir, self, w, SIM_PORT_VIRQ, self->domid);
}

/* Deliver @p (port number @port of its domain) to its owner. */
static void deliver_port(struct sim_port *p, uint32_t port,
			 struct sim_waker *via, const char *dir)
{
	uint32_t pid = atomic_load(&p->owner_pid);

	if (pid)
		sim_deliver(via, dir, pid, atomic_load(&p->owner_id), port);
}

/*
 * Raise @p: deliver it if it is unmasked (masking it), else mark it
 * pending for its unmask. A port with no owner only keeps the mark.
 */
static void raise_port(struct sim_port *p, uint32_t port, struct sim_waker *via,
		       const char *dir)
{
	uint32_t ev = atomic_load(&p->ev);
	bool deliver;

	do {
		if (ev & EV_PENDING)
			return;
		deliver = !(ev & EV_MASKED) && atomic_load(&p->owner_pid);
	} while (!atomic_compare_exchange_weak(
		&p->ev, &ev, deliver ? EV_MASKED : EV_MASKED | EV_PENDING));
	if (deliver)
		deliver_port(p, port, via, dir);
}

static void reap_orphaned_peer(struct sim_cache *c, struct sim_port *p,
			       uint32_t port, struct sim_waker *w);

int sim_port_bind_interdomain(struct sim_cache *c, struct sim_dom *self,
			      struct sim_waker *w, uint32_t remote,
			      uint32_t remote_port)
{
	struct sim_port *rp, *lp;
	struct sim_dom *r;
	int lock, port, ret;

	if (remote > 0xffff || remote_port == 0 || remote_port >= SIM_NR_PORTS)
		return -EINVAL;
	ret = sim_cache_get(c, remote, &r);
	if (ret)
		return ret == -ENOENT ? -ESRCH : ret;
	if (atomic_load(&r->sh->hdr.dying) || atomic_load(&self->sh->hdr.dying))
		return -ESRCH;
	lock = sim_host_lock(c->dir);
	if (lock < 0)
		return lock;
	rp = &r->sh->ports[remote_port];
	reap_orphaned_peer(c, rp, remote_port, w);
	port = -EINVAL;
	if (atomic_load(&rp->state) != SIM_PORT_UNBOUND ||
	    atomic_load(&rp->remote_dom) != self->domid)
		goto out;
	port = find_free_port(self);
	if (port < 0)
		goto out;
	lp = &self->sh->ports[port];
	set_port(lp, SIM_PORT_INTERDOMAIN, remote, remote_port, w);
	atomic_store(&rp->remote_dom, self->domid);
	atomic_store(&rp->remote_port, (uint32_t)port);
	atomic_store(&rp->state, SIM_PORT_INTERDOMAIN);
	/*
	 * As Xen does: the new local port starts pending, covering any
	 * notification the remote end sent before the bind.
	 */
	raise_port(lp, (uint32_t)port, w, c->dir);
out:
	sim_host_unlock(lock);
	return port;
}

/* With the host lock held: detach the remote end, then free the port. */
static void close_locked(struct sim_cache *c, struct sim_dom *self,
			 uint32_t port)
{
	struct sim_port *p = &self->sh->ports[port], *rp;
	struct sim_dom *r;

	if (atomic_load(&p->state) == SIM_PORT_INTERDOMAIN &&
	    !sim_cache_get(c, atomic_load(&p->remote_dom), &r)) {
		rp = &r->sh->ports[atomic_load(&p->remote_port)];
		if (atomic_load(&rp->state) == SIM_PORT_INTERDOMAIN &&
		    atomic_load(&rp->remote_dom) == self->domid &&
		    atomic_load(&rp->remote_port) == port) {
			/* The peer is left unbound, waiting for a rebind. */
			atomic_store(&rp->remote_port, 0);
			atomic_store(&rp->state, SIM_PORT_UNBOUND);
		}
	}
	set_port(p, SIM_PORT_FREE, 0, 0, NULL);
}

/*
 * With the host lock held: if @p (port @port) is connected to a port whose
 * owner died (a backend that crashed), close that port so @p can be bound
 * again, and deliver @p to its owner (through @w) if it is masked or
 * pending. The dead owner may have masked @p to deliver it and died before
 * its write: Xen's send is one hypercall, ours two steps. Left so, @p
 * would stay masked with nothing queued, and no later notification would
 * deliver it. A delivery that did arrive is then delivered twice, which
 * the device allows (a port read while it is unmasked already).
 */
static void reap_orphaned_peer(struct sim_cache *c, struct sim_port *p,
			       uint32_t port, struct sim_waker *w)
{
	uint32_t rport = atomic_load(&p->remote_port);
	struct sim_dom *r;

	if (atomic_load(&p->state) != SIM_PORT_INTERDOMAIN || rport == 0 ||
	    rport >= SIM_NR_PORTS ||
	    sim_cache_get(c, atomic_load(&p->remote_dom), &r))
		return;
	if (!sim_port_orphaned(&r->sh->ports[rport]))
		return;
	close_locked(c, r, rport);
	if (atomic_load(&p->ev))
		deliver_port(p, port, w, c->dir);
}

int sim_port_close(struct sim_cache *c, struct sim_dom *self,
		   const struct sim_waker *w, uint32_t port)
{
	struct sim_port *p = port_of(self, port);
	int lock, ret = -EINVAL;

	if (!p)
		return -EINVAL;
	lock = sim_host_lock(c->dir);
	if (lock < 0)
		return lock;
	if (owned_by(p, w)) {
		close_locked(c, self, port);
		ret = 0;
	}
	sim_host_unlock(lock);
	return ret;
}

void sim_port_close_all(struct sim_cache *c, struct sim_dom *self,
			const struct sim_waker *w)
{
	uint32_t i;
	int lock = sim_host_lock(c->dir);

	if (lock < 0)
		return;
	for (i = 1; i < SIM_NR_PORTS; i++)
		if (!w || owned_by(&self->sh->ports[i], w))
			if (atomic_load(&self->sh->ports[i].state) !=
			    SIM_PORT_FREE)
				close_locked(c, self, i);
	sim_host_unlock(lock);
}

/* Raise the far end of @port, if it is still connected to it. */
static int send_event(struct sim_cache *c, struct sim_dom *self, uint32_t port,
		      struct sim_waker *via)
{
	struct sim_port *p = &self->sh->ports[port], *rp;
	uint32_t rport;
	struct sim_dom *r;

	switch (atomic_load(&p->state)) {
	case SIM_PORT_UNBOUND:
		return 0; /* Xen drops it silently */
	case SIM_PORT_INTERDOMAIN:
		break;
	default:
		return -EINVAL;
	}
	if (sim_cache_get(c, atomic_load(&p->remote_dom), &r))
		return 0;
	rport = atomic_load(&p->remote_port);
	if (rport == 0 || rport >= SIM_NR_PORTS)
		return 0;
	rp = &r->sh->ports[rport];
	if (atomic_load(&rp->state) == SIM_PORT_INTERDOMAIN &&
	    atomic_load(&rp->remote_dom) == self->domid &&
	    atomic_load(&rp->remote_port) == port)
		raise_port(rp, rport, via, c->dir);
	return 0;
}

int sim_port_notify(struct sim_cache *c, struct sim_dom *self,
		    struct sim_waker *w, uint32_t port)
{
	struct sim_port *p = port_of(self, port);

	if (!p || !owned_by(p, w))
		return -EINVAL;
	return send_event(c, self, port, w);
}

/* Notify from @port whoever owns it (gntdev's unmap notification). */
int sim_port_send(struct sim_cache *c, struct sim_dom *self, uint32_t port)
{
	if (!port_of(self, port))
		return -EINVAL;
	return send_event(c, self, port, NULL);
}

int sim_port_pending(struct sim_waker *w)
{
	uint32_t port;
	int n = sim_port_read(w, &port, 1);

	if (n < 0)
		return n;
	return n == 1 ? (int)port : -EAGAIN;
}

int sim_port_unmask(struct sim_dom *self, struct sim_waker *w, uint32_t port)
{
	struct sim_port *p = port_of(self, port);
	uint32_t ev;

	if (!p || !owned_by(p, w))
		return -EINVAL;
	ev = atomic_load(&p->ev);
	for (;;) {
		/* Pending since the delivery: deliver again, still masked. */
		uint32_t to = (ev & EV_PENDING) ? EV_MASKED : 0;

		if (!(ev & EV_MASKED))
			return 0;
		if (atomic_compare_exchange_weak(&p->ev, &ev, to))
			break;
	}
	if (ev & EV_PENDING)
		sim_deliver(w, w->dir, w->pid, w->id, port);
	return 0;
}

int sim_port_state(struct sim_dom *self, uint32_t port)
{
	struct sim_port *p = port_of(self, port);

	return p ? (int)atomic_load(&p->state) : -EINVAL;
}

int sim_virq_name(const char *dir, char *buf, size_t len)
{
	char host[64];
	int ret = sim_host_key(dir, host, sizeof(host));

	if (ret)
		return ret;
	snprintf(buf, len, "%s/virq-dom-exc", host);
	return 0;
}

/* Tell xenstored (through the shim) that some domain changed state. */
void sim_virq_dom_exc(const char *dir)
{
	char name[128];

	if (!sim_virq_name(dir, name, sizeof(name)))
		send_datagram(name);
}

/* For the shim, which binds the name above. */
int sim_abstract_bind(int fd, const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);

	return bind(fd, (struct sockaddr *)&sa, len) < 0 ? -errno : 0;
}

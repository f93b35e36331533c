// SPDX-License-Identifier: MIT
/*
 * xensim: event channels. A port lives in its domain's table; an
 * interdomain channel is two ports naming each other. Binding and closing
 * change both ends, so they hold the host's lock file; notify, pending and
 * unmask touch only atomics.
 *
 * Wakeups: every handle owns a datagram socket (struct sim_waker). Raising
 * a port sets its pending bit and, when that bit was clear and the port is
 * not masked, sends one datagram to the owner. pending() masks and clears
 * the port it returns; unmask() re-sends the wakeup if the port became
 * pending meanwhile. Setting a bit before reading the other side's bit
 * (sequentially consistent atomics) is what keeps events from being lost
 * between pending() and unmask().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tools/xensim/sim-internal.h"

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
 * Send the wakeup datagram to @name through @via_fd, or a socket of its
 * own when @via_fd is -1.
 *
 * A datagram stays charged to the socket that sent it until its receiver
 * reads it. Owners that never read (a thousand idle guests, each holding
 * the one wakeup of the event its backend sent at connect) fill the
 * sender's buffer, and then every later wakeup from that socket, to
 * anyone, fails with EAGAIN and is lost: the active guests would wait out
 * their timeouts for each answer. In Xen an event to one domain never
 * depends on another, so a wakeup the handle's own socket cannot send goes
 * through a socket of its own. (A receiver whose queue is full also gives
 * EAGAIN; it has wakeups to read already, and the second try fails the
 * same way, harmlessly. A vanished owner needs nothing either.)
 */
static void send_wake(int via_fd, const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	int fd = via_fd;
	ssize_t sent;

	if (fd < 0)
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sent = sendto(fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL,
		      (struct sockaddr *)&sa, len);
	if (via_fd < 0)
		close(fd);
	else if (sent < 0 && errno == EAGAIN)
		send_wake(-1, name);
}

static void waker_name(char *buf, size_t len, const char *host, uint32_t pid,
		       uint32_t id)
{
	snprintf(buf, len, "%s/%u/%u", host, pid, id);
}

void sim_wake(int via_fd, const char *host, uint32_t pid, uint32_t id)
{
	char name[128];

	waker_name(name, sizeof(name), host, pid, id);
	send_wake(via_fd, name);
}

int sim_waker_open(struct sim_waker *w, const char *dir)
{
	struct sockaddr_un sa;
	char name[128];
	socklen_t len;
	int ret;

	ret = sim_host_key(dir, w->host, sizeof(w->host));
	if (ret)
		return ret;
	w->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->fd < 0)
		return -errno;
	/* The fd number is unique among this process's live handles. */
	w->pid = (uint32_t)getpid();
	w->id = (uint32_t)w->fd;
	waker_name(name, sizeof(name), w->host, w->pid, w->id);
	len = abstract_addr(&sa, name);
	if (bind(w->fd, (struct sockaddr *)&sa, len) < 0) {
		ret = -errno;
		close(w->fd);
		w->fd = -1;
		return ret;
	}
	return 0;
}

void sim_waker_close(struct sim_waker *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

void sim_waker_drain(struct sim_waker *w)
{
	char buf[16];

	while (recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
}

static void wake_self(const struct sim_waker *w)
{
	sim_wake(w->fd, w->host, w->pid, w->id);
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
	atomic_store(&p->pending, 0);
	atomic_store(&p->masked, 0);
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

/* Wake @p's owner, unless the port is masked or has none. */
static void wake_owner(const struct sim_port *p, const struct sim_waker *via)
{
	if (atomic_load(&p->masked) || atomic_load(&p->owner_pid) == 0)
		return;
	sim_wake(via->fd, via->host, atomic_load(&p->owner_pid),
		 atomic_load(&p->owner_id));
}

/* Mark @p pending; wake its owner if that is news and it is unmasked. */
static void raise_port(struct sim_port *p, const struct sim_waker *via)
{
	if (!atomic_exchange(&p->pending, 1))
		wake_owner(p, via);
}

static void reap_orphaned_peer(struct sim_cache *c, struct sim_port *p,
			       const struct sim_waker *w);

int sim_port_bind_interdomain(struct sim_cache *c, struct sim_dom *self,
			      const struct sim_waker *w, uint32_t remote,
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
	reap_orphaned_peer(c, rp, w);
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
	raise_port(lp, w);
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
 * With the host lock held: if @p is connected to a port whose owner died
 * (a backend that crashed), close that port so @p can be bound again, and
 * wake @p's owner (through @w) if @p is pending. The dead owner may have
 * set @p's pending bit and died before sending the wakeup: Xen's send is
 * one hypercall, ours two steps. Left so, the bit would stay set with no
 * wakeup on its way, and no later notification would send one
 * (raise_port() wakes only when the bit was clear).
 */
static void reap_orphaned_peer(struct sim_cache *c, struct sim_port *p,
			       const struct sim_waker *w)
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
	if (atomic_load(&p->pending))
		wake_owner(p, w);
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
		      const struct sim_waker *via)
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
		raise_port(rp, via);
	return 0;
}

int sim_port_notify(struct sim_cache *c, struct sim_dom *self,
		    const struct sim_waker *w, uint32_t port)
{
	struct sim_port *p = port_of(self, port);

	if (!p || !owned_by(p, w))
		return -EINVAL;
	return send_event(c, self, port, w);
}

/* Notify from @port whoever owns it (gntdev's unmap notification). */
int sim_port_send(struct sim_cache *c, struct sim_dom *self, uint32_t port)
{
	struct sim_waker via = { .fd = -1 };

	if (!port_of(self, port))
		return -EINVAL;
	if (sim_host_key(c->dir, via.host, sizeof(via.host)))
		return -EINVAL;
	return send_event(c, self, port, &via);
}

static bool deliverable(const struct sim_port *p)
{
	return atomic_load(&p->pending) && !atomic_load(&p->masked);
}

int sim_port_pending(struct sim_dom *self, struct sim_waker *w)
{
	struct sim_port *p;
	int found = -EAGAIN;
	uint32_t high = atomic_load(&self->sh->hdr.ports_high);
	uint32_t i;

	/* Drain first: a wakeup sent after this is for a bit we will see. */
	sim_waker_drain(w);
	for (i = 1; i < SIM_NR_PORTS; i++) {
		/* Past the ports ever allocated, only the VIRQ slot remains. */
		if (i >= high && i < SIM_VIRQ_PORT)
			i = SIM_VIRQ_PORT;
		p = &self->sh->ports[i];
		if (!owned_by(p, w) || !deliverable(p))
			continue;
		if (found > 0) {
			/* More to deliver: stay readable for the next call. */
			wake_self(w);
			break;
		}
		atomic_store(&p->masked, 1);
		atomic_store(&p->pending, 0);
		found = (int)i;
	}
	return found;
}

int sim_port_unmask(struct sim_dom *self, const struct sim_waker *w,
		    uint32_t port)
{
	struct sim_port *p = port_of(self, port);

	if (!p || !owned_by(p, w))
		return -EINVAL;
	atomic_store(&p->masked, 0);
	if (atomic_load(&p->pending))
		wake_self(w);
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
		send_wake(-1, name);
}

/* For the shim, which binds the name above. */
int sim_abstract_bind(int fd, const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);

	return bind(fd, (struct sockaddr *)&sa, len) < 0 ? -errno : 0;
}

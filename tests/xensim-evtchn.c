// SPDX-License-Identifier: MIT
/*
 * xensim event channels: a guest (xensim.h) and a backend (the fake
 * libxenevtchn) bind, notify both ways, and the backend's fd polls
 * readable exactly while a port is pending and reads as Linux's
 * /dev/xen/evtchn does; no event is lost between pending() and
 * unmask(); owners that never read their wakeups cost no one else
 * theirs; closing either end is seen by the other; the leak counter
 * drops to zero.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xenevtchn.h>

#include "tests/check.h"
#include "tools/xensim/xensim.h"

#define GUEST 5u

static const char *dir;

static bool readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
}

static uint32_t bound_ports(uint32_t domid)
{
	struct xensim_domain_stats st;

	REQUIRE_EQ(xensim_domain_stats(dir, domid, &st), 0);
	return st.bound_ports;
}

/* Xen marks a freshly bound local port pending: take that event. */
static int bind_and_settle(xenevtchn_handle *h, uint32_t domid, int rport)
{
	int port = xenevtchn_bind_interdomain(h, domid, rport);

	REQUIRE(port > 0);
	REQUIRE(readable(xenevtchn_fd(h), 0));
	REQUIRE_EQ(xenevtchn_pending(h), port);
	REQUIRE_EQ(xenevtchn_unmask(h, port), 0);
	REQUIRE(!readable(xenevtchn_fd(h), 0));
	return port;
}

static void test_bind_rules(xenevtchn_handle *h, struct xensim_domain *g)
{
	int for_other = xensim_evtchn_alloc_unbound(g, 7);
	int gport = xensim_evtchn_alloc_unbound(g, 0);
	int port;

	REQUIRE(for_other > 0 && gport > 0);
	errno = 0;
	REQUIRE_EQ(xenevtchn_bind_interdomain(h, GUEST, for_other), -1);
	REQUIRE_EQ(errno, EINVAL);
	REQUIRE_EQ(xenevtchn_bind_interdomain(h, GUEST, 900), -1);
	REQUIRE_EQ(xenevtchn_bind_interdomain(h, 42, gport), -1);
	port = bind_and_settle(h, GUEST, gport);
	REQUIRE_EQ(xensim_evtchn_is_connected(g, gport), 1);
	REQUIRE_EQ(xenevtchn_bind_interdomain(h, GUEST, gport), -1);
	REQUIRE_EQ(bound_ports(GUEST), 1);
	REQUIRE_EQ(xenevtchn_unbind(h, port), 0);
	REQUIRE_EQ(xenevtchn_unbind(h, port), -1);
	REQUIRE_EQ(bound_ports(GUEST), 0);
	/* The guest's end is left unbound, and can be bound again. */
	REQUIRE_EQ(xensim_evtchn_is_connected(g, gport), 0);
	port = bind_and_settle(h, GUEST, gport);
	REQUIRE_EQ(xenevtchn_unbind(h, port), 0);
	REQUIRE_EQ(xensim_evtchn_close(g, gport), 0);
	REQUIRE_EQ(xensim_evtchn_close(g, for_other), 0);
}

static void test_notify_both_ways(xenevtchn_handle *h, struct xensim_domain *g)
{
	int gport = xensim_evtchn_alloc_unbound(g, 0);
	int fd = xenevtchn_fd(h), port = bind_and_settle(h, GUEST, gport);

	REQUIRE_EQ(xensim_evtchn_notify(g, gport), 0);
	REQUIRE(readable(fd, 0));
	REQUIRE_EQ(xenevtchn_pending(h), port);
	REQUIRE(!readable(fd, 0));
	errno = 0;
	REQUIRE_EQ(xenevtchn_pending(h), -1);
	REQUIRE_EQ(errno, EAGAIN);

	/* Notified while masked: nothing yet, delivered on unmask. */
	REQUIRE_EQ(xensim_evtchn_notify(g, gport), 0);
	REQUIRE_EQ(xensim_evtchn_notify(g, gport), 0);
	REQUIRE(!readable(fd, 0));
	REQUIRE_EQ(xenevtchn_unmask(h, port), 0);
	REQUIRE(readable(fd, 0));
	REQUIRE_EQ(xenevtchn_pending(h), port);
	REQUIRE_EQ(xenevtchn_unmask(h, port), 0);
	REQUIRE(!readable(fd, 0));

	/* Backend to guest. */
	REQUIRE(!readable(xensim_evtchn_fd(g), 0));
	REQUIRE_EQ(xenevtchn_notify(h, port), 0);
	REQUIRE(readable(xensim_evtchn_fd(g), 0));
	REQUIRE_EQ(xensim_evtchn_pending(g), gport);
	REQUIRE(!readable(xensim_evtchn_fd(g), 0));
	REQUIRE_EQ(xensim_evtchn_pending(g), -EAGAIN);
	REQUIRE_EQ(xensim_evtchn_unmask(g, gport), 0);

	/* Only the handle that bound a port may use it. */
	REQUIRE_EQ(xenevtchn_notify(h, gport == port ? port + 1 : gport), -1);

	/* The guest closes: notifies are dropped, the backend still unbinds. */
	REQUIRE_EQ(xensim_evtchn_close(g, gport), 0);
	REQUIRE_EQ(xenevtchn_notify(h, port), 0);
	REQUIRE(!readable(xensim_evtchn_fd(g), 0));
	REQUIRE_EQ(bound_ports(GUEST), 1);
	REQUIRE_EQ(xenevtchn_unbind(h, port), 0);
	REQUIRE_EQ(bound_ports(GUEST), 0);
}

static void test_two_ports(xenevtchn_handle *h, struct xensim_domain *g)
{
	int ga = xensim_evtchn_alloc_unbound(g, 0);
	int gb = xensim_evtchn_alloc_unbound(g, 0);
	int fd = xenevtchn_fd(h), a, b, first, second;

	a = bind_and_settle(h, GUEST, ga);
	b = bind_and_settle(h, GUEST, gb);
	REQUIRE_EQ(xensim_evtchn_notify(g, ga), 0);
	REQUIRE_EQ(xensim_evtchn_notify(g, gb), 0);
	first = xenevtchn_pending(h);
	REQUIRE(readable(fd, 0)); /* the second is still to come */
	second = xenevtchn_pending(h);
	REQUIRE((first == a && second == b) || (first == b && second == a));
	REQUIRE(!readable(fd, 0));
	REQUIRE_EQ(xenevtchn_unmask(h, a), 0);
	REQUIRE_EQ(xenevtchn_unmask(h, b), 0);
	REQUIRE_EQ(bound_ports(GUEST), 2);
	xensim_evtchn_close(g, ga);
	xensim_evtchn_close(g, gb);
	xenevtchn_unbind(h, a);
	xenevtchn_unbind(h, b);
}

/*
 * The fd reads as /dev/xen/evtchn: every delivered port in one read;
 * notifications while a port is masked come as one delivery at its
 * unmask; an unmask with nothing pending delivers nothing.
 */
static void test_read_as_device(xenevtchn_handle *h, struct xensim_domain *g)
{
	int ga = xensim_evtchn_alloc_unbound(g, 0);
	int gb = xensim_evtchn_alloc_unbound(g, 0);
	int fd = xenevtchn_fd(h), a, b;
	uint32_t got[8];
	ssize_t n;

	a = bind_and_settle(h, GUEST, ga);
	b = bind_and_settle(h, GUEST, gb);
	for (int i = 0; i < 3; i++) {
		REQUIRE_EQ(xensim_evtchn_notify(g, ga), 0);
		REQUIRE_EQ(xensim_evtchn_notify(g, gb), 0);
	}
	n = read(fd, got, sizeof(got));
	REQUIRE_EQ(n, 2 * (ssize_t)sizeof(uint32_t));
	REQUIRE(((int)got[0] == a && (int)got[1] == b) ||
		((int)got[0] == b && (int)got[1] == a));
	REQUIRE(!readable(fd, 0));
	/* Both were notified twice more while masked: once each now. */
	REQUIRE_EQ(xenevtchn_unmask(h, b), 0);
	REQUIRE_EQ(xenevtchn_unmask(h, a), 0);
	n = read(fd, got, sizeof(got));
	REQUIRE_EQ(n, 2 * (ssize_t)sizeof(uint32_t));
	REQUIRE(((int)got[0] == b && (int)got[1] == a));
	REQUIRE_EQ(xenevtchn_unmask(h, a), 0);
	REQUIRE_EQ(xenevtchn_unmask(h, b), 0);
	REQUIRE(!readable(fd, 0));
	/* The guest reads its ports the same way, in one call. */
	REQUIRE_EQ(xenevtchn_notify(h, a), 0);
	REQUIRE_EQ(xenevtchn_notify(h, b), 0);
	REQUIRE_EQ(xensim_evtchn_read(g, got, 8), 2);
	REQUIRE_EQ(xensim_evtchn_read(g, got, 8), -EAGAIN);
	xensim_evtchn_unmask(g, (uint32_t)ga);
	xensim_evtchn_unmask(g, (uint32_t)gb);
	xensim_evtchn_close(g, ga);
	xensim_evtchn_close(g, gb);
	xenevtchn_unbind(h, a);
	xenevtchn_unbind(h, b);
}

static void test_close_releases(struct xensim_domain *g)
{
	xenevtchn_handle *h2 = xenevtchn_open(NULL, 0);
	int gport = xensim_evtchn_alloc_unbound(g, 0);

	REQUIRE(h2 != NULL);
	bind_and_settle(h2, GUEST, gport);
	REQUIRE_EQ(bound_ports(GUEST), 1);
	REQUIRE(xenevtchn_bind_virq(h2, 3) > 0);
	REQUIRE_EQ(xenevtchn_close(h2), 0);
	REQUIRE_EQ(bound_ports(GUEST), 0);
	REQUIRE_EQ(xensim_evtchn_is_connected(g, gport), 0);
	xensim_evtchn_close(g, gport);
}

/* The guest in another process wakes the backend's poll(). */
static void test_cross_process(xenevtchn_handle *h)
{
	int to_parent[2], to_child[2], gport, port, status;
	pid_t pid;
	char c;

	REQUIRE_EQ(pipe(to_parent), 0);
	REQUIRE_EQ(pipe(to_child), 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct xensim_domain *g2;

		if (xensim_domain_open(dir, GUEST, &g2))
			_exit(2);
		gport = xensim_evtchn_alloc_unbound(g2, 0);
		if (write(to_parent[1], &gport, sizeof(gport)) != sizeof(gport))
			_exit(3);
		if (read(to_child[0], &c, 1) != 1)
			_exit(4);
		if (xensim_evtchn_notify(g2, gport))
			_exit(5);
		if (!readable(xensim_evtchn_fd(g2), 5000) ||
		    xensim_evtchn_pending(g2) != gport)
			_exit(6);
		xensim_domain_close(g2);
		_exit(0);
	}
	REQUIRE_EQ(read(to_parent[0], &gport, sizeof(gport)), sizeof(gport));
	port = bind_and_settle(h, GUEST, gport);
	REQUIRE_EQ(write(to_child[1], "x", 1), 1);
	REQUIRE(readable(xenevtchn_fd(h), 5000));
	REQUIRE_EQ(xenevtchn_pending(h), port);
	REQUIRE_EQ(xenevtchn_notify(h, port), 0);
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	REQUIRE(WIFEXITED(status));
	REQUIRE_EQ(WEXITSTATUS(status), 0);
	/* The child's handle closed its port: ours is left unbound. */
	REQUIRE_EQ(bound_ports(GUEST), 1);
	REQUIRE_EQ(xenevtchn_unbind(h, port), 0);
	REQUIRE_EQ(bound_ports(GUEST), 0);
	close(to_parent[0]);
	close(to_parent[1]);
	close(to_child[0]);
	close(to_child[1]);
}

/* A backend that dies without closing: its ports go, as the kernel's. */
static void test_crashed_backend(xenevtchn_handle *h, struct xensim_domain *g)
{
	int gport = xensim_evtchn_alloc_unbound(g, 0), status, port;
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		xenevtchn_handle *h2 = xenevtchn_open(NULL, 0);

		_exit(h2 && xenevtchn_bind_interdomain(h2, GUEST, gport) > 0
			      ? 0
			      : 1);
	}
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	REQUIRE(WIFEXITED(status));
	REQUIRE_EQ(WEXITSTATUS(status), 0);
	REQUIRE_EQ(bound_ports(GUEST), 0);
	port = bind_and_settle(h, GUEST, gport);
	REQUIRE_EQ(bound_ports(GUEST), 1);
	REQUIRE_EQ(xenevtchn_unbind(h, port), 0);
	REQUIRE_EQ(xensim_evtchn_close(g, gport), 0);
}

/*
 * Owners that never read their wakeups (idle guests) must not cost anyone
 * else theirs. Each silent handle's queue takes SILENT_PORTS wakeups; all
 * of them together hold more than the sending socket's buffer (some 280
 * datagrams by default), yet the next owner still hears from the backend.
 */
#define SILENT_OWNERS 60u
#define SILENT_PORTS 10u /* a socket's default queue length */

static void test_silent_owners(xenevtchn_handle *h, struct xensim_domain *g)
{
	struct xensim_domain *silent[SILENT_OWNERS];
	int port[SILENT_OWNERS][SILENT_PORTS];
	int gport = xensim_evtchn_alloc_unbound(g, 0);
	int last = bind_and_settle(h, GUEST, gport);

	for (unsigned int i = 0; i < SILENT_OWNERS; i++) {
		REQUIRE_EQ(xensim_domain_open(dir, GUEST, &silent[i]), 0);
		for (unsigned int j = 0; j < SILENT_PORTS; j++) {
			int sport = xensim_evtchn_alloc_unbound(silent[i], 0);

			REQUIRE(sport > 0);
			port[i][j] = bind_and_settle(h, GUEST, sport);
			REQUIRE_EQ(xenevtchn_notify(h, port[i][j]), 0);
		}
	}
	REQUIRE(!readable(xensim_evtchn_fd(g), 0));
	REQUIRE_EQ(xenevtchn_notify(h, last), 0);
	REQUIRE(readable(xensim_evtchn_fd(g), 1000));
	REQUIRE_EQ(xensim_evtchn_pending(g), gport);
	REQUIRE_EQ(xensim_evtchn_unmask(g, gport), 0);

	for (unsigned int i = 0; i < SILENT_OWNERS; i++) {
		for (unsigned int j = 0; j < SILENT_PORTS; j++)
			REQUIRE_EQ(xenevtchn_unbind(h, port[i][j]), 0);
		xensim_domain_close(silent[i]);
	}
	REQUIRE_EQ(xenevtchn_unbind(h, last), 0);
	REQUIRE_EQ(xensim_evtchn_close(g, gport), 0);
	REQUIRE_EQ(bound_ports(GUEST), 0);
}

static void test_domain_death(xenevtchn_handle *h, struct xensim_domain *g)
{
	struct xensim_domain_stats st;
	int gport = xensim_evtchn_alloc_unbound(g, 0);
	int port = bind_and_settle(h, GUEST, gport);

	REQUIRE_EQ(xensim_domain_destroy(dir, GUEST), 0);
	REQUIRE_EQ(xensim_evtchn_is_connected(g, gport), -EINVAL);
	REQUIRE_EQ(xenevtchn_notify(h, port), 0);
	REQUIRE_EQ(xensim_domain_stats(dir, GUEST, &st), 0);
	REQUIRE(st.dying);
	REQUIRE_EQ(st.bound_ports, 1); /* the backend has yet to unbind */
	REQUIRE_EQ(xenevtchn_unbind(h, port), 0);
	REQUIRE_EQ(bound_ports(GUEST), 0);
	/* A dying domain takes no new bindings. */
	REQUIRE_EQ(xenevtchn_bind_interdomain(h, GUEST, gport), -1);
}

int main(void)
{
	struct xensim_domain *g;
	xenevtchn_handle *h;

	dir = check_make_dir("xensim-evtchn");
	unsetenv("XENSIM_DOMID");
	unsetenv("XENSIM_DIR");
	errno = 0;
	REQUIRE(xenevtchn_open(NULL, 0) == NULL);
	REQUIRE_EQ(errno, ENOENT);
	setenv("XENSIM_DIR", dir, 1);

	REQUIRE_EQ(xensim_host_init(dir), 0);
	REQUIRE_EQ(xensim_domain_create(dir, GUEST, 4), 0);
	REQUIRE_EQ(xensim_domain_open(dir, GUEST, &g), 0);
	h = xenevtchn_open(NULL, 0);
	REQUIRE(h != NULL);
	REQUIRE(xenevtchn_fd(h) >= 0);
	REQUIRE(!readable(xenevtchn_fd(h), 0));
	REQUIRE_EQ(xenevtchn_restrict(h, 0), 0);

	test_bind_rules(h, g);
	test_notify_both_ways(h, g);
	test_two_ports(h, g);
	test_read_as_device(h, g);
	test_close_releases(g);
	test_cross_process(h);
	test_crashed_backend(h, g);
	test_silent_owners(h, g);
	test_domain_death(h, g);

	REQUIRE_EQ(xenevtchn_close(h), 0);
	xensim_domain_close(g);
	REQUIRE_EQ(bound_ports(0), 0);
	printf("xensim event-channel tests passed\n");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * xensim grant tables: maps and copies through the fake libxengnttab, with
 * every refusal Xen makes, and the leak counters dropping back to zero.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <xen/grant_table.h>
#include <xengnttab.h>

#include "tests/check.h"
#include "tools/xensim/xensim.h"

#define GUEST 5u
#define OTHER 7u
#define DOOMED 9u

static const char *dir;

static struct xensim_domain_stats stats(void)
{
	struct xensim_domain_stats st;

	REQUIRE_EQ(xensim_domain_stats(dir, GUEST, &st), 0);
	return st;
}

static bool dom_dir_exists(uint32_t domid)
{
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "%s/dom%u", dir, domid);
	return stat(path, &st) == 0;
}

static void fill(struct xensim_domain *g, uint32_t pfn, int c)
{
	memset(xensim_domain_page(g, pfn), c, XENSIM_PAGE_SIZE);
}

static void test_open_without_host(void)
{
	unsetenv("XENSIM_DIR");
	errno = 0;
	REQUIRE(xengnttab_open(NULL, 0) == NULL);
	REQUIRE_EQ(errno, ENOENT);
	setenv("XENSIM_DIR", dir, 1);
}

static void test_map_and_end(xengnttab_handle *h, struct xensim_domain *g)
{
	uint8_t *p;
	int ref;

	fill(g, 3, 0xab);
	ref = xensim_grant_access(g, 0, 3, false);
	REQUIRE(ref > 0);
	p = xengnttab_map_grant_ref(h, GUEST, ref, PROT_READ | PROT_WRITE);
	REQUIRE(p != NULL);
	REQUIRE_EQ(p[0], 0xab);
	REQUIRE_EQ(p[4095], 0xab);
	p[17] = 0x5a; /* shared memory: the guest sees the write */
	REQUIRE_EQ(((uint8_t *)xensim_domain_page(g, 3))[17], 0x5a);
	REQUIRE_EQ(stats().mapped_grants, 1);
	REQUIRE_EQ(xensim_grant_end(g, ref), -EBUSY);
	REQUIRE_EQ(xengnttab_unmap(h, p, 1), 0);
	REQUIRE_EQ(stats().mapped_grants, 0);
	REQUIRE_EQ(xensim_grant_end(g, ref), 0);
	REQUIRE_EQ(xensim_grant_end(g, ref), -EINVAL);
}

static void test_map_refusals(xengnttab_handle *h, struct xensim_domain *g)
{
	int revoked, other, ro;
	void *p;

	errno = 0;
	REQUIRE(xengnttab_map_grant_ref(h, GUEST, 100, PROT_READ) == NULL);
	REQUIRE_EQ(errno, EINVAL);
	REQUIRE(xengnttab_map_grant_ref(h, GUEST, 1u << 30, PROT_READ) == NULL);
	REQUIRE(xengnttab_map_grant_ref(h, 99, 8, PROT_READ) == NULL);

	revoked = xensim_grant_access(g, 0, 1, false);
	REQUIRE_EQ(xensim_grant_end(g, revoked), 0);
	REQUIRE(xengnttab_map_grant_ref(h, GUEST, revoked, PROT_READ) == NULL);

	other = xensim_grant_access(g, OTHER, 1, false);
	REQUIRE(xengnttab_map_grant_ref(h, GUEST, other, PROT_READ) == NULL);
	REQUIRE_EQ(xensim_grant_end(g, other), 0);

	ro = xensim_grant_access(g, 0, 1, true);
	REQUIRE(xengnttab_map_grant_ref(h, GUEST, ro, PROT_READ | PROT_WRITE) ==
		NULL);
	p = xengnttab_map_grant_ref(h, GUEST, ro, PROT_READ);
	REQUIRE(p != NULL);
	REQUIRE_EQ(xengnttab_unmap(h, p, 1), 0);
	REQUIRE_EQ(xensim_grant_end(g, ro), 0);
	REQUIRE_EQ(stats().mapped_grants, 0);

	errno = 0;
	REQUIRE_EQ(xengnttab_unmap(h, (void *)0x1000, 1), -1);
	REQUIRE_EQ(errno, EINVAL);
}

static void test_map_many(xengnttab_handle *h, struct xensim_domain *g)
{
	uint32_t refs[2], domids[2] = { GUEST, GUEST };
	uint8_t *p;

	fill(g, 4, 0x44);
	fill(g, 5, 0x55);
	refs[0] = xensim_grant_access(g, 0, 4, false);
	refs[1] = 4000; /* never granted */
	REQUIRE(xengnttab_map_grant_refs(h, 2, domids, refs, PROT_READ) ==
		NULL);
	REQUIRE_EQ(stats().mapped_grants, 0); /* all or nothing */

	refs[1] = xensim_grant_access(g, 0, 5, false);
	p = xengnttab_map_domain_grant_refs(h, 2, GUEST, refs, PROT_READ);
	REQUIRE(p != NULL);
	REQUIRE_EQ(p[0], 0x44);
	REQUIRE_EQ(p[XENSIM_PAGE_SIZE], 0x55);
	REQUIRE_EQ(stats().mapped_grants, 2);
	REQUIRE_EQ(xengnttab_unmap(h, p, 1), -1); /* a whole mapping only */
	REQUIRE_EQ(xengnttab_unmap(h, p, 2), 0);
	REQUIRE_EQ(stats().mapped_grants, 0);
	REQUIRE_EQ(xensim_grant_end(g, refs[0]), 0);
	REQUIRE_EQ(xensim_grant_end(g, refs[1]), 0);
}

static void copy_seg(xengnttab_grant_copy_segment_t *s, bool from_guest,
		     uint32_t ref, uint16_t off, uint16_t len, void *local)
{
	memset(s, 0, sizeof(*s));
	s->len = len;
	if (from_guest) {
		s->flags = GNTCOPY_source_gref;
		s->source.foreign.ref = ref;
		s->source.foreign.offset = off;
		s->source.foreign.domid = GUEST;
		s->dest.virt = local;
	} else {
		s->flags = GNTCOPY_dest_gref;
		s->dest.foreign.ref = ref;
		s->dest.foreign.offset = off;
		s->dest.foreign.domid = GUEST;
		s->source.virt = local;
	}
}

static void test_copy(xengnttab_handle *h, struct xensim_domain *g)
{
	xengnttab_grant_copy_segment_t seg[6];
	uint8_t buf[4096], *page = xensim_domain_page(g, 6);
	int rw, ro, other;

	fill(g, 6, 0x66);
	rw = xensim_grant_access(g, 0, 6, false);
	ro = xensim_grant_access(g, 0, 6, true);
	other = xensim_grant_access(g, OTHER, 6, false);
	memset(buf, 0, sizeof(buf));

	copy_seg(&seg[0], true, rw, 100, 200, buf);
	memset(buf + 1000, 0x11, 512);
	copy_seg(&seg[1], false, rw, 3584, 512, buf + 1000); /* to the end */
	copy_seg(&seg[2], true, ro, 0, 16, buf + 2000); /* ro as source */
	copy_seg(&seg[3], false, ro, 0, 16, buf); /* ro as dest */
	copy_seg(&seg[4], true, rw, 4000, 97, buf); /* crosses 4096 */
	copy_seg(&seg[5], true, other, 0, 16, buf); /* not for us */
	REQUIRE_EQ(xengnttab_grant_copy(h, 6, seg), 0);
	REQUIRE_EQ(seg[0].status, GNTST_okay);
	REQUIRE_EQ(buf[0], 0x66);
	REQUIRE_EQ(buf[199], 0x66);
	REQUIRE_EQ(buf[200], 0);
	REQUIRE_EQ(seg[1].status, GNTST_okay);
	REQUIRE_EQ(page[3584], 0x11);
	REQUIRE_EQ(page[4095], 0x11);
	REQUIRE_EQ(page[3583], 0x66);
	REQUIRE_EQ(seg[2].status, GNTST_okay);
	REQUIRE_EQ(seg[3].status, GNTST_permission_denied);
	REQUIRE_EQ(seg[4].status, GNTST_bad_copy_arg);
	REQUIRE_EQ(seg[5].status, GNTST_permission_denied);

	copy_seg(&seg[0], true, 3000, 0, 16, buf); /* ungranted */
	copy_seg(&seg[1], true, 1u << 20, 0, 16, buf);
	REQUIRE_EQ(xengnttab_grant_copy(h, 2, seg), 0);
	REQUIRE_EQ(seg[0].status, GNTST_bad_gntref);
	REQUIRE_EQ(seg[1].status, GNTST_bad_gntref);

	REQUIRE_EQ(xensim_grant_end(g, rw), 0); /* copies leave no pin */
	REQUIRE_EQ(xensim_grant_end(g, ro), 0);
	REQUIRE_EQ(xensim_grant_end(g, other), 0);
	REQUIRE_EQ(stats().mapped_grants, 0);
}

static void test_close_releases(struct xensim_domain *g)
{
	xengnttab_handle *h2 = xengnttab_open(NULL, 0);
	int ref = xensim_grant_access(g, 0, 7, false);

	REQUIRE(h2 != NULL);
	REQUIRE(xengnttab_map_grant_ref(h2, GUEST, ref, PROT_READ) != NULL);
	REQUIRE(xengnttab_map_grant_ref(h2, GUEST, ref, PROT_READ) != NULL);
	REQUIRE_EQ(stats().mapped_grants, 2);
	REQUIRE_EQ(xengnttab_close(h2), 0);
	REQUIRE_EQ(stats().mapped_grants, 0);
	REQUIRE_EQ(xensim_grant_end(g, ref), 0);
}

static void test_unmap_notify(xengnttab_handle *h, struct xensim_domain *g)
{
	int ref = xensim_grant_access(g, 0, 8, false);
	uint8_t *page = xensim_domain_page(g, 8);
	void *p;

	page[10] = 0xff;
	p = xengnttab_map_grant_ref_notify(h, GUEST, ref,
					   PROT_READ | PROT_WRITE, 10, -1);
	REQUIRE(p != NULL);
	REQUIRE_EQ(xengnttab_unmap(h, p, 1), 0);
	REQUIRE_EQ(page[10], 0);
	REQUIRE_EQ(xensim_grant_end(g, ref), 0);
}

/* A dying domain keeps its files while mapped; copies and maps fail. */
static void test_dying(xengnttab_handle *h, struct xensim_domain *g)
{
	xengnttab_grant_copy_segment_t seg;
	int ref = xensim_grant_access(g, 0, 9, false);
	uint8_t buf[16];
	void *p;

	p = xengnttab_map_grant_ref(h, GUEST, ref, PROT_READ);
	REQUIRE(p != NULL);
	REQUIRE_EQ(xensim_domain_destroy(dir, GUEST), 0);
	REQUIRE(stats().dying);
	REQUIRE_EQ(stats().mapped_grants, 1);
	REQUIRE(dom_dir_exists(GUEST));
	copy_seg(&seg, true, ref, 0, 16, buf);
	REQUIRE_EQ(xengnttab_grant_copy(h, 1, &seg), 0);
	REQUIRE_EQ(seg.status, GNTST_bad_domain);
	errno = 0;
	REQUIRE(xengnttab_map_grant_ref(h, GUEST, ref, PROT_READ) == NULL);
	REQUIRE_EQ(errno, ESRCH);

	REQUIRE_EQ(xengnttab_unmap(h, p, 1), 0);
	REQUIRE(!dom_dir_exists(GUEST));
	REQUIRE_EQ(stats().mapped_grants, 0);
	REQUIRE(stats().dying);

	/* The domid can be reused, and the same handle reaches the new one. */
	REQUIRE_EQ(xensim_domain_create(dir, GUEST, 4), 0);
	REQUIRE(!stats().dying);
	{
		struct xensim_domain *g2;
		int r2;

		REQUIRE_EQ(xensim_domain_open(dir, GUEST, &g2), 0);
		r2 = xensim_grant_access(g2, 0, 1, false);
		p = xengnttab_map_grant_ref(h, GUEST, r2, PROT_READ);
		REQUIRE(p != NULL);
		REQUIRE_EQ(xengnttab_unmap(h, p, 1), 0);
		xensim_domain_close(g2);
	}
}

/* How many map ledgers the host's maps/ directory holds. */
static int count_ledgers(void)
{
	char path[300];
	struct dirent *de;
	DIR *dh;
	int n = 0;

	snprintf(path, sizeof(path), "%s/maps", dir);
	dh = opendir(path);
	REQUIRE(dh != NULL);
	while ((de = readdir(dh))) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(dh);
	return n;
}

/*
 * In a child: open a handle, map @refs of @domid, tell the parent through
 * @report, then either leave at once or wait to be killed. The child
 * never runs atexit handlers, which would remove the parent's host.
 */
static pid_t spawn_mapper(uint32_t domid, uint32_t *refs, uint32_t count,
			  bool wait_for_kill)
{
	int report[2];
	pid_t pid;
	char c = 0;

	REQUIRE_EQ(pipe(report), 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		xengnttab_handle *h = xengnttab_open(NULL, 0);

		close(report[0]);
		if (h && xengnttab_map_domain_grant_refs(h, count, domid, refs,
							 PROT_READ))
			c = 1;
		if (write(report[1], &c, 1) != 1 || !c)
			_exit(1);
		while (wait_for_kill)
			pause();
		_exit(0); /* no unmap, no close: like a crash */
	}
	close(report[1]);
	REQUIRE_EQ(read(report[0], &c, 1), 1);
	close(report[0]);
	REQUIRE_EQ(c, 1);
	return pid;
}

static void wait_exit(pid_t pid)
{
	int status;

	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
}

static void grant_pair(struct xensim_domain *g, uint32_t *refs)
{
	refs[0] = xensim_grant_access(g, 0, 10, false);
	refs[1] = xensim_grant_access(g, 0, 11, false);
	REQUIRE((int)refs[0] > 0 && (int)refs[1] > 0);
}

/*
 * A process that dies holding mappings: its pins go when it is gone, as
 * the kernel's gntdev unmaps at exit, and so does its ledger.
 */
static void test_dead_mapper(struct xensim_domain *g)
{
	uint32_t refs[2];
	pid_t pid;

	/* Exits without unmapping; reaped by waitpid. */
	grant_pair(g, refs);
	pid = spawn_mapper(GUEST, refs, 2, false);
	wait_exit(pid);
	REQUIRE_EQ(count_ledgers(), 2); /* ours and the dead one */
	REQUIRE_EQ(xensim_grant_end(g, refs[0]), 0);
	REQUIRE_EQ(xensim_grant_end(g, refs[1]), 0);
	REQUIRE_EQ(stats().mapped_grants, 0);
	REQUIRE_EQ(count_ledgers(), 1);

	/* Killed with SIGKILL: released already while it is a zombie. */
	grant_pair(g, refs);
	pid = spawn_mapper(GUEST, refs, 2, true);
	REQUIRE_EQ(stats().mapped_grants, 2); /* a live mapper keeps them */
	REQUIRE_EQ(xensim_grant_end(g, refs[0]), -EBUSY);
	REQUIRE_EQ(kill(pid, SIGKILL), 0);
	{
		siginfo_t si;

		REQUIRE_EQ(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	}
	REQUIRE_EQ(stats().mapped_grants, 0);
	REQUIRE_EQ(xensim_grant_end(g, refs[0]), 0);
	REQUIRE_EQ(xensim_grant_end(g, refs[1]), 0);
	wait_exit(pid);
	REQUIRE_EQ(count_ledgers(), 1);
}

/*
 * The pid of a dead mapper now names a live process (here: this one): the
 * start time in the ledger's name tells them apart.
 */
static void test_reused_pid(struct xensim_domain *g)
{
	char name[256], from[600], to[600];
	unsigned long long start;
	uint32_t refs[2];
	long owner;
	pid_t pid;

	grant_pair(g, refs);
	pid = spawn_mapper(GUEST, refs, 2, false);
	wait_exit(pid);
	/* Readdir order is arbitrary: find the child's ledger by its pid. */
	{
		char path[300];
		struct dirent *de;
		DIR *dh;

		snprintf(path, sizeof(path), "%s/maps", dir);
		dh = opendir(path);
		REQUIRE(dh != NULL);
		name[0] = '\0';
		while ((de = readdir(dh)))
			if (atol(de->d_name) == (long)pid)
				snprintf(name, sizeof(name), "%s", de->d_name);
		closedir(dh);
	}
	REQUIRE(name[0] != '\0');
	REQUIRE_EQ(sscanf(name, "%ld.%llu.", &owner, &start), 2);
	snprintf(from, sizeof(from), "%s/maps/%s", dir, name);
	snprintf(to, sizeof(to), "%s/maps/%ld.%llu.reused", dir, (long)getpid(),
		 start + 100000);
	REQUIRE_EQ(rename(from, to), 0);
	REQUIRE_EQ(xensim_grant_end(g, refs[0]), 0);
	REQUIRE_EQ(xensim_grant_end(g, refs[1]), 0);
	REQUIRE_EQ(stats().mapped_grants, 0);
	REQUIRE_EQ(count_ledgers(), 1);
}

/* A dying domain whose only mapper was killed: its files go. */
static void test_dying_dead_mapper(void)
{
	struct xensim_domain_stats st;
	struct xensim_domain *g;
	uint32_t refs[2];
	pid_t pid;

	REQUIRE_EQ(xensim_domain_create(dir, DOOMED, 16), 0);
	REQUIRE_EQ(xensim_domain_open(dir, DOOMED, &g), 0);
	grant_pair(g, refs);
	pid = spawn_mapper(DOOMED, refs, 2, true);
	REQUIRE_EQ(xensim_domain_destroy(dir, DOOMED), 0);
	REQUIRE(dom_dir_exists(DOOMED)); /* still mapped by a live process */
	REQUIRE_EQ(kill(pid, SIGKILL), 0);
	wait_exit(pid);
	REQUIRE_EQ(xensim_domain_stats(dir, DOOMED, &st), 0);
	REQUIRE_EQ(st.mapped_grants, 0);
	REQUIRE(st.dying);
	REQUIRE(!dom_dir_exists(DOOMED));
	xensim_domain_close(g);

	/* Killed first, destroyed after: destroy itself removes the files. */
	REQUIRE_EQ(xensim_domain_create(dir, DOOMED, 16), 0);
	REQUIRE_EQ(xensim_domain_open(dir, DOOMED, &g), 0);
	grant_pair(g, refs);
	pid = spawn_mapper(DOOMED, refs, 2, true);
	REQUIRE_EQ(kill(pid, SIGKILL), 0);
	wait_exit(pid);
	REQUIRE(dom_dir_exists(DOOMED));
	REQUIRE_EQ(xensim_domain_destroy(dir, DOOMED), 0);
	REQUIRE(!dom_dir_exists(DOOMED));
	xensim_domain_close(g);
	REQUIRE_EQ(count_ledgers(), 1);
}

int main(void)
{
	struct xensim_domain *g;
	xengnttab_handle *h;

	dir = check_make_dir("xensim-grant");
	unsetenv("XENSIM_DOMID");
	test_open_without_host();
	REQUIRE_EQ(xensim_host_init(dir), 0);
	REQUIRE_EQ(xensim_domain_create(dir, GUEST, 16), 0);
	REQUIRE_EQ(xensim_domain_create(dir, GUEST, 16), -EEXIST);
	REQUIRE_EQ(xensim_domain_open(dir, GUEST, &g), 0);
	REQUIRE_EQ(xensim_domain_nr_pages(g), 16);
	REQUIRE(xensim_domain_page(g, 16) == NULL);

	h = xengnttab_open(NULL, 0);
	REQUIRE(h != NULL);
	REQUIRE(xengnttab_fd(h) >= 0);
	REQUIRE_EQ(xengnttab_set_max_grants(h, 128), 0);

	test_map_and_end(h, g);
	test_map_refusals(h, g);
	test_map_many(h, g);
	test_copy(h, g);
	test_close_releases(g);
	test_unmap_notify(h, g);
	test_dead_mapper(g);
	test_reused_pid(g);
	test_dying_dead_mapper();
	test_dying(h, g);

	REQUIRE_EQ(count_ledgers(), 1);
	REQUIRE_EQ(xengnttab_close(h), 0);
	REQUIRE_EQ(count_ledgers(), 0);
	xensim_domain_close(g);
	printf("xensim grant tests passed\n");
	return 0;
}

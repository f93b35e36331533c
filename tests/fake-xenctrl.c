// SPDX-License-Identifier: MIT
/*
 * A stand-in for libxenctrl.so.4.20, for tests/xentop-real.sh: just the
 * calls Debian 13's libxenstat makes (xenstat.c, xenstat_get_node() and
 * its collectors), answered from the simulator's xenstore instead of the
 * hypervisor, which this machine does not have. Domains are those with a
 * /local/domain/N/name; physical figures are made up and plain. The
 * library under test, libxenstat, is Debian's, unchanged: what it reads
 * for a disk is its own code's doing. Built by the test against Debian
 * 13's libxen-dev headers, so that the structures are 4.20's; its symbols
 * carry the version node libxenstat was linked against.
 */
#include <stdlib.h>
#include <string.h>
#include <xenctrl.h>
#include <xenstore.h>

struct xc_interface_core {
	struct xs_handle *xs;
};

xc_interface *xc_interface_open(xentoollog_logger *logger,
				xentoollog_logger *dombuild_logger,
				unsigned int open_flags)
{
	xc_interface *xch = calloc(1, sizeof(*xch));

	(void)logger;
	(void)dombuild_logger;
	(void)open_flags;
	if (xch && !(xch->xs = xs_open(0))) {
		free(xch);
		xch = NULL;
	}
	return xch;
}

int xc_interface_close(xc_interface *xch)
{
	if (xch) {
		xs_close(xch->xs);
		free(xch);
	}
	return 0;
}

int xc_physinfo(xc_interface *xch, xc_physinfo_t *info)
{
	(void)xch;
	memset(info, 0, sizeof(*info));
	info->nr_cpus = 2;
	info->cpu_khz = 2000000;
	info->total_pages = 1 << 20;
	info->free_pages = 1 << 19;
	return 0;
}

static int by_number(const void *a, const void *b)
{
	return (*(const unsigned int *)a > *(const unsigned int *)b) -
	       (*(const unsigned int *)a < *(const unsigned int *)b);
}

int xc_domain_getinfolist(xc_interface *xch, uint32_t first_domain,
			  unsigned int max_domains, xc_domaininfo_t *info)
{
	unsigned int n = 0, nr_dirs = 0, *ids;
	char **dirs =
		xs_directory(xch->xs, XBT_NULL, "/local/domain", &nr_dirs);

	if (!dirs)
		return 0;
	ids = calloc(nr_dirs ? nr_dirs : 1, sizeof(*ids));
	for (unsigned int i = 0; ids && i < nr_dirs; i++)
		ids[i] = (unsigned int)strtoul(dirs[i], NULL, 10);
	if (ids)
		qsort(ids, nr_dirs, sizeof(*ids), by_number);
	for (unsigned int i = 0; ids && i < nr_dirs && n < max_domains; i++) {
		if (ids[i] < first_domain)
			continue;
		memset(&info[n], 0, sizeof(info[n]));
		info[n].domain = (domid_t)ids[i];
		info[n].flags = XEN_DOMINF_running;
		info[n].tot_pages = 4096;
		info[n].max_pages = 4096;
		info[n].max_vcpu_id = 0;
		n++;
	}
	free(ids);
	free(dirs);
	return (int)n;
}

int xc_vcpu_getinfo(xc_interface *xch, uint32_t domid, uint32_t vcpu,
		    xc_vcpuinfo_t *info)
{
	(void)xch;
	(void)domid;
	memset(info, 0, sizeof(*info));
	info->vcpu = vcpu;
	return 0;
}

int xc_version(xc_interface *xch, int cmd, void *arg)
{
	(void)xch;
	if (cmd == XENVER_version)
		return 4 << 16 | 20;
	if (cmd == XENVER_extraversion && arg)
		strcpy(arg, ".0-fake");
	return 0;
}

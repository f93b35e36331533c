// SPDX-License-Identifier: MIT
/*
 * xensim: the toolstack's view of domains — create, destroy, inspect.
 */
#include "libblk/parse.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/xensim/sim-internal.h"
#include "tools/xensim/xensim.h"

const char *xensim_dir(void)
{
	const char *dir = getenv("XENSIM_DIR");

	return (dir && *dir) ? dir : NULL;
}

int xensim_host_init(const char *dir)
{
	int ret;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	ret = sim_dom_create(dir, 0, 0);
	return ret == -EEXIST ? 0 : ret;
}

int xensim_domain_create(const char *dir, uint32_t domid, uint32_t nr_pages)
{
	if (domid > 0x7fef)
		return -EINVAL;
	return sim_dom_create(dir, domid, nr_pages);
}

int sim_dom_destroy(const char *dir, uint32_t domid)
{
	struct sim_cache cache;
	struct sim_dom *d;
	int ret;

	ret = sim_dom_open(dir, domid, &d);
	if (ret)
		return ret;
	if (atomic_exchange(&d->sh->hdr.dying, 1)) {
		sim_dom_close(d);
		return 0;
	}
	/* Close every port: the peers are left unbound, as in Xen. */
	ret = sim_cache_init(&cache, dir);
	if (!ret) {
		sim_port_close_all(&cache, d, NULL);
		sim_cache_fini(&cache);
	}
	sim_virq_dom_exc(dir);
	/* Mappings of processes that are gone do not keep the domain. */
	sim_reap_orphaned_maps(dir);
	sim_dom_remove_if_released(dir, d);
	sim_dom_close(d);
	return ret;
}

int xensim_domain_destroy(const char *dir, uint32_t domid)
{
	if (domid == 0)
		return -EPERM;
	return sim_dom_destroy(dir, domid);
}

static bool is_tombstoned(const char *dir, uint32_t domid)
{
	char path[4096];

	if (sim_path(path, sizeof(path), dir, domid, NULL))
		return false;
	strncat(path, ".gone", sizeof(path) - strlen(path) - 1);
	return access(path, F_OK) == 0;
}

static uint32_t count_mapped_grants(const struct sim_dom *d)
{
	uint32_t i, n = 0;

	for (i = 0; i < SIM_NR_GRANTS; i++)
		n += SIM_GNT_MAPS(atomic_load(&d->sh->grants[i].word));
	return n;
}

static uint32_t count_ports_towards(const struct sim_dom *d, uint32_t domid)
{
	const struct sim_port *p;
	uint32_t i, n = 0;

	for (i = 1; i < SIM_NR_PORTS; i++) {
		p = &d->sh->ports[i];
		if (atomic_load(&p->state) != SIM_PORT_FREE &&
		    atomic_load(&p->state) != SIM_PORT_VIRQ &&
		    atomic_load(&p->remote_dom) == domid &&
		    !sim_port_orphaned(p))
			n++;
	}
	return n;
}

static bool parse_dom_name(const char *name, uint32_t *domid)
{
	uint64_t v;

	if (strncmp(name, "dom", 3) || blk_parse_u64(name + 3, 0xffff, &v))
		return false;
	*domid = (uint32_t)v;
	return true;
}

/* Ports other domains hold towards @domid: what its peers must unbind. */
static int count_bound_ports(const char *dir, uint32_t domid, uint32_t *out)
{
	struct dirent *de;
	struct sim_dom *d;
	uint32_t other;
	DIR *dh;

	dh = opendir(dir);
	if (!dh)
		return -errno;
	*out = 0;
	while ((de = readdir(dh))) {
		if (!parse_dom_name(de->d_name, &other) || other == domid)
			continue;
		if (sim_dom_open(dir, other, &d))
			continue;
		*out += count_ports_towards(d, domid);
		sim_dom_close(d);
	}
	closedir(dh);
	return 0;
}

int xensim_domain_stats(const char *dir, uint32_t domid,
			struct xensim_domain_stats *out)
{
	struct sim_dom *d;
	int ret;

	memset(out, 0, sizeof(*out));
	/* Count no mapping of a process that is gone (and may free @domid). */
	sim_reap_orphaned_maps(dir);
	ret = sim_dom_open(dir, domid, &d);
	if (!ret) {
		out->mapped_grants = count_mapped_grants(d);
		out->dying = atomic_load(&d->sh->hdr.dying) != 0;
		sim_dom_close(d);
	} else if (ret == -ENOENT && is_tombstoned(dir, domid)) {
		out->dying = true;
	} else {
		return ret;
	}
	return count_bound_ports(dir, domid, &out->bound_ports);
}

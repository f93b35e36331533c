// SPDX-License-Identifier: MIT
/*
 * xensim-stat: what a simulated domain still has mapped and bound, for
 * tests that assert nothing leaks. Also sets up a host's state directory
 * for xensim-host.
 *
 *   xensim-stat DIR DOMID...  prints "mapped_grants=N bound_ports=N dying=0|1"
 *                             for each domain, a line each, read back to
 *                             back (tests comparing domains want one moment)
 *   xensim-stat --init DIR  makes DIR a simulated host with dom0
 */
#include "libblk/parse.h"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/xensim/xensim.h"

static int usage(void)
{
	fprintf(stderr, "usage: xensim-stat DIR DOMID...\n"
			"       xensim-stat --init DIR\n");
	return 2;
}

static int parse_domid(const char *s, uint32_t *out)
{
	uint64_t v;

	if (blk_parse_u64(s, 0x7fef, &v) < 0)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int init_host(const char *dir)
{
	int ret = xensim_host_init(dir);

	if (ret) {
		fprintf(stderr, "xensim-stat: cannot set up %s: %s\n", dir,
			strerror(-ret));
		return 1;
	}
	return 0;
}

static int print_stats(const char *dir, const char *domid_arg)
{
	struct xensim_domain_stats st;
	uint32_t domid;
	int ret;

	if (parse_domid(domid_arg, &domid)) {
		fprintf(stderr, "xensim-stat: bad domain id '%s'\n", domid_arg);
		return 2;
	}
	ret = xensim_domain_stats(dir, domid, &st);
	if (ret) {
		fprintf(stderr, "xensim-stat: domain %u in %s: %s\n", domid,
			dir, strerror(-ret));
		return 1;
	}
	printf("mapped_grants=%u bound_ports=%u dying=%d\n", st.mapped_grants,
	       st.bound_ports, st.dying ? 1 : 0);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "--init"))
		return argc == 3 ? init_host(argv[2]) : usage();
	for (int i = 2; i < argc && !ret; i++)
		ret = print_stats(argv[1], argv[i]);
	return ret;
}

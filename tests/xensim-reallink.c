// SPDX-License-Identifier: MIT
/*
 * Linked against the REAL libxengnttab/libxenevtchn and using a symbol of
 * every version node (VERS_1.0, 1.1, 1.2). Run with LD_LIBRARY_PATH at
 * the xensim fakes it must load them cleanly: opening succeeds (the real
 * libraries fail with ENOENT here) and ld.so prints no version warning.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <xen/grant_table.h>
#include <xenevtchn.h>
#include <xengnttab.h>

int main(void)
{
	xengnttab_grant_copy_segment_t seg = { 0 };
	xengnttab_handle *gt = xengnttab_open(NULL, 0);
	xenevtchn_handle *ev = xenevtchn_open(NULL, 0);
	char buf[8] = "xensim";
	int ret = 0;

	if (!gt || !ev) {
		perror("xengnttab_open/xenevtchn_open");
		return 1;
	}
	seg.source.virt = buf;
	seg.dest.virt = buf + 4;
	seg.len = 2;
	if (xengnttab_grant_copy(gt, 1, &seg) || seg.status != GNTST_okay ||
	    xengnttab_fd(gt) < 0 || xenevtchn_restrict(ev, 0) ||
	    xenevtchn_fd(ev) < 0 || xenevtchn_fdopen(NULL, -1, 0) != NULL) {
		fprintf(stderr, "a fake call misbehaved\n");
		ret = 1;
	}
	xenevtchn_close(ev);
	xengnttab_close(gt);
	if (!ret)
		printf("fakes loaded: %s\n", buf);
	return ret;
}

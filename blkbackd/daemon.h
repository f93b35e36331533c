/* SPDX-License-Identifier: MIT */
/*
 * State of the daemon's main thread: the xenstore connection, the worker
 * pool and the devices being served. Only the main thread touches it.
 */
#ifndef BLKBACKD_DAEMON_H
#define BLKBACKD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <xengnttab.h>
#include <xenstore.h>

#include "blkbackd/options.h"
#include "libblk/budget.h"

#define DAEMON_MAX_ROOTS 2

struct worker;
struct vbd;
struct host_errors;
struct balance;
struct opener;

struct daemon {
	struct options opts;
	int argc; /* the command line, read again by a reload */
	char **argv;
	struct xs_handle *xs;
	unsigned int domid;
	/*
	 * The backend directories served, as the serve setting says:
	 * /local/domain/<domid>/backend/vbd and .../backend/vbd3. A device
	 * knows its directory by index.
	 */
	char be_root[DAEMON_MAX_ROOTS][64];
	unsigned int nr_roots;

	struct blk_budget buffers; /* bounce pages, shared by the workers */
	struct blk_budget mappings; /* persistent grants, shared likewise */
	xengnttab_handle *grants; /* shared by the workers, see worker.h */
	struct worker **workers;
	unsigned int nr_workers;
	int broken_fd[2]; /* workers report broken rings here */
	int closed_fd; /* eventfd: workers closed rings (vbd_rings_closed()) */
	bool stopping; /* shutting down: closed rings end their devices */
	/*
	 * It refused to start for a reason no restart mends (the kernel's
	 * backend is bound, another daemon serves the state directory, the
	 * control group does not exist): the exit status is EXIT_REFUSED.
	 */
	bool refused;
	struct host_errors *host_errors; /* shared with the workers */
	struct opener *opener; /* remote images' opens (opener.h) */

	struct vbd *vbds;
	unsigned int nr_vbds;
	unsigned int moving_rings; /* vbd_move_ring()s under way */
	struct balance *balance; /* see balance.h */
	uint64_t next_cookie;
};

#endif /* BLKBACKD_DAEMON_H */

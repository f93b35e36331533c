/* SPDX-License-Identifier: MIT */
/*
 * The simulated toolstack: what libxl 4.17 does to create and destroy a
 * domain and to plug and unplug a `vbd` disk whose backend is served by a
 * userspace daemon (`script=blkbackd`), or a `vbd3` one as libxl 4.19 and
 * later plug a `backendtype=tap` disk. It writes the same xenstore keys,
 * with the same permissions and in the same order (libxl's own copy of the
 * backend keys under /libxl/<domid>/device/vbd included, a `vbd3` disk's
 * too, as the real-Xen test's dump of libxl 4.20 shows), and waits with the
 * same 10 s deadlines, so the daemon under test sees what it would see
 * under xl.
 */
#ifndef XENSIM_TOOLSTACK_H
#define XENSIM_TOOLSTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

/* libxl's deadline for a backend to change state (LIBXL_DESTROY_TIMEOUT). */
#define TOOLSTACK_STATE_TIMEOUT_MS 10000
/* Where xl looks for hotplug scripts. */
#define TOOLSTACK_DEFAULT_SCRIPT "/etc/xen/scripts/blkbackd"

int toolstack_domain_create(struct xs_handle *xs, const char *simdir,
			    uint32_t domid, uint32_t mem_mb);
/*
 * Kill the domain (it becomes dying in xensim), release it in xenstored so
 * `@releaseDomain` fires, and remove /local/domain/@domid and libxl's
 * /libxl/@domid. With @remove_backends, also remove backend/vbd/@domid and
 * backend/vbd3/@domid under dom0 as libxl does
 * once the devices are gone; without it the backend sees a guest that died
 * with devices still plugged.
 */
int toolstack_domain_destroy(struct xs_handle *xs, const char *simdir,
			     uint32_t domid, bool remove_backends);

struct toolstack_disk {
	uint32_t domid;
	uint32_t backend_domid;
	const char *vdev; /* "xvda" */
	const char *target; /* image path, written verbatim as `params` */
	bool readonly;
	/*
	 * The hotplug script, written to the backend's `script` node and run
	 * with `add` once the backend is in InitWait, unless the backend is
	 * in a driver domain (backend_domid not 0): as libxl, the toolstack
	 * then runs none, `xl devd` does there. NULL: a toolstack that
	 * runs no script and writes no `script` node (--no-script), so the
	 * backend has no hotplug-status to wait for. libxl itself always
	 * writes one for a vbd.
	 */
	const char *script;
	/*
	 * How long to wait between seeing InitWait and running the script,
	 * as a slow script or a busy xl would: a backend that connects
	 * without waiting for hotplug-status shows up in that window.
	 */
	unsigned int script_delay_ms;
	const char *device_type; /* "disk" (NULL) or "cdrom" */
	/* discard-enable=0 even when writable (zero: libxl's default). */
	bool no_discard;
	/*
	 * backendtype=tap, as libxl 4.19 and later write it: the backend
	 * under backend/vbd3 with type "vbd3" and params "FORMAT:TARGET",
	 * the script run with XENBUS_TYPE=vbd3. @format is "aio" (raw,
	 * NULL) or "vhd", libxl's names for the two formats it allows.
	 */
	bool tap;
	const char *format;
};

/* Failure details for the CLI's message, filled on error. */
struct toolstack_error {
	char what[256];
	int last_state;
};

/*
 * Plug @disk: both xenstore trees in one transaction, wait up to 10 s for
 * backend state 2, then run the hotplug script with `add`. As libxl, a
 * script that exits non-zero fails the attach, and its `hotplug-error`
 * (read only then) is the message in @err.
 */
int toolstack_disk_attach(struct xs_handle *xs,
			  const struct toolstack_disk *disk,
			  struct toolstack_error *err);
/*
 * Unplug: online=0 and state=5, wait up to 10 s for state 6, run the
 * script with `remove`, then remove both trees unless @keep_nodes. The
 * script runs and the nodes go even when the wait times out (as libxl
 * forces removal), but the timeout is still reported.
 */
int toolstack_disk_detach(struct xs_handle *xs,
			  const struct toolstack_disk *disk, bool keep_nodes,
			  struct toolstack_error *err);

#endif /* XENSIM_TOOLSTACK_H */

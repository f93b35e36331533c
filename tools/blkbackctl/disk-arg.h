/* SPDX-License-Identifier: MIT */
/*
 * What an operator types for a domain and for one of its disks, as xl
 * takes it: a domain is its id or its name (/local/domain/N/name, which
 * the toolstack writes), a disk is DOMAIN/VDEV with VDEV a device number
 * or any name Xen accepts (blk_vdev_to_devid: xvdb, hda, sdc1, d1p2...).
 * So "1/51728", "1/xvdb" and "web1/xvdb" name the same disk.
 *
 * Names are read from xenstore, opened on first need and kept open until
 * domains_close(); a domid typed as digits needs no xenstore. Each lookup
 * is bounded (deadline.h): a xenstore that does not answer ends the
 * command, exit status 1, saying so. One thread.
 */
#ifndef BLKBACKCTL_DISK_ARG_H
#define BLKBACKCTL_DISK_ARG_H

#include <stdbool.h>
#include <stdint.h>

struct xs_handle;

/* The xenstore connection names are read through. */
struct domains {
	struct xs_handle *xs;
	bool tried; /* xs_open() was called (xs may still be NULL) */
};

/* One disk: a guest's domain and its device number. */
struct disk_ref {
	uint32_t domid;
	uint32_t devid;
};

/*
 * @text as a domain: digits are its id, anything else its name. Returns
 * 0, or the exit status after saying why on stderr: 2 for what is no
 * domain id nor name, 1 for a name no domain has (or xenstore out of
 * reach).
 */
int domain_arg(struct domains *ds, const char *text, uint32_t *domid);

/*
 * @text as DOMAIN/VDEV; the same returns, 2 also when the slash or VDEV
 * is missing or VDEV is no device name Xen accepts. @cmd starts the
 * messages ("stats").
 */
int disk_arg(struct domains *ds, const char *cmd, const char *text,
	     struct disk_ref *out);

/*
 * The name of domain @domid, to be freed; NULL when it has none, or
 * xenstore cannot be read (a driver domain may not read guests' nodes).
 * Prints nothing.
 */
char *domain_name(struct domains *ds, uint32_t domid);

void domains_close(struct domains *ds);

#endif /* BLKBACKCTL_DISK_ARG_H */

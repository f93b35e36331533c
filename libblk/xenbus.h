/* SPDX-License-Identifier: MIT */
/*
 * The backend side of the xenbus handshake for a virtual block device:
 * what the backend reads from and writes to xenstore at each state.
 *
 * Frontend nodes are guest-written: every value is parsed strictly and
 * range-checked. Backend writes go through transactions that first check
 * the backend directory still exists, so a device the toolstack already
 * removed is never resurrected by a late write.
 */
#ifndef LIBBLK_XENBUS_H
#define LIBBLK_XENBUS_H

#include <stdbool.h>
#include <stdint.h>
#include <xen/io/xenbus.h>
#include <xenstore.h>

#include "libblk/blkif_abi.h"

/* Read @dir/@key as a string (caller frees). -ENOENT when absent. */
int xenbus_read_str(struct xs_handle *xs, const char *dir, const char *key,
		    char **out);
/*
 * Read @dir/@key as a decimal number no larger than @max. -ENOENT when
 * absent, -EINVAL when it is not a plain number in range.
 */
int xenbus_read_uint(struct xs_handle *xs, const char *dir, const char *key,
		     uint64_t max, uint64_t *out);
/* The state at @dir/state, XenbusStateUnknown when absent or garbage. */
enum xenbus_state xenbus_read_state(struct xs_handle *xs, const char *dir);

/*
 * Switch the backend at @be to @state, unless the directory is gone
 * (-ENOENT). Writes @error into @be/error first when it is not NULL.
 */
int xenbus_switch_state(struct xs_handle *xs, const char *be,
			enum xenbus_state state, const char *error);

/* Features and transport limits published at InitWait. */
struct blk_backend_features {
	bool flush;
};

/* Publish @f and move to InitWait, in one transaction. */
int blk_xenbus_init_wait(struct xs_handle *xs, const char *be,
			 const struct blk_backend_features *f);

/* What the frontend wrote for one ring. */
struct blk_frontend_ring {
	uint32_t ring_ref;
	uint32_t event_channel;
	enum blkif_abi abi;
};

/*
 * Read the frontend's ring parameters from @fe. On -EINVAL or -ENOENT,
 * *@what names the node at fault.
 */
int blk_xenbus_read_frontend(struct xs_handle *xs, const char *fe,
			     struct blk_frontend_ring *ring, const char **what);

struct blk_disk_info {
	uint64_t sectors;
	unsigned int info; /* VDISK_* */
	unsigned int sector_size;
	unsigned int physical_sector_size;
};

/* Publish the disk's properties and move to Connected, in one transaction. */
int blk_xenbus_connected(struct xs_handle *xs, const char *be,
			 const struct blk_disk_info *disk);

#endif /* LIBBLK_XENBUS_H */

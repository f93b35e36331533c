/* SPDX-License-Identifier: MIT */
/*
 * The one xenstore module: node reads and writes, numbers parsed strictly
 * (libblk/parse.h), the transaction retry loop and waiting for a device's
 * state, used by the daemon and by the simulator's toolstack and blkfront;
 * and the backend side of the xenbus handshake for a virtual block device:
 * what the backend reads from and writes to xenstore at each state.
 *
 * Frontend nodes are guest-written: every value is parsed strictly and
 * range-checked. Backend writes go through transactions that first check
 * the backend directory still exists, so a device the toolstack already
 * removed is never resurrected by a late write.
 *
 * Nothing here keeps state: any thread may call it with its own handle.
 */
#ifndef LIBBLK_XENBUS_H
#define LIBBLK_XENBUS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xen/io/xenbus.h>
#include <xenstore.h>

#include "libblk/blkif_abi.h"

/*
 * Read @dir/@key as a string (caller frees). -ENOENT when absent, -EINVAL
 * when the value holds a NUL byte.
 */
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

/* Read @path, in @t, as a decimal number; -ENOENT absent, -EINVAL junk. */
int xenbus_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *path,
		    uint64_t *out);
/* Write a printf-formatted value to @path, in @t. */
int xenbus_printf(struct xs_handle *xs, xs_transaction_t t, const char *path,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int xenbus_vprintf(struct xs_handle *xs, xs_transaction_t t, const char *path,
		   const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* mkdir @path with @perms (@n of them), in @t (libxl__xs_mknod). */
int xenbus_mkdir(struct xs_handle *xs, xs_transaction_t t, const char *path,
		 struct xs_permissions *perms, unsigned int n);
/* Does @path exist? */
bool xenbus_exists(struct xs_handle *xs, const char *path);
/*
 * Has domain @domid gone, as far as this domain may know? Only a
 * privileged domain may ask xenstored (XS_IS_DOMAIN_INTRODUCED); a driver
 * domain is refused, and then nothing is known to be gone: the frontend's
 * state and the toolstack's removal of the backend end its devices.
 */
bool xenbus_domain_gone(struct xs_handle *xs, uint32_t domid);

/*
 * Run @fn in a transaction and commit it, again from the start while
 * xenstored reports a conflict (EAGAIN), at most 100 times. @fn's own
 * failure (-errno) aborts the transaction and is returned.
 */
int xenbus_transact(struct xs_handle *xs,
		    int (*fn)(struct xs_handle *xs, xs_transaction_t t,
			      void *arg),
		    void *arg);

/* A bit per state, for xenbus_wait_state()'s mask. */
#define XENBUS_STATE_BIT(s) (1u << (s))

/*
 * Wait until "@dir/state" holds a state whose bit is in @wanted_mask.
 * Returns that state, or -ETIMEDOUT after @timeout_ms (the last state seen
 * is stored in *@last when @last is not NULL, 0 if the node was missing).
 * Watches @dir/state meanwhile, with a token of its own.
 */
int xenbus_wait_state(struct xs_handle *xs, const char *dir,
		      unsigned int wanted_mask, int timeout_ms, int *last);

/* CLOCK_MONOTONIC in milliseconds, for deadlines. */
int64_t xenbus_now_ms(void);

/*
 * Switch the backend at @be to @state, unless the directory is gone
 * (-ENOENT). Writes @error into @be/error first when it is not NULL.
 */
int xenbus_switch_state(struct xs_handle *xs, const char *be,
			enum xenbus_state state, const char *error);

/* Features and transport limits published at InitWait. */
struct blk_backend_features {
	bool flush;
	bool barrier;
	bool persistent;
	bool discard;
	uint32_t discard_granularity; /* bytes */
	uint32_t discard_alignment; /* bytes */
	uint16_t max_indirect_segments; /* 0: no BLKIF_OP_INDIRECT */
	unsigned int max_ring_order;
	unsigned int max_queues;
};

/* Publish @f and move to InitWait, in one transaction. */
int blk_xenbus_init_wait(struct xs_handle *xs, const char *be,
			 const struct blk_backend_features *f);

/* The most queues a frontend may ask for. */
#define BLK_MAX_QUEUES 64

/* What the frontend wrote for one queue. */
struct blk_frontend_queue {
	uint32_t ring_refs[BLK_MAX_RING_PAGES];
	uint32_t event_channel;
};

/* What the frontend wrote for the whole device. */
struct blk_frontend {
	unsigned int nr_queues;
	unsigned int ring_order;
	enum blkif_abi abi;
	bool persistent;
	bool large_sectors;
	struct blk_frontend_queue queue[BLK_MAX_QUEUES];
};

/*
 * Read the frontend's connection parameters from @fe, within what @f
 * offered. On -EINVAL or -ENOENT, @what (of @what_len bytes) names the
 * node at fault.
 */
int blk_xenbus_read_frontend(struct xs_handle *xs, const char *fe,
			     const struct blk_backend_features *f,
			     struct blk_frontend *out, char *what,
			     size_t what_len);

struct blk_disk_info {
	uint64_t sectors; /* in sector_size units */
	unsigned int info; /* VDISK_* */
	unsigned int sector_size;
	unsigned int physical_sector_size;
};

/* Publish the disk's properties and move to Connected, in one transaction. */
int blk_xenbus_connected(struct xs_handle *xs, const char *be,
			 const struct blk_disk_info *disk);

/*
 * Online resize: the new size and the state re-written in one transaction,
 * so the frontend's state watch fires and it re-reads sectors.
 */
int blk_xenbus_resized(struct xs_handle *xs, const char *be, uint64_t sectors);

/*
 * Write the path of the image opened for @be to @be/physical-device-path,
 * where libxl finds it for an HVM guest's emulated disk. Returns 0 or
 * -errno.
 */
int blk_xenbus_write_image_path(struct xs_handle *xs, const char *be,
				const char *path);

/* Remove @be/error, the reason of an earlier failure; absent is fine. */
void blk_xenbus_clear_error(struct xs_handle *xs, const char *be);

/*
 * ---- what the toolstack writes for a vbd (libblk/xenbus-toolstack.c) ----
 * The backend directory is the toolstack's (the guest cannot write it);
 * its values are still parsed strictly.
 */

/* The image in a params value: without an "aio:" or "file:" prefix. */
const char *blk_xenbus_image_path(const char *params);

/*
 * Does a params value name a VHD image ("vhd:PATH")? libxl writes
 * backendtype=tap disks as "FORMAT:PATH", FORMAT "aio" for a raw image or
 * "vhd"; a VHD file read as raw would show the guest its container, not
 * its disk.
 */
bool blk_xenbus_params_vhd(const char *params);

/* A mode value: "r" is read-only, anything starting with 'w' writable. */
int blk_xenbus_parse_mode(const char *mode, bool *readonly);

/* The disk the toolstack asked for. */
struct blk_vbd_config {
	char *params; /* verbatim */
	const char *path; /* in params: the image (blk_xenbus_image_path()) */
	/*
	 * params is "vhd:PATH", as libxl writes a backendtype=tap disk in
	 * VHD format: not a raw image, so not served. path is PATH, and no
	 * node after params was read.
	 */
	bool vhd;
	bool readonly; /* mode=r, or a cdrom */
	bool cdrom; /* device-type=cdrom */
	bool removable; /* removable=1 */
	bool discard; /* discard-enable is 1, absent or unreadable */
};

/*
 * Read @be's params, then (unless it names a VHD image) its mode,
 * device-type, removable and discard-enable.
 * Returns 0, or -errno with *@bad naming the node at fault: "params"
 * (absent or unreadable: the error of the read) or "mode" (-EINVAL: not
 * 'r' or 'w'). Free @out with blk_vbd_config_free().
 */
int blk_xenbus_read_vbd_config(struct xs_handle *xs, const char *be,
			       struct blk_vbd_config *out, const char **bad);
void blk_vbd_config_free(struct blk_vbd_config *c);

/* Does @be name a hotplug script (a non-empty script node)? */
bool blk_xenbus_has_script(struct xs_handle *xs, const char *be);

enum blk_hotplug_state {
	BLK_HOTPLUG_PENDING, /* the script has not reported yet */
	BLK_HOTPLUG_CONNECTED, /* it reported success, or there is none */
	BLK_HOTPLUG_FAILED, /* it reported an error */
};

/* Where @be's hotplug script stands, from its hotplug-status. */
enum blk_hotplug_state blk_xenbus_hotplug_state(struct xs_handle *xs,
						const char *be);

/*
 * The frontend's directory from @be/frontend, into @out (of @size bytes).
 * -EINVAL unless it is an absolute path that fits.
 */
int blk_xenbus_read_frontend_path(struct xs_handle *xs, const char *be,
				  char *out, size_t size);

/* Does @be/online say 1? (0 when the toolstack is removing the device.) */
bool blk_xenbus_online(struct xs_handle *xs, const char *be);

/*
 * A path component that is a domain or device id: digits up to
 * UINT32_MAX, then the end or a '/', where *@end then points. -EINVAL
 * otherwise.
 */
int blk_xenbus_parse_id(const char *s, const char **end, uint32_t *out);

/*
 * A disk's I/O limits (libblk/throttle.h) in its backend directory, which
 * only the backend's domain may write: requests and bytes per second,
 * decimal, 0 or absent for none (blkbackd(8), "I/O limits").
 */
#define BLK_XENBUS_LIMIT_IOPS "limit-iops"
#define BLK_XENBUS_LIMIT_BPS "limit-bytes-per-second"

/* Write both limits, in one transaction; -ENOENT when @be is gone. */
int blk_xenbus_write_limits(struct xs_handle *xs, const char *be, uint64_t iops,
			    uint64_t bps);

#endif /* LIBBLK_XENBUS_H */

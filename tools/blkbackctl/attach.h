/* SPDX-License-Identifier: MIT */
/*
 * blkbackctl attach and detach: plug and unplug a disk of a guest that no
 * xl manages, writing and removing the xenstore trees as libxl does
 * (libblk/toolstack.h), then waiting, bounded, for blkbackd to answer.
 * They talk to xenstore, not to the daemon's control socket: the daemon
 * sees the device as it would see one from xl. Run in the toolstack's
 * domain (dom0), which alone may write both trees. Their xenstore calls
 * are bounded by the caller's deadline_store_begin() (deadline.h); each
 * names what it does with deadline_store_doing().
 */
#ifndef BLKBACKCTL_ATTACH_H
#define BLKBACKCTL_ATTACH_H

#include <stdbool.h>
#include <stdint.h>

struct attach_options {
	bool readonly; /* mode=r */
	bool cdrom; /* device-type=cdrom (read-only) */
	bool no_discard; /* discard-enable=0 */
	unsigned int timeout_s; /* how long to wait for blkbackd */
	bool json; /* say what was done as JSON (--json) */
};

/* libxl's deadline for a backend to change state. */
#define ATTACH_DEFAULT_TIMEOUT_S 10

/*
 * Plug @image as @vdev of domain @domid and wait for blkbackd to offer it
 * (InitWait), then say so on stdout. A disk blkbackd refuses, or no
 * answer in time, is unplugged again and reported on stderr. Returns the
 * exit status.
 */
int attach_disk(uint32_t domid, const char *image, const char *vdev,
		const struct attach_options *o);

/*
 * Unplug @vdev of domain @domid: online=0 and Closing, wait for blkbackd
 * to close it, then remove both trees (even after a timeout, as libxl
 * forces the removal, which is then reported). Only @o's timeout_s and
 * json count. Returns the exit status.
 */
int detach_disk(uint32_t domid, const char *vdev,
		const struct attach_options *o);

#endif /* BLKBACKCTL_ATTACH_H */

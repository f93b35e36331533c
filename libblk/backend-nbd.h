/* SPDX-License-Identifier: MIT */
/*
 * Images on an NBD server, through libnbd: `nbd://HOST[:PORT]/EXPORT`,
 * `nbd+unix:///EXPORT?socket=PATH` and the other URIs libnbd knows.
 *
 * blk_nbd_connect() blocks while it connects and negotiates, so it runs
 * on the daemon's main thread, never on a worker. libnbd itself is loaded
 * then, the first time (libblk/dynlib.h). The backend then moves
 * the handle's traffic through the worker's io_uring with libnbd's
 * asynchronous API: no thread of its own, none per request. One handle
 * serves one ring; a disk gets a connection per queue only when the
 * server says that is safe (multi-conn), otherwise one queue.
 *
 * A server that goes away fails the I/O in flight and every later request
 * of that connection with an error; the guest gets error answers until
 * the disk is attached again. The daemon is not affected.
 */
#ifndef LIBBLK_BACKEND_NBD_H
#define LIBBLK_BACKEND_NBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nbd_handle;
struct blk_backend;

/* What the server said of its export. */
struct blk_nbd_export {
	uint64_t size; /* bytes */
	bool readonly;
	bool can_flush;
	bool can_fua;
	bool can_trim;
	bool multi_conn; /* one flush covers every connection's writes */
};

/* Does @target name an NBD export rather than a file? */
bool blk_nbd_is_uri(const char *target);

/*
 * Connect to @uri and read what it exports. -errno on failure, with libnbd's
 * explanation in @why. A read-only export refuses a writable connection
 * (-EROFS).
 */
int blk_nbd_connect(const char *uri, bool readonly, struct nbd_handle **out,
		    struct blk_nbd_export *exp, char *why, size_t why_len);

/* Close a handle blk_nbd_connect() gave (NULL: nothing). */
void blk_nbd_close(struct nbd_handle *h);

/* A backend over @h, which it takes over (closed by its destroy). */
int blk_backend_nbd_new(struct nbd_handle *h, const struct blk_nbd_export *exp,
			struct blk_backend **out);

#endif /* LIBBLK_BACKEND_NBD_H */

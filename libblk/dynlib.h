/* SPDX-License-Identifier: MIT */
/*
 * Libraries loaded when first needed. libnbd (with its TLS and XML
 * libraries) and librbd (with librados) would add 5 and 17 MiB to the RSS
 * of a daemon that serves only files; they are opened with dlopen() the
 * first time a disk names an NBD or RBD target instead of being linked.
 * A host without them still serves files, and such a disk fails with the
 * package to install.
 */
#ifndef LIBBLK_DYNLIB_H
#define LIBBLK_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * One such library: what its user fills in statically (BLK_DYNLIB), and
 * what the first blk_dynlib_ready() finds. @slots is the user's table of
 * function pointers, read as @count slots of void * in the order of
 * @names; the user calls through it only after a blk_dynlib_ready() that
 * returned 0 (on its thread, or on one that handed it work after that).
 */
struct blk_dynlib {
	const char *soname; /* "libnbd.so.0" */
	const char *package; /* the Debian package that has it: "libnbd0" */
	const char *need; /* the start of a refusal: "NBD disks need libnbd" */
	const char *const *names;
	size_t count;
	void **slots;
	pthread_mutex_t lock; /* guards the rest */
	bool tried;
	int error;
	char why[256];
};

#define BLK_DYNLIB(so, pkg, needs, fn_names, table)                          \
	{                                                                    \
		.soname = (so), .package = (pkg), .need = (needs),           \
		.names = (fn_names),                                         \
		.count = sizeof(fn_names) / sizeof((fn_names)[0]),           \
		.slots = (void **)(table), .lock = PTHREAD_MUTEX_INITIALIZER \
	}

/*
 * Load @lib and look up every function it names, the first time; 0 when
 * it can be used, else -ENOENT (not installed) or -ENOSYS (too old), the
 * same each time, with the reason and the package to install in @why.
 * Any thread.
 */
int blk_dynlib_ready(struct blk_dynlib *lib, char *why, size_t why_len);

#endif /* LIBBLK_DYNLIB_H */

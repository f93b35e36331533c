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

#include <stddef.h>

/*
 * Open @soname (from Debian package @package); NULL with the reason, and
 * the package to install, in @why.
 */
void *blk_dynlib_open(const char *soname, const char *package, char *why,
		      size_t why_len);

/*
 * Look up function @name in @lib (opened as @soname) into *@fn; -ENOSYS
 * with @why filled when it has none.
 */
int blk_dynlib_sym(void *lib, const char *soname, const char *name, void **fn,
		   char *why, size_t why_len);

#endif /* LIBBLK_DYNLIB_H */

// SPDX-License-Identifier: MIT
#include "libblk/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

void *blk_dynlib_open(const char *soname, const char *package, char *why,
		      size_t why_len)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		snprintf(why, why_len, "%s (install the Debian package %s)",
			 dlerror(), package);
	return lib;
}

int blk_dynlib_sym(void *lib, const char *soname, const char *name, void **fn,
		   char *why, size_t why_len)
{
	*fn = dlsym(lib, name);
	if (*fn)
		return 0;
	snprintf(why, why_len, "%s has no %s: it is too old", soname, name);
	return -ENOSYS;
}

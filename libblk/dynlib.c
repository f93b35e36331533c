// SPDX-License-Identifier: MIT
#include "libblk/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

static int load(struct blk_dynlib *lib)
{
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(lib->why, sizeof(lib->why),
			 "%s (install the Debian package %s)", dlerror(),
			 lib->package);
		return -ENOENT;
	}
	for (size_t i = 0; i < lib->count; i++) {
		lib->slots[i] = dlsym(h, lib->names[i]);
		if (!lib->slots[i]) {
			snprintf(lib->why, sizeof(lib->why),
				 "%s has no %s: it is too old", lib->soname,
				 lib->names[i]);
			return -ENOSYS;
		}
	}
	return 0;
}

int blk_dynlib_ready(struct blk_dynlib *lib, char *why, size_t why_len)
{
	int ret;

	pthread_mutex_lock(&lib->lock);
	if (!lib->tried) {
		lib->tried = true;
		lib->error = load(lib);
	}
	ret = lib->error;
	if (ret)
		snprintf(why, why_len, "%s: %s", lib->need, lib->why);
	pthread_mutex_unlock(&lib->lock);
	return ret;
}

// SPDX-License-Identifier: MIT
/* blkbackctl snapshot (snapshot.h). */
#include "tools/blkbackctl/snapshot.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int snapshot_dest(const char *typed, char *out, size_t len)
{
	char cwd[PATH_MAX];
	int n;

	if (typed[0] == '@' || typed[0] == '/')
		n = snprintf(out, len, "%s", typed);
	else if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	else
		n = snprintf(out, len, "%s/%s", cwd, typed);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static const char *text_of(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v
		       ? json_object_get_string(v)
		       : NULL;
}

void show_snapshot(json_object *reply)
{
	const char *pause = text_of(reply, "pause_ms");

	printf("%s: snapshot %s taken", text_of(reply, "name") ?: "?",
	       text_of(reply, "dest") ?: "?");
	/* Null: its guest detached before it resumed. */
	if (!pause) {
		printf("; the guest detached meanwhile\n");
		return;
	}
	printf("; the guest paused %.2f ms (draining %.2f, copying %.2f, "
	       "resuming %.2f)\n",
	       json_object_get_double(json_object_object_get(reply, "pause_"
								    "ms")),
	       json_object_get_double(json_object_object_get(reply, "draining_"
								    "ms")),
	       json_object_get_double(json_object_object_get(reply, "copying_"
								    "ms")),
	       json_object_get_double(json_object_object_get(reply, "resuming_"
								    "ms")));
}

// SPDX-License-Identifier: MIT
/* blkbackctl snapshot (snapshot.h). */
#include "tools/blkbackctl/snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int snapshot_dest(const char *typed, char *out, size_t len)
{
	char cwd[PATH_MAX];
	int n;

	/* The request line is words: a DEST is one. */
	for (const char *c = typed; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return -EINVAL;
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
	       "resuming %.2f)",
	       json_object_get_double(json_object_object_get(reply, "pause_"
								    "ms")),
	       json_object_get_double(json_object_object_get(reply, "draining_"
								    "ms")),
	       json_object_get_double(json_object_object_get(reply, "copying_"
								    "ms")),
	       json_object_get_double(json_object_object_get(reply, "resuming_"
								    "ms")));
	/* snapshot --copy: what its passes and its pause copied. */
	if (text_of(reply, "copied_bytes"))
		printf("; %.1f MiB copied",
		       json_object_get_double(
			       json_object_object_get(reply, "copied_bytes")) /
			       (1024 * 1024));
	printf("\n");
}

static double ms_of(json_object *o, const char *key)
{
	return (double)json_object_get_int64(json_object_object_get(o, key)) /
	       1000;
}

void show_snapshots(json_object *device)
{
	json_object *s;
	int64_t taken, failed;

	if (!json_object_object_get_ex(device, "snapshots", &s))
		return;
	taken = json_object_get_int64(json_object_object_get(s, "taken"));
	failed = json_object_get_int64(json_object_object_get(s, "failed"));
	if (!taken && !failed)
		return;
	printf("  snapshots %" PRId64 " (%" PRId64 " failed)", taken, failed);
	/* No pause measured before the first one taken. */
	if (taken)
		printf(", the guest paused %.1f ms in all, %.1f the last, %.1f "
		       "the most",
		       ms_of(s, "paused_us"), ms_of(s, "last_pause_us"),
		       ms_of(s, "max_pause_us"));
	printf("\n");
}

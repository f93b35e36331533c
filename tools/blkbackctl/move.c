// SPDX-License-Identifier: MIT
/* blkbackctl move's progress as text (move.h). */
#include "tools/blkbackctl/move.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/blkbackctl/snapshot.h"

static const char *text_of(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v
		       ? json_object_get_string(v)
		       : NULL;
}

static double number(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v
		       ? json_object_get_double(v)
		       : 0;
}

static bool has(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v;
}

static bool phase_is(json_object *move, const char *phase)
{
	const char *p = text_of(move, "phase");

	return p && strcmp(p, phase) == 0;
}

bool move_switched(json_object *move)
{
	return phase_is(move, "switched");
}

bool move_ended(json_object *move)
{
	return move_switched(move) || phase_is(move, "cancelled") ||
	       phase_is(move, "failed") || phase_is(move, "copied");
}

int move_dest(const char *typed, char *out, size_t len)
{
	if (strncmp(typed, "rbd:", 4) != 0)
		return snapshot_dest(typed, out, len);
	/* The request line is words: a DEST is one. */
	for (const char *c = typed; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return -EINVAL;
	if (strlen(typed) >= len)
		return -ENAMETOOLONG;
	strcpy(out, typed);
	return 0;
}

#define MIB (1024.0 * 1024.0)

/* A snapshot --copy's, which never switches. */
static bool is_copy(json_object *m)
{
	json_object *v;

	return json_object_object_get_ex(m, "copy", &v) &&
	       json_object_get_boolean(v);
}

static void under_way(json_object *m, char *out, size_t len)
{
	double total = number(m, "total_bytes");
	double copied = number(m, "copied_bytes");
	/* Passes copy chunks again: a share of the image, at most all. */
	double share = total > 0 ? 100 * copied / total : 0;
	int n = snprintf(out, len,
			 "%s to %s: %s, %.1f of %.1f MiB copied (%.0f%%), "
			 "%.0f passes ended, %.1f MiB dirty",
			 is_copy(m) ? "copying (snapshot --copy)" : "moving",
			 text_of(m, "dest") ?: "?", text_of(m, "phase") ?: "?",
			 copied / MIB, total / MIB, share > 100 ? 100 : share,
			 number(m, "passes"), number(m, "dirty_bytes") / MIB);

	if (n < 0 || (size_t)n >= len)
		return;
	/* No rate before a pass ended. */
	if (has(m, "rate_bytes_per_second"))
		n += snprintf(out + n, len - (size_t)n, ", %.1f MiB/s",
			      number(m, "rate_bytes_per_second") / MIB);
	if (n < 0 || (size_t)n >= len)
		return;
	n += snprintf(out + n, len - (size_t)n, " (at most %.1f)",
		      number(m, "bytes_per_second") / MIB);
	if (n >= 0 && (size_t)n < len && has(m, "why"))
		snprintf(out + n, len - (size_t)n, "; %s", text_of(m, "why"));
}

void move_text(json_object *m, char *out, size_t len)
{
	const char *dest = text_of(m, "dest") ?: "?";

	if (!move_ended(m)) {
		under_way(m, out, len);
	} else if (phase_is(m, "copied")) {
		snprintf(out, len,
			 "copied to %s (snapshot --copy) after %.0f pass%s, "
			 "%.1f MiB copied; the disk stays on %s",
			 dest, number(m, "passes"),
			 number(m, "passes") == 1 ? "" : "es",
			 number(m, "copied_bytes") / MIB,
			 text_of(m, "source") ?: "?");
	} else if (!move_switched(m)) {
		snprintf(out, len, "%s to %s %s%s%s; the disk stays on %s",
			 is_copy(m) ? "copy" : "move", dest,
			 text_of(m, "phase"), has(m, "why") ? ": " : "",
			 has(m, "why") ? text_of(m, "why") : "",
			 text_of(m, "source") ?: "?");
	} else if (!has(m, "pause_ms")) {
		snprintf(out, len, "moved to %s; the guest detached meanwhile",
			 dest);
	} else {
		snprintf(out, len,
			 "moved to %s after %.0f pass%s: the guest paused "
			 "%.2f ms for the switch (draining %.2f, copying "
			 "%.2f, resuming %.2f)",
			 dest, number(m, "passes"),
			 number(m, "passes") == 1 ? "" : "es",
			 number(m, "pause_ms"), number(m, "draining_ms"),
			 number(m, "copying_ms"), number(m, "resuming_ms"));
	}
}

void show_move(json_object *device)
{
	json_object *m;
	char text[1024];

	if (!json_object_object_get_ex(device, "move", &m) || !m)
		return;
	move_text(m, text, sizeof(text));
	printf("  %s\n", text);
}

void show_moves(json_object *devices)
{
	bool first = true;

	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i), *m;
		char text[1024];

		if (!json_object_object_get_ex(d, "move", &m) || !m)
			continue;
		if (first)
			putchar('\n');
		first = false;
		move_text(m, text, sizeof(text));
		printf("%" PRId64 "/%" PRId64 " (%s) %s\n",
		       json_object_get_int64(json_object_object_get(d, "domi"
								       "d")),
		       json_object_get_int64(json_object_object_get(d, "devi"
								       "d")),
		       text_of(d, "domain") ?: "-", text);
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * The daemon's replies as text for a person: tables, sizes and rates in
 * the units people use, and nothing shown that is not known (a disk
 * whose guest has not connected has no size yet: "-", not 0). The JSON
 * is that of the control socket (blkbackd/control.h), with each device's
 * "domain" name added by blkbackctl where it printed one.
 */
#ifndef BLKBACKCTL_SHOW_H
#define BLKBACKCTL_SHOW_H

#include <json-c/json.h>

/*
 * The show_ functions that print devices return 0, or -errno when they
 * could not (out of memory, stdout failing).
 */

/* "list": one aligned row per device, by domain and device number. */
int show_list(json_object *devices);

/* "stats": each device's counters, limit and stage times. */
int show_stats(json_object *devices);

/*
 * "limit": "limit 500 requests/s, 50 MiB/s; held back 1.2 s". @unit is
 * the unit the bandwidth was typed in ('K', 'M', 'G', or 0 for bytes);
 * -1 when none was typed: then the largest unit it is a whole number of.
 */
void show_limit(json_object *limit, int unit);

/* "resize": each device's size before and after. */
int show_resize(json_object *devices);

/* "reload": the settings applied, and those waiting for a restart. */
void show_reload(json_object *reply);

#endif /* BLKBACKCTL_SHOW_H */

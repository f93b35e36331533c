// SPDX-License-Identifier: MIT
/*
 * The daemon's replies as tables and sentences (see show.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tools/blkbackctl/move.h"
#include "tools/blkbackctl/show.h"
#include "tools/blkbackctl/snapshot.h"
#include "tools/blkbackctl/table.h"

#define UNITS "KMGT"

/* @key of @o as text; "-" when absent or null. */
static const char *str(json_object *o, const char *key)
{
	json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return "-";
	s = json_object_get_string(v);
	return s ? s : "-";
}

static int64_t num(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v)
						     : 0;
}

static double dbl(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v)
						     : 0;
}

/* Whether @key of @o is there and not null: a size that is known. */
static bool known(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v;
}

/*
 * @bytes in the largest binary unit it reaches: "64 MiB", "1.5 GiB",
 * "512 B"; whole numbers when it is one, so that a size set in a unit
 * reads back as set.
 */
static const char *human_size(uint64_t bytes, char *buf, size_t len)
{
	uint64_t u = 1;
	int i = -1;

	while (i + 1 < (int)strlen(UNITS) && bytes >= u * 1024) {
		u *= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	else if (bytes % u == 0)
		snprintf(buf, len, "%" PRIu64 " %ciB", bytes / u, UNITS[i]);
	else
		snprintf(buf, len, "%.1f %ciB", (double)bytes / (double)u,
			 UNITS[i]);
	return buf;
}

/* "vbd 1/51712 (xvda of web1)": the daemon's name, the vdev, the VM. */
static const char *label(json_object *d, char *buf, size_t len)
{
	const char *vdev = str(d, "vdev"), *dom = str(d, "domain");
	bool has_vdev = strcmp(vdev, "-") && vdev[0];
	bool has_dom = strcmp(dom, "-") != 0;

	if (!has_vdev && !has_dom)
		snprintf(buf, len, "%s", str(d, "name"));
	else
		snprintf(buf, len, "%s (%s%s%s)", str(d, "name"),
			 has_vdev ? vdev : "",
			 has_vdev && has_dom ? " of " : "", has_dom ? dom : "");
	return buf;
}

/* Its size in bytes from @key and sector_size; "-" when not known. */
static const char *size_of(json_object *d, const char *key, char *buf,
			   size_t len)
{
	uint64_t sectors = (uint64_t)num(d, key),
		 sector_size = (uint64_t)num(d, "sector_size");

	if (!known(d, key) || !sector_size)
		return "-";
	return human_size(sectors * sector_size, buf, len);
}

static int add_list_row(struct table *t, json_object *d)
{
	char domid[16], devid[16], queues[16], size[32];
	bool up = strcmp(str(d, "state"), "connected") == 0;

	snprintf(domid, sizeof(domid), "%" PRId64, num(d, "domid"));
	snprintf(devid, sizeof(devid), "%" PRId64, num(d, "devid"));
	/* A device not connected has no rings: nothing negotiated yet. */
	snprintf(queues, sizeof(queues), "%" PRId64, num(d, "queues"));
	return table_add(t, (const char *const[]){
				    domid, devid, str(d, "domain"),
				    str(d, "vdev"), str(d, "state"),
				    up ? queues : NULL, str(d, "ring_order"),
				    str(d, "grants"), str(d, "abi"),
				    size_of(d, "sectors", size, sizeof(size)),
				    str(d, "image") });
}

/* By domain, then device number, as xl list orders domains. */
static int by_disk(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a,
		    *y = *(json_object *const *)b;
	int64_t dx = num(x, "domid"), dy = num(y, "domid");

	if (dx != dy)
		return dx < dy ? -1 : 1;
	dx = num(x, "devid");
	dy = num(y, "devid");
	return dx < dy ? -1 : dx > dy;
}

/* After the table and a blank line, what each waiting device waits for. */
static void print_waits(json_object *devices)
{
	bool first = true;

	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i), *why;

		if (!json_object_object_get_ex(d, "waiting_for", &why) || !why)
			continue;
		if (first)
			putchar('\n');
		first = false;
		printf("%" PRId64 "/%" PRId64 " (%s) waits for %s\n",
		       num(d, "domid"), num(d, "devid"), str(d, "domain"),
		       json_object_get_string(why));
	}
}

int show_list(json_object *devices)
{
	static const char *const header[] = {
		"DOMID", "DEVID",  "NAME", "VDEV", "STATE", "QUEUES",
		"ORDER", "GRANTS", "ABI",  "SIZE", "IMAGE",
	};
	struct table *t = table_new(sizeof(header) / sizeof(header[0]), header);
	int ret;

	if (!t)
		return -ENOMEM;
	json_object_array_sort(devices, by_disk);
	for (size_t i = 0; i < json_object_array_length(devices); i++)
		if (add_list_row(t, json_object_array_get_idx(devices, i)) <
		    0) {
			table_free(t);
			return -ENOMEM;
		}
	ret = table_print(t, stdout);
	if (ret == 0) {
		print_waits(devices);
		show_moves(devices);
	}
	return ret;
}

static void print_op(json_object *d, const char *op)
{
	json_object *o;

	if (!json_object_object_get_ex(d, op, &o))
		return;
	printf("  %-8s %12" PRId64 " requests %14" PRId64 " sectors %8" PRId64
	       " errors\n",
	       op, num(o, "requests"), num(o, "sectors"), num(o, "errors"));
}

static void print_stages(json_object *d)
{
	json_object *stages;

	if (!json_object_object_get_ex(d, "stages_us", &stages))
		return;
	json_object_object_foreach(stages, name, t)
	{
		if (!num(t, "count"))
			continue;
		printf("  stage %-8s mean %8.1f us  p50 %8.1f us  (%" PRId64
		       " requests)\n",
		       name, dbl(t, "mean_us"), dbl(t, "p50_us"),
		       num(t, "count"));
	}
}

/* "host errors: read EIO (Input/output error) 17, ..." */
static void print_host_errors(json_object *d)
{
	json_object *list;
	size_t n;

	if (!json_object_object_get_ex(d, "host_errors", &list))
		return;
	n = json_object_array_length(list);
	if (!n)
		return;
	printf("  host errors:");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(list, i);

		printf("%s %s %s (%s) %" PRId64, i ? "," : "", str(e, "op"),
		       str(e, "errno"), str(e, "message"), num(e, "count"));
	}
	printf("\n");
}

/* @bps in @unit ('K'...), or the largest it is a whole number of (-1). */
static void print_rate(uint64_t bps, int unit)
{
	const char *u = unit > 0 ? strchr(UNITS, unit) : NULL;
	int i = u ? (int)(u - UNITS) : -1;

	/* Not a whole number of it (another change came between): any. */
	if (i >= 0 && bps % (1ull << (10 * (i + 1))) != 0)
		unit = i = -1;
	if (unit < 0)
		while (i + 1 < (int)strlen(UNITS) &&
		       bps % (1ull << (10 * (i + 2))) == 0)
			i++;
	if (i < 0)
		printf("%" PRIu64 " bytes/s", bps);
	else
		printf("%" PRIu64 " %ciB/s", bps >> (10 * (i + 1)), UNITS[i]);
}

void show_limit(json_object *limit, int unit)
{
	int64_t iops = num(limit, "iops"), bps = num(limit, "bytes_per_second");

	printf("limit ");
	if (!iops && !bps)
		printf("none");
	if (iops)
		printf("%" PRId64 " requests/s", iops);
	if (bps) {
		printf("%s", iops ? ", " : "");
		print_rate((uint64_t)bps, unit);
	}
	printf("; held back %.1f s\n", dbl(limit, "throttled_seconds"));
}

/*
 * "ring moves 3 (3 kept mapped), paused 1.2 ms (0.8 closing: 0.5 draining,
 * 0.2 releasing)" (disks whose rings moved)
 */
/* The disk's persistent grants: mapped, registered, refused. */
static void show_grants(json_object *d)
{
	int64_t mapped = num(d, "mapped_grants");
	int64_t registered = num(d, "registered_grants");
	int64_t refused = num(d, "grant_map_errors");

	printf("  grants mapped %" PRId64, mapped);
	printf(" (%" PRId64 " registered with io_uring)", registered);
	printf(", refused by Xen %" PRId64 "\n", refused);
}

static void print_moves(json_object *d)
{
	json_object *m;

	if (!json_object_object_get_ex(d, "moves", &m) || !num(m, "count"))
		return;
	printf("  ring moves %" PRId64 " (%" PRId64 " kept mapped), paused "
	       "%.1f ms (%.1f closing: %.1f draining, %.1f releasing)\n",
	       num(m, "count"), num(m, "kept"),
	       (double)num(m, "paused_us") / 1000,
	       (double)num(m, "closing_us") / 1000,
	       (double)num(m, "draining_us") / 1000,
	       (double)num(m, "releasing_us") / 1000);
}

/* "nbd: outages 1, ended 1, ..." (NBD disks only) */
static void print_nbd_link(json_object *d)
{
	json_object *n;

	if (!json_object_object_get_ex(d, "nbd", &n))
		return;
	printf("  nbd: outages %" PRId64 ", ended %" PRId64
	       ", requests resent %" PRId64 ", failed while away %" PRId64
	       ", connections down %" PRId64 "\n",
	       num(n, "outages"), num(n, "outages_ended"), num(n, "resent"),
	       num(n, "failed_server_away"), num(n, "connections_down"));
}

int show_stats(json_object *devices)
{
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i), *limit;
		char name[256];

		printf("%s\n", label(d, name, sizeof(name)));
		print_op(d, "read");
		print_op(d, "write");
		print_op(d, "flush");
		print_op(d, "discard");
		printf("  rejected %" PRId64 ", waited for buffers %" PRId64
		       ", merged %" PRId64 ", in flight %" PRId64 "\n",
		       num(d, "rejected"), num(d, "waited_for_buffers"),
		       num(d, "merged"), num(d, "in_flight"));
		show_grants(d);
		print_moves(d);
		show_snapshots(d);
		show_move(d);
		print_host_errors(d);
		if (json_object_object_get_ex(d, "limit", &limit)) {
			printf("  ");
			show_limit(limit, -1);
		}
		print_nbd_link(d);
		print_stages(d);
	}
	return ferror(stdout) ? -EIO : 0;
}

/*
 * "vbd 1/51712 (xvda of web1): 64 MiB -> 128 MiB (262144 sectors of 512
 * bytes)", or unchanged, or not known before its guest first connects.
 */
static void print_resized(json_object *d)
{
	char name[256], was[32], is[32];

	printf("%s: ", label(d, name, sizeof(name)));
	if (!known(d, "sectors") || !known(d, "old_sectors"))
		printf("its guest has not connected yet; it gets the image's "
		       "size when it does\n");
	else if (num(d, "sectors") == num(d, "old_sectors"))
		printf("%s, unchanged\n",
		       size_of(d, "sectors", is, sizeof(is)));
	else
		printf("%s -> %s (%" PRId64 " sectors of %" PRId64 " bytes)%"
		       "s\n",
		       size_of(d, "old_sectors", was, sizeof(was)),
		       size_of(d, "sectors", is, sizeof(is)), num(d, "sectors"),
		       num(d, "sector_size"),
		       strcmp(str(d, "state"), "connected") ? "; its guest "
							      "sees it when it "
							      "connects"
							    : "");
}

int show_resize(json_object *devices)
{
	size_t n = json_object_array_length(devices);

	if (!n)
		printf("no devices\n");
	for (size_t i = 0; i < n; i++)
		print_resized(json_object_array_get_idx(devices, i));
	return ferror(stdout) ? -EIO : 0;
}

/* "applied: log-level, limit-iops" */
static size_t print_settings(json_object *reply, const char *key,
			     const char *what)
{
	json_object *list;
	size_t n;

	if (!json_object_object_get_ex(reply, key, &list))
		return 0;
	n = json_object_array_length(list);
	if (!n)
		return 0;
	printf("%s:", what);
	for (size_t i = 0; i < n; i++)
		printf("%s %s", i ? "," : "",
		       json_object_get_string(
			       json_object_array_get_idx(list, i)));
	printf("\n");
	return n;
}

void show_reload(json_object *reply)
{
	size_t applied = print_settings(reply, "applied", "applied"),
	       waiting = print_settings(reply, "restart_needed",
					"changed, take effect at the next "
					"restart");

	if (waiting)
		printf("(systemctl restart blkbackd: the guests pause, they "
		       "keep running)\n");
	if (!applied && !waiting)
		printf("nothing changed\n");
}

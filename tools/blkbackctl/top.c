// SPDX-License-Identifier: MIT
/*
 * blkbackctl top: rates from the differences of two stats replies.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/blkbackctl/table.h"
#include "tools/blkbackctl/top.h"

enum { RD, WR, NR_DIRS };
static const char *const dir_key[NR_DIRS] = { "read", "write" };

/* What one disk's sample says, as numbers. */
struct disk {
	uint32_t domid, devid;
	uint64_t requests[NR_DIRS], bytes[NR_DIRS], time_ns[NR_DIRS];
};

/* One disk's rates over an interval; NAN where not measured. */
struct rates {
	double iops[NR_DIRS], bytes_s[NR_DIRS], latency_ms[NR_DIRS];
};

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static uint64_t u64(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v ? json_object_get_uint64(v) : 0;
}

static void disk_of(json_object *dev, struct disk *d)
{
	d->domid = (uint32_t)u64(dev, "domid");
	d->devid = (uint32_t)u64(dev, "devid");
	for (int i = 0; i < NR_DIRS; i++) {
		json_object *op = get(dev, dir_key[i]);

		d->requests[i] = u64(op, "requests");
		d->bytes[i] = u64(op, "bytes");
		d->time_ns[i] = u64(op, "time_ns");
	}
}

/* @now's disk in @before (n of them), or NULL: not sampled before. */
static const struct disk *find(const struct disk *before, size_t n,
			       const struct disk *now)
{
	for (size_t i = 0; i < n; i++)
		if (before[i].domid == now->domid &&
		    before[i].devid == now->devid)
			return &before[i];
	return NULL;
}

/*
 * The rates from @was to @now over @dt seconds. A counter that went back
 * (a new connection counts from zero) makes that interval unmeasured.
 */
static void rates_of(const struct disk *was, const struct disk *now, double dt,
		     struct rates *r)
{
	for (int i = 0; i < NR_DIRS; i++) {
		bool ok = was && dt > 0 &&
			  now->requests[i] >= was->requests[i] &&
			  now->bytes[i] >= was->bytes[i] &&
			  now->time_ns[i] >= was->time_ns[i];
		uint64_t n = ok ? now->requests[i] - was->requests[i] : 0;

		r->iops[i] = ok ? (double)n / dt : NAN;
		r->bytes_s[i] =
			ok ? (double)(now->bytes[i] - was->bytes[i]) / dt : NAN;
		r->latency_ms[i] =
			ok && n ? (double)(now->time_ns[i] - was->time_ns[i]) /
					  (double)n / 1e6
				: NAN;
	}
}

/* @v with @decimals, or "-" when not measured. */
static const char *fmt(char *buf, size_t len, int decimals, double v)
{
	if (isnan(v))
		return "-";
	snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}

/* "500 IOPS, 50.0 MiB/s", or "-" for none. */
static void limit_text(json_object *dev, char *buf, size_t len)
{
	json_object *l = get(dev, "limit");
	uint64_t iops = u64(l, "iops"), bps = u64(l, "bytes_per_second");
	int n = 0;

	buf[0] = '\0';
	if (iops)
		n = snprintf(buf, len, "%" PRIu64 " IOPS", iops);
	if (bps && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%s%.1f MiB/s",
			 iops ? ", " : "", (double)bps / (1 << 20));
}

/* "7 web1", or "7" when the daemon does not know the name. */
static void domain_text(json_object *dev, char *buf, size_t len)
{
	json_object *name = get(dev, "domain");

	snprintf(buf, len, "%" PRIu64 "%s%s", u64(dev, "domid"),
		 name ? " " : "", name ? json_object_get_string(name) : "");
}

static void disk_text(json_object *dev, char *buf, size_t len)
{
	const char *vdev = json_object_get_string(get(dev, "vdev"));

	if (vdev && vdev[0])
		snprintf(buf, len, "%s", vdev);
	else
		snprintf(buf, len, "%" PRIu64, u64(dev, "devid"));
}

static const char *const header[] = {
	"DOMAIN", "DISK",  "RD/s",     "WR/s",	 "RD_MiB/s", "WR_MiB/s",
	"RD_ms",  "WR_ms", "INFLIGHT", "QUEUED", "LIMIT",
};
#define NCOLS (sizeof(header) / sizeof(header[0]))

static int add_row(struct table *t, json_object *dev, const struct rates *r)
{
	char c[NCOLS][96];
	const char *cells[NCOLS];

	domain_text(dev, c[0], sizeof(c[0]));
	disk_text(dev, c[1], sizeof(c[1]));
	for (int i = 0; i < NR_DIRS; i++) {
		cells[2 + i] = fmt(c[2 + i], sizeof(c[0]), 1, r->iops[i]);
		cells[4 + i] = fmt(c[4 + i], sizeof(c[0]), 2,
				   r->bytes_s[i] / (1 << 20));
		cells[6 + i] = fmt(c[6 + i], sizeof(c[0]), 3, r->latency_ms[i]);
	}
	snprintf(c[8], sizeof(c[8]), "%" PRIu64, u64(dev, "in_flight"));
	snprintf(c[9], sizeof(c[9]), "%" PRIu64, u64(dev, "queued"));
	limit_text(dev, c[10], sizeof(c[10]));
	cells[0] = c[0];
	cells[1] = c[1];
	cells[8] = c[8];
	cells[9] = c[9];
	cells[10] = c[10];
	return table_add(t, cells);
}

static json_object *number_or_null(double v)
{
	return isnan(v) ? NULL : json_object_new_double(v);
}

static json_object *json_row(json_object *dev, const struct rates *r)
{
	static const char *const keys[] = { "requests_per_s", "bytes_per_s",
					    "latency_ms" };
	json_object *o = json_object_new_object();
	json_object *name = get(dev, "domain");

	json_object_object_add(o, "domid",
			       json_object_new_uint64(u64(dev, "domid")));
	json_object_object_add(o, "domain",
			       name ? json_object_get(name) : NULL);
	json_object_object_add(o, "devid",
			       json_object_new_uint64(u64(dev, "devid")));
	json_object_object_add(o, "vdev", json_object_get(get(dev, "vdev")));
	for (int i = 0; i < NR_DIRS; i++) {
		const double v[] = { r->iops[i], r->bytes_s[i],
				     r->latency_ms[i] };

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			char key[48];

			snprintf(key, sizeof(key), "%s_%s", dir_key[i],
				 keys[k]);
			json_object_object_add(o, key, number_or_null(v[k]));
		}
	}
	json_object_object_add(o, "in_flight",
			       json_object_new_uint64(u64(dev, "in_flight")));
	json_object_object_add(o, "queued",
			       json_object_new_uint64(u64(dev, "queued")));
	json_object_object_add(o, "limit", json_object_get(get(dev, "limit")));
	return o;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The previous refresh's disks, for the next one's differences. */
struct history {
	struct disk *disks;
	size_t n;
	double at; /* when sampled; 0: never */
};

/* Show @devices, sampled at @at, against @h; then make them @h. */
static int show(const struct top_options *o, struct history *h,
		json_object *devices, double at)
{
	size_t n = json_object_array_length(devices);
	struct disk *now = calloc(n ? n : 1, sizeof(*now));
	struct table *t = o->json ? NULL : table_new(NCOLS, header);
	json_object *list = o->json ? json_object_new_array() : NULL;
	int ret = 0;

	if (!now || (!o->json && !t) || (o->json && !list)) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && ret == 0; i++) {
		json_object *dev = json_object_array_get_idx(devices, i);
		struct rates r;

		disk_of(dev, &now[i]);
		rates_of(h->at ? find(h->disks, h->n, &now[i]) : NULL, &now[i],
			 at - h->at, &r);
		if (list)
			ret = json_object_array_add(list, json_row(dev, &r));
		else
			ret = add_row(t, dev, &r);
	}
	if (ret == 0 && list) {
		json_object *line = json_object_new_object();

		json_object_object_add(
			line, "interval_s",
			h->at ? json_object_new_double(at - h->at) : NULL);
		json_object_object_add(line, "disks", json_object_get(list));
		puts(json_object_to_json_string_ext(line,
						    JSON_C_TO_STRING_PLAIN));
		json_object_put(line);
	} else if (ret == 0) {
		if (!o->batch)
			fputs("\033[H\033[2J", stdout);
		printf("blkbackctl top: %zu disks, every %u s%s\n", n,
		       o->delay_s,
		       h->at ? "" : " (rates from the next refresh on)");
		ret = table_print(t, stdout);
		t = NULL;
		if (o->batch)
			putchar('\n');
	}
	free(h->disks);
	h->disks = now;
	h->n = n;
	h->at = at;
	now = NULL;
out:
	free(now);
	table_free(t);
	json_object_put(list);
	return fflush(stdout) == 0 ? ret : -EIO;
}

int top_run(const struct top_options *o, top_sample_fn *sample, void *arg)
{
	struct history h = { 0 };
	int ret = 0;

	for (unsigned int i = 0; !o->iterations || i < o->iterations; i++) {
		json_object *reply, *devices;
		double at;

		if (i)
			sleep(o->delay_s);
		ret = sample(arg, &reply, &devices);
		if (ret)
			break;
		at = now_s();
		ret = show(o, &h, devices, at);
		json_object_put(reply);
		if (ret < 0) {
			fprintf(stderr, "blkbackctl: top: %s\n",
				strerror(-ret));
			ret = 1;
			break;
		}
	}
	free(h.disks);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * Prometheus text exposition of the daemon's per-disk counters.
 *
 * Every family is written whole (HELP, TYPE, then one sample per disk and
 * label set), as the format requires. Counters are read from the JSON as
 * unsigned 64-bit numbers and printed as integers, never through a double.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/blkbackctl/metrics.h"

static const char *const ops[] = { "read", "write", "flush", "discard" };
/* The operations that move data, or free it: a flush moves none. */
static const char *const data_ops[] = { "read", "write", "discard" };
static const char *const stages[] = { "prepare", "io", "finish", "publish" };

/* The stage histogram's buckets: bucket b counts [2^(b-1), 2^b) us. */
#define HIST_BUCKETS 24

/* @o's member @path: a key, or keys joined by dots ("limit.iops"). */
static json_object *member(json_object *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t len = strcspn(path, ".");

		if (len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path += len + (path[len] == '.');
	}
	return o;
}

static uint64_t counter(json_object *o, const char *key)
{
	json_object *v = member(o, key);

	return v ? json_object_get_uint64(v) : 0;
}

static double real(json_object *o, const char *key)
{
	json_object *v = member(o, key);

	return v ? json_object_get_double(v) : 0;
}

/* A label value, escaped as the format asks (backslash, quote, newline). */
static void put_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/*
 * "NAME{domid="1",domain="web1",devid="51712",vdev="xvda"" and the @extra
 * labels (name, value pairs, NULL-terminated), without the closing brace.
 * domain is "" where the daemon could not read the guest's name.
 */
static void put_series(FILE *out, const char *name, json_object *dev,
		       const char *const *extra)
{
	fprintf(out, "%s{domid=\"%" PRIu64 "\",domain=\"", name,
		counter(dev, "domid"));
	put_value(out, json_object_get_string(member(dev, "domain")) ?: "");
	fprintf(out, "\",devid=\"%" PRIu64 "\",vdev=\"", counter(dev, "devid"));
	put_value(out, json_object_get_string(member(dev, "vdev")) ?: "");
	fputc('"', out);
	for (; extra && extra[0]; extra += 2) {
		fprintf(out, ",%s=\"", extra[0]);
		put_value(out, extra[1]);
		fputc('"', out);
	}
}

static void put_sample(FILE *out, const char *name, json_object *dev,
		       const char *const *extra, uint64_t value)
{
	put_series(out, name, dev, extra);
	fprintf(out, "} %" PRIu64 "\n", value);
}

static void put_header(FILE *out, const char *name, const char *type,
		       const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One device's samples of the family @name, from its @field. */
typedef void put_device_fn(FILE *out, const char *name, json_object *dev,
			   const char *field);

/* Nanoseconds as seconds, exactly: no double in between. */
static void put_ns(FILE *out, uint64_t ns)
{
	fprintf(out, "} %" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000u,
		ns % 1000000000u);
}

/* A sample per operation of @list, from the operation's @field. */
static void put_ops(FILE *out, const char *name, json_object *dev,
		    const char *field, const char *const *list, size_t n,
		    bool ns)
{
	for (size_t op = 0; op < n; op++) {
		const char *const labels[] = { "op", list[op], NULL };
		uint64_t v = counter(member(dev, list[op]), field);

		if (!ns) {
			put_sample(out, name, dev, labels, v);
			continue;
		}
		put_series(out, name, dev, labels);
		put_ns(out, v);
	}
}

/* A counter per operation, from the operation's @field. */
static void put_op_counters(FILE *out, const char *name, json_object *dev,
			    const char *field)
{
	put_ops(out, name, dev, field, ops, sizeof(ops) / sizeof(ops[0]),
		false);
}

/* The same for the operations that move data. */
static void put_data_counters(FILE *out, const char *name, json_object *dev,
			      const char *field)
{
	put_ops(out, name, dev, field, data_ops,
		sizeof(data_ops) / sizeof(data_ops[0]), false);
}

/* Seconds per operation, from the operation's @field in nanoseconds. */
static void put_op_seconds(FILE *out, const char *name, json_object *dev,
			   const char *field)
{
	put_ops(out, name, dev, field, ops, sizeof(ops) / sizeof(ops[0]), true);
}

static void put_counter(FILE *out, const char *name, json_object *dev,
			const char *field)
{
	put_sample(out, name, dev, NULL, counter(dev, field));
}

/* A counter per operation and errno, from the list in @field. */
static void put_host_errors(FILE *out, const char *name, json_object *dev,
			    const char *field)
{
	json_object *list = member(dev, field);

	for (size_t e = 0; list && e < json_object_array_length(list); e++) {
		json_object *err = json_object_array_get_idx(list, e);
		const char *const labels[] = {
			"op",	 json_object_get_string(member(err, "op")),
			"errno", json_object_get_string(member(err, "errno")),
			NULL,
		};

		put_sample(out, name, dev, labels, counter(err, "count"));
	}
}

/* One stage as a cumulative histogram in seconds. */
static void put_stage(FILE *out, const char *name, json_object *dev,
		      const char *stage, json_object *t)
{
	json_object *hist = member(t, "log2_us_histogram");
	const char *const stage_label[] = { "stage", stage, NULL };
	const char *const inf_labels[] = { "stage", stage, "le", "+Inf", NULL };
	char bucket[64], sum[64], count[64], le[32];
	uint64_t seen = 0;

	snprintf(bucket, sizeof(bucket), "%s_bucket", name);
	snprintf(sum, sizeof(sum), "%s_sum", name);
	snprintf(count, sizeof(count), "%s_count", name);
	/* The last bucket has no upper bound: it is +Inf's. */
	for (unsigned int b = 0; b + 1 < HIST_BUCKETS; b++) {
		const char *const labels[] = { "stage", stage, "le", le, NULL };

		if (hist && b < json_object_array_length(hist))
			seen += json_object_get_uint64(
				json_object_array_get_idx(hist, b));
		snprintf(le, sizeof(le), "%.6g", (double)(1ull << b) / 1e6);
		put_sample(out, bucket, dev, labels, seen);
	}
	put_sample(out, bucket, dev, inf_labels, counter(t, "count"));
	put_series(out, sum, dev, stage_label);
	fprintf(out, "} %.9g\n", real(t, "sum_us") / 1e6);
	put_sample(out, count, dev, stage_label, counter(t, "count"));
}

/* A histogram per stage, from the stage times in @field. */
static void put_stages(FILE *out, const char *name, json_object *dev,
		       const char *field)
{
	json_object *st = member(dev, field), *t;

	for (size_t s = 0; st && s < sizeof(stages) / sizeof(stages[0]); s++)
		if ((t = member(st, stages[s])))
			put_stage(out, name, dev, stages[s], t);
}

/* Seconds, from @field in milliseconds. */
static void put_millis_as_seconds(FILE *out, const char *name, json_object *dev,
				  const char *field)
{
	put_series(out, name, dev, NULL);
	fprintf(out, "} %.9g\n", real(dev, field) / 1e3);
}

/* Seconds, from @field in seconds. */
static void put_seconds(FILE *out, const char *name, json_object *dev,
			const char *field)
{
	put_series(out, name, dev, NULL);
	fprintf(out, "} %.9g\n", real(dev, field));
}

/* Seconds, from @field in microseconds. */
static void put_micros_as_seconds(FILE *out, const char *name, json_object *dev,
				  const char *field)
{
	put_series(out, name, dev, NULL);
	fprintf(out, "} %.9g\n", (double)counter(dev, field) / 1e6);
}

/*
 * The families, in the order written; blkbackctl(8) lists them, with the
 * names they had in earlier snapshots. A family with @only set is written only
 * where a device has that member: the NBD ones, and the stage times,
 * which the daemon gives only with --stage-timing.
 */
static const struct family {
	const char *name, *type, *help;
	put_device_fn *put;
	const char *field; /* in the stats reply's device object */
	const char *only;
} families[] = {
	{ "blkbackd_requests_total", "counter",
	  "Requests answered, by operation.", put_op_counters, "requests",
	  NULL },
	{ "blkbackd_bytes_total", "counter",
	  "Bytes read or written, or discarded, by operation.",
	  put_data_counters, "bytes", NULL },
	{ "blkbackd_request_seconds_total", "counter",
	  "Time the answered requests spent in the daemon, from the worker "
	  "taking each off the ring to its answer published, summed, by "
	  "operation (latency: its rate over the requests' rate).",
	  put_op_seconds, "time_ns", NULL },
	{ "blkbackd_failed_requests_total", "counter",
	  "Requests answered with an error, whatever the cause (checks, the "
	  "host's I/O), by operation.",
	  put_op_counters, "errors", NULL },
	{ "blkbackd_host_io_errors_total", "counter",
	  "I/O the image's file system or device failed, by operation and "
	  "errno (each also counts in blkbackd_failed_requests_total).",
	  put_host_errors, "host_errors", NULL },
	{ "blkbackd_rejected_requests_total", "counter",
	  "Requests with an unknown operation, answered with an error.",
	  put_counter, "rejected", NULL },
	{ "blkbackd_buffer_waits_total", "counter",
	  "Requests that waited for bounce buffers.", put_counter,
	  "waited_for_buffers", NULL },
	{ "blkbackd_merged_requests_total", "counter",
	  "Requests that rode in a neighbour's I/O.", put_counter, "merged",
	  NULL },
	{ "blkbackd_ring_moves_total", "counter",
	  "Times one of the disk's rings moved to another worker "
	  "(--rebalance-ms).",
	  put_counter, "moves.count", NULL },
	{ "blkbackd_ring_move_pause_seconds_total", "counter",
	  "Time the disk's rings served nothing while they moved.",
	  put_micros_as_seconds, "moves.paused_us", NULL },
	{ "blkbackd_snapshots_total", "counter",
	  "Snapshots of the disk taken (blkbackctl snapshot).", put_counter,
	  "snapshots.taken", NULL },
	{ "blkbackd_snapshot_failures_total", "counter",
	  "Snapshots of the disk asked for and not taken.", put_counter,
	  "snapshots.failed", NULL },
	{ "blkbackd_snapshot_pause_seconds_total", "counter",
	  "Time the disk's guest was paused for the snapshots taken.",
	  put_micros_as_seconds, "snapshots.paused_us", NULL },
	{ "blkbackd_requests_in_flight", "gauge",
	  "Requests taken off the ring and not answered yet.", put_counter,
	  "in_flight", NULL },
	{ "blkbackd_requests_queued", "gauge",
	  "Requests the guest put on its rings that the daemon has not "
	  "taken yet (the queue before blkbackd_requests_in_flight).",
	  put_counter, "queued", NULL },
	{ "blkbackd_mapped_grants", "gauge",
	  "Persistent grants of the disk's guest the daemon holds mapped.",
	  put_counter, "mapped_grants", NULL },
	{ "blkbackd_grant_map_errors_total", "counter",
	  "Grant mappings Xen refused (the data was copied instead): a guest "
	  "granting pages read-only, or dom0's maptrack full.",
	  put_counter, "grant_map_errors", NULL },
	{ "blkbackd_nbd_outages_total", "counter",
	  "Times an NBD disk's server went away.", put_counter, "nbd.outages",
	  "nbd" },
	{ "blkbackd_nbd_requests_resent_total", "counter",
	  "Requests sent again to an NBD server that came back.", put_counter,
	  "nbd.resent", "nbd" },
	{ "blkbackd_nbd_requests_failed_away_total", "counter",
	  "Requests failed because their NBD server stayed away longer than "
	  "--nbd-reconnect-timeout.",
	  put_counter, "nbd.failed_server_away", "nbd" },
	{ "blkbackd_nbd_connections_down", "gauge",
	  "An NBD disk's connections away from their server now.", put_counter,
	  "nbd.connections_down", "nbd" },
	{ "blkbackd_stage_seconds", "histogram",
	  "Time requests spent in each of the daemon's stages (only with "
	  "blkbackd --stage-timing).",
	  put_stages, "stages_us", "stages_us" },
	{ "blkbackd_limit_iops", "gauge",
	  "The disk's I/O limit in requests per second (0: none).", put_counter,
	  "limit.iops", NULL },
	{ "blkbackd_limit_bytes_per_second", "gauge",
	  "The disk's I/O limit in bytes per second (0: none).", put_counter,
	  "limit.bytes_per_second", NULL },
	{ "blkbackd_throttled_seconds_total", "counter",
	  "Time the disk's I/O limit held its guest's requests back.",
	  put_seconds, "limit.throttled_seconds", NULL },
	{ "blkbackd_move_copied_bytes", "gauge",
	  "Bytes the disk's live move (blkbackctl move) copied, its passes "
	  "summed: the last move since the disk was attached.",
	  put_counter, "move.copied_bytes", "move" },
	{ "blkbackd_move_remaining_bytes", "gauge",
	  "Bytes the disk's live move still has to copy: those its guest "
	  "wrote since they were copied, or not copied yet.",
	  put_counter, "move.dirty_bytes", "move" },
	{ "blkbackd_move_switch_pause_seconds", "gauge",
	  "How long the guest paused for the switch of its disk's live move "
	  "to the new image.",
	  put_millis_as_seconds, "move.pause_ms", "move.pause_ms" },
};

/* Does any of @devices have member @path? */
static bool any_has(json_object *devices, const char *path)
{
	for (size_t i = 0; i < json_object_array_length(devices); i++)
		if (member(json_object_array_get_idx(devices, i), path))
			return true;
	return false;
}

int metrics_write(FILE *out, json_object *devices)
{
	size_t n = json_object_array_length(devices);

	put_header(out, "blkbackd_devices", "gauge",
		   "Devices the daemon knows, connected or not.");
	fprintf(out, "blkbackd_devices %zu\n", n);
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		const struct family *fam = &families[f];

		if (fam->only && !any_has(devices, fam->only))
			continue;
		put_header(out, fam->name, fam->type, fam->help);
		for (size_t i = 0; i < n; i++) {
			json_object *dev =
				json_object_array_get_idx(devices, i);

			if (!fam->only || member(dev, fam->only))
				fam->put(out, fam->name, dev, fam->field);
		}
	}
	return ferror(out) ? -EIO : 0;
}

int metrics_write_textfile(const char *path, json_object *devices)
{
	char tmp[PATH_MAX];
	FILE *out;
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	/* mkstemp() makes it 0600; the collector need not run as root. */
	out = fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	ret = metrics_write(out, devices);
	if (fflush(out) != 0 || fsync(fileno(out)) != 0)
		ret = ret ?: -errno;
	if (fclose(out) != 0)
		ret = ret ?: -errno;
	if (ret == 0 && rename(tmp, path) != 0)
		ret = -errno;
	if (ret < 0)
		unlink(tmp);
	return ret;
}

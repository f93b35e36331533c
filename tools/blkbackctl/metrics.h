/* SPDX-License-Identifier: MIT */
/*
 * The daemon's per-disk counters in the Prometheus text exposition format
 * (version 0.0.4), from a stats reply of the control socket. The metric
 * list is in blkbackctl(8).
 */
#ifndef BLKBACKCTL_METRICS_H
#define BLKBACKCTL_METRICS_H

#include <json-c/json.h>
#include <stdio.h>

/* Write the metrics of @devices (a stats reply's "devices") to @out. */
int metrics_write(FILE *out, json_object *devices);

/*
 * Write them to @path for node_exporter's textfile collector: into a new
 * file in the same directory, renamed over @path, so that the collector
 * never reads half a file. Returns 0 or -errno.
 */
int metrics_write_textfile(const char *path, json_object *devices);

#endif /* BLKBACKCTL_METRICS_H */

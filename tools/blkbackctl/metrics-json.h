/* SPDX-License-Identifier: MIT */
/*
 * blkbackctl --json metrics: the Prometheus exposition that metrics.c
 * writes, read back into JSON, so that the two forms cannot say different
 * things:
 *
 *   {"families": [{"name": "blkbackd_requests_total", "type": "counter",
 *     "help": "...", "samples": [{"name": "blkbackd_requests_total",
 *     "labels": {"domid": "1", ...}, "value": 42}, ...]}, ...]}
 *
 * A sample belongs to the family whose TYPE line came last (a histogram's
 * _bucket, _sum and _count samples to the histogram). Values that are
 * whole numbers stay exact 64-bit integers; others are doubles.
 */
#ifndef BLKBACKCTL_METRICS_JSON_H
#define BLKBACKCTL_METRICS_JSON_H

#include <json-c/json.h>

/*
 * Parse @text (text exposition format 0.0.4) into *@out, to be put.
 * Returns 0, -EINVAL for a line not in the format, or -ENOMEM.
 */
int metrics_text_to_json(const char *text, json_object **out);

#endif /* BLKBACKCTL_METRICS_JSON_H */

/* SPDX-License-Identifier: MIT */
/*
 * blkbackctl top: every disk's rates, as xentop shows domains. Each
 * refresh asks the daemon for its counters (a stats reply) and shows what
 * moved since the one before, per second: read and write requests and
 * bytes, the mean time a request spent in the daemon (its busy time over
 * its count), the requests in flight and queued now, and the disk's
 * limits. A rate needs two samples of the same connection: on the first
 * sample, or where a counter went back (the guest connected again), it is
 * "-" (null in JSON), never a guess. A latency with no request in the
 * interval is "-" too. One thread.
 */
#ifndef BLKBACKCTL_TOP_H
#define BLKBACKCTL_TOP_H

#include <json-c/json.h>
#include <stdbool.h>

struct top_options {
	unsigned int delay_s; /* between refreshes, at least 1 */
	unsigned int iterations; /* 0: until interrupted */
	bool batch; /* plain text, one table after another (xentop -b) */
	bool json; /* one JSON object a line per refresh */
};

/*
 * Fetch a stats reply's "devices" into *@devices, which the caller of
 * top_run() puts with json_object_put() once done (the reply holding
 * them is returned); returns 0 or the exit status after saying why.
 */
typedef int top_sample_fn(void *arg, json_object **reply,
			  json_object **devices);

/* Run top; returns the exit status (0, or that of a failed sample). */
int top_run(const struct top_options *o, top_sample_fn *sample, void *arg);

#endif /* BLKBACKCTL_TOP_H */

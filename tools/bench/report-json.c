// SPDX-License-Identifier: MIT
/*
 * The JSON document (format 2, documented in blkback-bench(1)). Within a
 * format keys are only ever added, never renamed or removed, so scripts
 * keep working; format 2 added the spread of every median.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/report.h"

/* Six significant digits: measurements, not bit patterns. */
static json_object *number_or_null(double v)
{
	char text[32];

	if (isnan(v) || isinf(v))
		return NULL;
	snprintf(text, sizeof(text), "%.6g", v);
	return json_object_new_double_s(v, text);
}

static void add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

static const char *status_key(enum bench_cell_status s)
{
	return s == BENCH_CELL_OK	 ? "ok"
	       : s == BENCH_CELL_SKIPPED ? "skipped"
	       : s == BENCH_CELL_FAILED	 ? "failed"
					 : "not-run";
}

static json_object *idle_counts(const struct bench_config *cfg)
{
	json_object *a = json_object_new_array();

	for (unsigned int i = 0; i < cfg->nr_idle; i++)
		json_object_array_add(
			a, json_object_new_int((int32_t)cfg->idle[i]));
	return a;
}

static json_object *config_object(const struct bench_config *cfg)
{
	json_object *o = json_object_new_object();
	json_object *g = json_object_new_array();
	json_object *j = json_object_new_array();
	json_object *a = json_object_new_array();

	for (unsigned int i = 0; i < cfg->nr_guests; i++)
		json_object_array_add(
			g, json_object_new_int((int32_t)cfg->guests[i]));
	for (unsigned int i = 0; i < cfg->nr_jobs; i++)
		json_object_array_add(j, json_object_new_string(
						 bench_job_name(cfg->jobs[i])));
	for (unsigned int i = 0; i < cfg->nr_arms; i++)
		json_object_array_add(a, json_object_new_string(
						 bench_arm_name(cfg->arms[i])));
	add(o, "guests", g);
	add(o, "jobs", j);
	add(o, "arms", a);
	add(o, "size_bytes", json_object_new_int64((int64_t)cfg->size));
	add(o, "image_bytes", json_object_new_int64((int64_t)cfg->image_size));
	add(o, "time_limit_seconds",
	    cfg->time_limit > 0 ? number_or_null(cfg->time_limit) : NULL);
	add(o, "min_time_seconds", number_or_null(cfg->min_time));
	add(o, "repeat", json_object_new_int((int32_t)cfg->repeat));
	add(o, "warmup", json_object_new_int((int32_t)cfg->warmup));
	add(o, "idle_guests", idle_counts(cfg));
	add(o, "seed", json_object_new_int64((int64_t)cfg->seed));
	add(o, "blkbackd", json_object_new_string(cfg->blkbackd));
	return o;
}

static json_object *host_object(void)
{
	json_object *o = json_object_new_object();
	struct utsname u;
	char when[32];
	time_t now = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	add(o, "date", json_object_new_string(when));
	add(o, "cpus",
	    json_object_new_int((int32_t)sysconf(_SC_NPROCESSORS_ONLN)));
	if (uname(&u) == 0) {
		add(o, "kernel", json_object_new_string(u.release));
		add(o, "hostname", json_object_new_string(u.nodename));
	}
	return o;
}

/* Each number's [min, max] over the repeats (null where not measured). */
static json_object *spread_object(const struct bench_cell *c)
{
	json_object *o = json_object_new_object();

	for (unsigned int i = 0; i < bench_nr_metrics; i++) {
		const struct bench_metric *k = &bench_metrics[i];
		double lo = bench_metric_value(&c->lo, k);
		json_object *pair = NULL;

		if (!isnan(lo)) {
			pair = json_object_new_array();
			json_object_array_add(pair, number_or_null(lo));
			json_object_array_add(
				pair,
				number_or_null(bench_metric_value(&c->hi, k)));
		}
		add(o, k->key, pair);
	}
	return o;
}

static json_object *cell_object(const struct bench_cell *c)
{
	const struct bench_sample *m = &c->median;
	json_object *o = json_object_new_object();
	json_object *gs = json_object_new_array();
	bool ok = c->status == BENCH_CELL_OK;

	add(o, "job", json_object_new_string(bench_job_name(c->job)));
	add(o, "arm", json_object_new_string(bench_arm_name(c->arm)));
	add(o, "guests", json_object_new_int((int32_t)c->n));
	add(o, "status", json_object_new_string(status_key(c->status)));
	add(o, "note", json_object_new_string(c->note));
	add(o, "repeats", json_object_new_int((int32_t)c->nr_samples));
	for (unsigned int g = 0; ok && g < c->n; g++)
		json_object_array_add(gs, number_or_null(m->guest_seconds[g]));
	add(o, "guest_seconds", gs);
	for (unsigned int i = 0; i < bench_nr_metrics; i++) {
		const struct bench_metric *k = &bench_metrics[i];

		add(o, k->key,
		    ok ? number_or_null(bench_metric_value(m, k)) : NULL);
	}
	add(o, "spread", ok ? spread_object(c) : NULL);
	add(o, "cpu_method",
	    json_object_new_string(bench_cpu_method_name(c->cpu_method)));
	add(o, "ops", ok ? json_object_new_int64((int64_t)m->ops) : NULL);
	add(o, "bytes", ok ? json_object_new_int64((int64_t)m->bytes) : NULL);
	return o;
}

static json_object *targets_array(const struct bench_results *r)
{
	json_object *arr = json_object_new_array();

	for (unsigned int j = 0; j < r->cfg->nr_jobs; j++) {
		struct bench_target t[BENCH_MAX_TARGETS];
		unsigned int n = bench_targets(r, r->cfg->jobs[j], t);

		for (unsigned int i = 0; i < n; i++) {
			json_object *o = json_object_new_object();

			add(o, "job",
			    json_object_new_string(bench_job_name(t[i].job)));
			add(o, "name", json_object_new_string(t[i].name));
			add(o, "label", json_object_new_string(t[i].label));
			add(o, "value",
			    t[i].available ? number_or_null(t[i].value) : NULL);
			add(o, "min",
			    t[i].available ? number_or_null(t[i].lo) : NULL);
			add(o, "max",
			    t[i].available ? number_or_null(t[i].hi) : NULL);
			add(o, "threshold", number_or_null(t[i].threshold));
			add(o, "comparison",
			    json_object_new_string(t[i].at_least ? ">="
								 : "<="));
			add(o, "pass",
			    t[i].available && !isnan(t[i].threshold)
				    ? json_object_new_boolean(t[i].pass)
				    : NULL);
			json_object_array_add(arr, o);
		}
	}
	return arr;
}

static json_object *usage_object(const struct proc_usage *u)
{
	json_object *o = json_object_new_object();

	add(o, "rss_mib", number_or_null(u->rss_mib));
	add(o, "rss_anon_mib", number_or_null(u->anon_mib));
	add(o, "rss_shared_mib", number_or_null(u->shared_mib));
	add(o, "fds", json_object_new_int((int32_t)u->fds));
	add(o, "threads", json_object_new_int((int32_t)u->threads));
	add(o, "nofile_limit", json_object_new_int64((int64_t)u->nofile_limit));
	return o;
}

static json_object *idle_array(const struct bench_results *r)
{
	json_object *arr = json_object_new_array();

	for (unsigned int i = 0; i < r->cfg->nr_idle; i++) {
		const struct idle_figures *g = &r->idle[i];
		json_object *o = json_object_new_object();
		bool measured = g->attach_seconds > 0;

		add(o, "guests", json_object_new_int((int32_t)g->guests));
		add(o, "status",
		    json_object_new_string(g->error < 0 ? "failed" : "ok"));
		add(o, "note", json_object_new_string(g->note));
		add(o, "attach_seconds",
		    measured ? number_or_null(g->attach_seconds) : NULL);
		add(o, "plug_seconds",
		    measured ? number_or_null(g->plug_seconds) : NULL);
		add(o, "connect_seconds",
		    measured ? number_or_null(g->connect_seconds) : NULL);
		add(o, "detach_seconds", number_or_null(g->detach_seconds));
		add(o, "daemon_rss_target_mib",
		    number_or_null(IDLE_RSS_TARGET_MIB));
		add(o, "daemon_rss_pass",
		    measured ? json_object_new_boolean(g->daemon.rss_mib <=
						       IDLE_RSS_TARGET_MIB)
			     : NULL);
		add(o, "attach_target_seconds",
		    number_or_null(IDLE_ATTACH_TARGET_S));
		add(o, "attach_pass",
		    measured ? json_object_new_boolean(g->attach_seconds <=
						       IDLE_ATTACH_TARGET_S)
			     : NULL);
		add(o, "daemon_before",
		    measured ? usage_object(&g->daemon_before) : NULL);
		add(o, "daemon", measured ? usage_object(&g->daemon) : NULL);
		add(o, "frontend_server",
		    measured ? usage_object(&g->server) : NULL);
		add(o, "xenstored",
		    measured && g->have_xenstored ? usage_object(&g->xenstored)
						  : NULL);
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *handoff_object(const struct handoff_figures *h)
{
	json_object *o = json_object_new_object();
	json_object *cpus = json_object_new_array();

	add(o, "same_cpu_round_trip_us",
	    h->same_measured ? number_or_null(h->same_cpu_us) : NULL);
	add(o, "cross_cpu_round_trip_us",
	    h->cross_measured ? number_or_null(h->cross_cpu_us) : NULL);
	if (h->cpu_a >= 0)
		json_object_array_add(cpus, json_object_new_int(h->cpu_a));
	if (h->cpu_b >= 0)
		json_object_array_add(cpus, json_object_new_int(h->cpu_b));
	add(o, "cpus", cpus);
	add(o, "note", h->note[0] ? json_object_new_string(h->note) : NULL);
	return o;
}

int report_json(const char *path, const struct bench_results *r)
{
	json_object *doc = json_object_new_object();
	json_object *cells = json_object_new_array();
	int ret;

	add(doc, "tool", json_object_new_string("blkback-bench"));
	add(doc, "format", json_object_new_int(BENCH_JSON_FORMAT));
	add(doc, "host", host_object());
	add(doc, "config", config_object(r->cfg));
	for (unsigned int i = 0; i < r->nr_cells; i++)
		json_object_array_add(cells, cell_object(&r->cells[i]));
	add(doc, "results", cells);
	add(doc, "targets", targets_array(r));
	add(doc, "idle_guests", idle_array(r));
	if (r->cfg->nr_jobs)
		add(doc, "host_handoff", handoff_object(&r->handoff));
	if (!strcmp(path, "-")) {
		ret = fputs(json_object_to_json_string_ext(
				    doc, JSON_C_TO_STRING_PRETTY),
			    stdout) < 0 ||
				      fputc('\n', stdout) < 0
			      ? -EIO
			      : 0;
	} else {
		ret = json_object_to_file_ext(path, doc,
					      JSON_C_TO_STRING_PRETTY) < 0
			      ? -EIO
			      : 0;
	}
	json_object_put(doc);
	return ret;
}

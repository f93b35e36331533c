// SPDX-License-Identifier: MIT
/*
 * The control socket's server side: requests in, JSON out (json-c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkbackd/control-request.h"
#include "blkbackd/control-server.h"
#include "blkbackd/control.h"
#include "blkbackd/log.h"
#include "blkbackd/options.h"
#include "blkbackd/reload.h"
#include "blkbackd/vbd-move.h"
#include "blkbackd/vbd.h"

static json_object *op_counters(const struct blk_stats *s, unsigned int op)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "requests",
			       json_object_new_uint64(s->requests[op]));
	json_object_object_add(o, "bytes",
			       json_object_new_uint64(s->bytes[op]));
	/* As before bytes came: what older readers of this JSON take. */
	json_object_object_add(o, "sectors",
			       json_object_new_uint64(s->bytes[op] / 512));
	json_object_object_add(o, "errors",
			       json_object_new_uint64(s->errors[op]));
	/* Whole nanoseconds: a sum that only grows stays exact as an integer.
	 */
	json_object_object_add(o, "time_ns",
			       json_object_new_uint64(s->time_ns[op]));
	return o;
}

static json_object *stage_times(const struct blk_stage_time *t)
{
	json_object *o = json_object_new_object();
	json_object *hist = json_object_new_array();

	json_object_object_add(o, "count", json_object_new_uint64(t->n));
	json_object_object_add(o, "sum_us",
			       json_object_new_double((double)t->sum_ns / 1e3));
	json_object_object_add(o, "mean_us",
			       json_object_new_double(blk_stage_mean_us(t)));
	json_object_object_add(o, "p50_us",
			       json_object_new_double(blk_stage_p50_us(t)));
	for (unsigned int b = 0; b < BLK_HIST_BUCKETS; b++)
		json_object_array_add(hist, json_object_new_uint64(t->hist[b]));
	/* Bucket b: [2^(b-1), 2^b) microseconds; bucket 0: under 1. */
	json_object_object_add(o, "log2_us_histogram", hist);
	return o;
}

static const char *state_of(const struct vbd_info *v)
{
	if (v->failed)
		return "failed";
	return v->connected ? "connected" : "waiting";
}

static json_object *device_id(const struct vbd_info *v)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "domid", json_object_new_int64(v->domid));
	json_object_object_add(o, "devid", json_object_new_int64(v->devid));
	json_object_object_add(o, "name", json_object_new_string(v->name));
	json_object_object_add(o, "vdev", json_object_new_string(v->vdev));
	return o;
}

/* Its I/O limits (0: none) and how long they held its guest back. */
static json_object *limit_of(const struct blk_throttle_info *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "iops", json_object_new_uint64(t->lim.iops));
	json_object_object_add(o, "bytes_per_second",
			       json_object_new_uint64(t->lim.bps));
	json_object_object_add(
		o, "throttled_seconds",
		json_object_new_double((double)t->throttled_ns / 1e9));
	return o;
}

/*
 * A device's size is known once its guest first connected (the guest
 * decides the sector size); until then its size and sector size are null,
 * not 0.
 */
static json_object *known_size(const struct vbd_info *v)
{
	return v->sector_size ? json_object_new_int((int)v->sector_size) : NULL;
}

static void add_size(json_object *o, const char *key, const struct vbd_info *v)
{
	json_object_object_add(
		o, key,
		v->sector_size ? json_object_new_uint64(v->sectors) : NULL);
}

static json_object *pause_ms(uint64_t from_ns, uint64_t to_ns)
{
	/* A step that did not come: not measured. */
	if (!from_ns || !to_ns)
		return NULL;
	return json_object_new_double((double)(to_ns - from_ns) / 1e6);
}

/* A pause of the guest in ms: in all, and its parts; null: not measured. */
static void add_pause(json_object *o, const struct vbd_pause *p)
{
	json_object_object_add(o, "pause_ms",
			       pause_ms(p->stopped_ns, p->resumed_ns));
	json_object_object_add(o, "draining_ms",
			       pause_ms(p->stopped_ns, p->drained_ns));
	json_object_object_add(o, "copying_ms",
			       pause_ms(p->drained_ns, p->acted_ns));
	json_object_object_add(o, "resuming_ms",
			       pause_ms(p->acted_ns, p->resumed_ns));
}

/*
 * Its last live move since it was attached, or null: where it is (phase),
 * from and to, bytes copied (passes summed), of the image's total, dirty
 * now, the rate limit and the last pass's rate (null before one ended),
 * and the switch's pause (null until it switched).
 */
static json_object *move_of(const struct vbd_move_info *m)
{
	json_object *o;

	if (m->phase == VBD_MOVE_NONE)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(
		o, "phase",
		json_object_new_string(vbd_move_phase_name(m->phase)));
	json_object_object_add(o, "source", json_object_new_string(m->source));
	json_object_object_add(o, "dest", json_object_new_string(m->dest));
	json_object_object_add(o, "copied_bytes",
			       json_object_new_uint64(m->copied));
	json_object_object_add(o, "total_bytes",
			       json_object_new_uint64(m->total));
	json_object_object_add(o, "dirty_bytes",
			       json_object_new_uint64(m->dirty));
	json_object_object_add(o, "bytes_per_second",
			       json_object_new_uint64(m->bw));
	json_object_object_add(o, "rate_bytes_per_second",
			       m->passes ? json_object_new_uint64(m->rate)
					 : NULL);
	json_object_object_add(o, "passes", json_object_new_uint64(m->passes));
	json_object_object_add(o, "converging",
			       json_object_new_boolean(m->converging));
	json_object_object_add(o, "copy", json_object_new_boolean(m->copy));
	json_object_object_add(
		o, "why", m->why[0] ? json_object_new_string(m->why) : NULL);
	add_pause(o, &m->pause);
	return o;
}

static void add_listing(const struct vbd_info *v, void *arg)
{
	json_object *o = device_id(v), *f = json_object_new_object();

	json_object_object_add(o, "image", json_object_new_string(v->image));
	json_object_object_add(o, "state", json_object_new_string(state_of(v)));
	json_object_object_add(
		o, "waiting_for",
		v->waiting_for ? json_object_new_string(v->waiting_for) : NULL);
	/* Its guest waits: a snapshot is under way. */
	json_object_object_add(o, "paused", json_object_new_boolean(v->paused));
	json_object_object_add(o, "queues", json_object_new_int(v->nr_queues));
	if (v->connected) {
		json_object_object_add(o, "abi",
				       json_object_new_string(v->link.abi));
		json_object_object_add(o, "ring_order",
				       json_object_new_int(v->link.ring_order));
		json_object_object_add(o, "grants",
				       json_object_new_string(v->link.persistent
								      ? "persis"
									"tent"
								      : "cop"
									"y"));
	}
	add_size(o, "sectors", v);
	json_object_object_add(o, "sector_size", known_size(v));
	json_object_object_add(o, "readonly",
			       json_object_new_boolean(v->readonly));
	json_object_object_add(f, "flush",
			       json_object_new_boolean(v->features.flush));
	json_object_object_add(f, "barrier",
			       json_object_new_boolean(v->features.barrier));
	json_object_object_add(f, "discard",
			       json_object_new_boolean(v->features.discard));
	json_object_object_add(f, "persistent",
			       json_object_new_boolean(v->features.persistent));
	json_object_object_add(
		f, "max_indirect_segments",
		json_object_new_int(v->features.max_indirect_segments));
	json_object_object_add(o, "offered", f);
	json_object_object_add(o, "limit", limit_of(&v->throttle));
	json_object_object_add(o, "move", move_of(&v->move));
	json_object_array_add(arg, o);
}

/* "EIO", or "other" for the kinds a disk's table had no room for. */
static const char *errno_name(int err)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	return name ? name : "other";
}

static json_object *host_errors(const struct vbd_info *v)
{
	json_object *list = json_object_new_array();

	for (unsigned int i = 0; i < v->nr_host_errors; i++) {
		const struct host_error_count *c = &v->host_errors[i];
		json_object *o = json_object_new_object();

		json_object_object_add(
			o, "op",
			json_object_new_string(blk_stat_op_name(c->op)));
		json_object_object_add(
			o, "errno", json_object_new_string(errno_name(c->err)));
		json_object_object_add(
			o, "message",
			json_object_new_string(c->err ? strerror(c->err) : ""));
		json_object_object_add(o, "count",
				       json_object_new_uint64(c->count));
		json_object_array_add(list, o);
	}
	return list;
}

/* What an NBD disk's connections went through. */
static json_object *nbd_link(const struct blk_nbd_link_counts *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "outages", json_object_new_uint64(c->lost));
	json_object_object_add(o, "outages_ended",
			       json_object_new_uint64(c->restored));
	json_object_object_add(o, "resent", json_object_new_uint64(c->resent));
	json_object_object_add(o, "failed_server_away",
			       json_object_new_uint64(c->timed_out));
	json_object_object_add(o, "connections_down",
			       json_object_new_uint64(c->down));
	return o;
}

/* The devices a request is about: all, or one. */
struct device_query {
	json_object *devices; /* the reply's */
	uint32_t domid, devid;
	bool one; /* only domid/devid */
	bool stages; /* stage times are taken (--stage-timing) */
	size_t next; /* resize's second pass: the device it is at */
};

static bool wanted(const struct device_query *q, const struct vbd_info *v)
{
	return !q->one || (v->domid == q->domid && v->devid == q->devid);
}

static json_object *moves_of(const struct vbd_moves *m)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "count", json_object_new_uint64(m->count));
	json_object_object_add(o, "kept", json_object_new_uint64(m->kept));
	json_object_object_add(o, "paused_us",
			       json_object_new_uint64(m->paused_ns / 1000));
	json_object_object_add(o, "closing_us",
			       json_object_new_uint64(m->closing_ns / 1000));
	json_object_object_add(o, "draining_us",
			       json_object_new_uint64(m->draining_ns / 1000));
	json_object_object_add(o, "releasing_us",
			       json_object_new_uint64(m->releasing_ns / 1000));
	return o;
}

/* Its snapshots taken, failed and their guest's pauses. */
static json_object *snapshots_of(const struct vbd_snapshots *n)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "taken", json_object_new_uint64(n->taken));
	json_object_object_add(o, "failed", json_object_new_uint64(n->failed));
	json_object_object_add(o, "paused_us",
			       json_object_new_uint64(n->paused_ns / 1000));
	/* Null before the first: no pause was measured. */
	json_object_object_add(
		o, "last_pause_us",
		n->taken ? json_object_new_uint64(n->last_pause_ns / 1000)
			 : NULL);
	json_object_object_add(
		o, "max_pause_us",
		n->taken ? json_object_new_uint64(n->max_pause_ns / 1000)
			 : NULL);
	return o;
}

static void add_stats(const struct vbd_info *v, void *arg)
{
	struct device_query *q = arg;
	const struct blk_stats *s = &v->stats;
	json_object *o, *stages;

	if (!wanted(q, v))
		return;
	o = device_id(v);
	json_object_object_add(o, "domain",
			       v->domain[0] ? json_object_new_string(v->domain)
					    : NULL);
	for (unsigned int op = 0; op < BLK_STAT_NR_OPS; op++)
		json_object_object_add(o, blk_stat_op_name(op),
				       op_counters(s, op));
	json_object_object_add(o, "rejected",
			       json_object_new_uint64(s->rejected));
	json_object_object_add(o, "waited_for_buffers",
			       json_object_new_uint64(s->parked_no_buffers));
	json_object_object_add(o, "merged", json_object_new_uint64(s->merged));
	json_object_object_add(o, "moves", moves_of(&v->moves));
	json_object_object_add(o, "snapshots", snapshots_of(&v->snapshots));
	json_object_object_add(o, "move", move_of(&v->move));
	json_object_object_add(o, "in_flight",
			       json_object_new_uint64(s->in_flight));
	json_object_object_add(o, "queued", json_object_new_uint64(s->queued));
	json_object_object_add(o, "mapped_grants",
			       json_object_new_uint64(s->mapped_grants));
	json_object_object_add(o, "registered_grants",
			       json_object_new_uint64(s->registered_grants));
	json_object_object_add(o, "grant_map_errors",
			       json_object_new_uint64(s->grant_map_errors));
	json_object_object_add(o, "host_errors", host_errors(v));
	json_object_object_add(o, "limit", limit_of(&v->throttle));
	if (v->nbd)
		json_object_object_add(o, "nbd", nbd_link(&v->nbd_link));
	json_object_array_add(q->devices, o);
	/* Without --stage-timing there are none: no zeros that look real. */
	if (!q->stages)
		return;
	stages = json_object_new_object();
	for (unsigned int st = 0; st < BLK_NR_STAGES; st++)
		json_object_object_add(stages, blk_stage_name(st),
				       stage_times(&s->stage[st]));
	json_object_object_add(o, "stages_us", stages);
}

static json_object *error_reply(const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

/*
 * An error in the request itself (an unknown request or argument), not in
 * what it asks for: blkbackctl exits 2 for it, as for its own usage errors.
 */
static json_object *bad_request(const char *msg)
{
	json_object *o = error_reply(msg);

	json_object_object_add(o, "bad_request", json_object_new_boolean(1));
	return o;
}

/*
 * "log-level [LEVEL]": change the level (from now on, on every thread) and
 * answer the one in force.
 */
static json_object *log_level(struct daemon *d, const char *level)
{
	const struct opt_desc *opt = option_find("log-level");
	char accepted[128], msg[256];
	const char *name;
	json_object *reply;

	if (level && option_set(&d->opts, opt, level) < 0) {
		option_describe(opt, accepted, sizeof(accepted));
		snprintf(msg, sizeof(msg), "unknown log level '%s': give %s",
			 level, accepted);
		return bad_request(msg);
	}
	name = option_choice_name(opt, d->opts.log_level);
	if (level) {
		log_set_level(d->opts.log_level);
		log_notice("log level set to %s (blkbackctl)", name);
	}
	reply = json_object_new_object();
	json_object_object_add(reply, "log_level",
			       json_object_new_string(name));
	return reply;
}

/*
 * A resize answers the devices it looked at, each with its state and its
 * size before (old_sectors) and after (sectors), in sector_size units;
 * null until its guest first connected (vbd_info: the guest decides the
 * sector size). A guest not connected now gets the new size when it
 * connects.
 */
static void size_before(const struct vbd_info *v, void *arg)
{
	struct device_query *q = arg;
	json_object *o;

	if (!wanted(q, v))
		return;
	o = device_id(v);
	add_size(o, "old_sectors", v);
	json_object_array_add(q->devices, o);
}

/* The same devices in the same order: resizing adds and removes none. */
static void size_after(const struct vbd_info *v, void *arg)
{
	struct device_query *q = arg;
	json_object *o;

	if (!wanted(q, v) || q->next >= json_object_array_length(q->devices))
		return;
	o = json_object_array_get_idx(q->devices, q->next++);
	json_object_object_add(o, "state", json_object_new_string(state_of(v)));
	add_size(o, "sectors", v);
	json_object_object_add(o, "sector_size", known_size(v));
}

/* "resize [DOMID/DEVID]": re-read the image sizes. */
static json_object *resize(struct daemon *d, const struct control_request *r)
{
	struct device_query q = { .one = r->one,
				  .domid = r->domid,
				  .devid = r->devid };
	json_object *reply;

	q.devices = json_object_new_array();
	vbd_visit_all(d, size_before, &q);
	if (q.one && !json_object_array_length(q.devices)) {
		json_object_put(q.devices);
		return error_reply("no such device");
	}
	if (q.one)
		vbd_resize_one(d, q.domid, q.devid);
	else
		vbd_resize_all(d);
	vbd_visit_all(d, size_after, &q);
	reply = json_object_new_object();
	json_object_object_add(reply, "devices", q.devices);
	return reply;
}

struct limit_query {
	uint32_t domid, devid;
	bool found;
	struct blk_throttle_info info;
};

static void find_limit(const struct vbd_info *v, void *arg)
{
	struct limit_query *q = arg;

	if (v->domid == q->domid && v->devid == q->devid) {
		q->found = true;
		q->info = v->throttle;
	}
}

static uint64_t limit_value(const struct control_limit_arg *a, uint64_t keep)
{
	return a->keep ? keep : a->value;
}

/*
 * "limit DOMID/DEVID [IOPS BPS]": set a disk's limits (each a number, 0
 * for none, or "-" to keep it), then answer those in force.
 */
static json_object *limit(struct daemon *d, const struct control_request *r)
{
	struct limit_query q = { .domid = r->domid, .devid = r->devid };
	struct blk_throttle_limits l;
	char msg[128];
	int ret;

	vbd_visit_all(d, find_limit, &q);
	if (!q.found)
		return error_reply("no such device");
	if (r->set_limits) {
		l.iops = limit_value(&r->iops, q.info.lim.iops);
		l.bps = limit_value(&r->bps, q.info.lim.bps);
		ret = vbd_set_limits(d, q.domid, q.devid, &l);
		if (ret < 0) {
			snprintf(msg, sizeof(msg),
				 "cannot write the limits to xenstore: %s",
				 strerror(-ret));
			return error_reply(msg);
		}
		vbd_visit_all(d, find_limit, &q);
	}
	return limit_of(&q.info);
}

/* What a reload changed, by list: "applied" or "restart_needed". */
static void note_change(const char *setting, bool applied, void *arg)
{
	json_object *lists = arg, *list;

	json_object_object_get_ex(lists, applied ? "applied" : "restart_needed",
				  &list);
	json_object_array_add(list, json_object_new_string(setting));
}

/*
 * "reload": blkbackd.conf again (see reload.h); answers the settings it
 * applied and those that wait for a restart.
 */
static json_object *reload(struct daemon *d)
{
	json_object *reply = json_object_new_object();

	json_object_object_add(reply, "applied", json_object_new_array());
	json_object_object_add(reply, "restart_needed",
			       json_object_new_array());
	if (daemon_reload(d, note_change, reply) < 0) {
		json_object_put(reply);
		return error_reply("the configuration has errors (see the "
				   "daemon's log); the running settings stay");
	}
	return reply;
}

/* "list", "stats [DOMID/DEVID]": what the devices are and did. */
static json_object *report(struct daemon *d, const struct control_request *r)
{
	struct device_query q = { .devices = json_object_new_array(),
				  .one = r->one,
				  .domid = r->domid,
				  .devid = r->devid,
				  .stages = d->opts.stage_timing };
	json_object *reply;

	if (r->op == CONTROL_LIST)
		vbd_visit_all(d, add_listing, q.devices);
	else
		vbd_visit_all(d, add_stats, &q);
	if (q.one && !json_object_array_length(q.devices)) {
		json_object_put(q.devices);
		return error_reply("no such device");
	}
	reply = json_object_new_object();
	json_object_object_add(reply, "devices", q.devices);
	return reply;
}

static char *reply_text(json_object *reply, size_t *reply_len)
{
	size_t n;
	const char *text = json_object_to_json_string_length(
		reply, JSON_C_TO_STRING_PLAIN, &n);
	char *out = malloc(n + 2);

	if (out) {
		memcpy(out, text, n);
		out[n] = '\n';
		out[n + 1] = '\0';
		*reply_len = n + 1;
	}
	json_object_put(reply);
	return out;
}

static json_object *monotonic(const struct vbd_pause *p)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "stopped",
			       json_object_new_uint64(p->stopped_ns));
	json_object_object_add(o, "drained",
			       json_object_new_uint64(p->drained_ns));
	json_object_object_add(o, "copied",
			       json_object_new_uint64(p->acted_ns));
	json_object_object_add(o, "resumed",
			       json_object_new_uint64(p->resumed_ns));
	return o;
}

/* Work that ended: its answer @o goes to the client that asked for it. */
static void answer_later(struct control_later *later, json_object *o)
{
	size_t len = 0;
	char *text = reply_text(o, &len);

	control_server_answer(later->s, later->client, text, len);
	free(later);
}

/* Where the answer to work that ends later goes; NULL without memory. */
static struct control_later *keep_later(const struct control_later *later)
{
	struct control_later *mine = malloc(sizeof(*mine));

	if (mine)
		*mine = *later;
	return mine;
}

/*
 * Begin work whose answer comes later (a snapshot, a copy, a move):
 * @begin gets the request and where its answer goes (@mine, ours until
 * it answers). Only for a privileged client: the work writes a new image
 * as the daemon, @what ("a move writes a new image") in the refusal. NULL
 * when it began (@later->deferred), else the answer now.
 */
typedef int begin_fn(struct daemon *d, const struct control_request *r,
		     struct control_later *mine, char *why, size_t why_len);

static json_object *begin_later(struct daemon *d,
				const struct control_request *r,
				struct control_later *later, const char *what,
				begin_fn *begin)
{
	struct control_later *mine;
	char why[640];

	if (!later->privileged) {
		snprintf(why, sizeof(why),
			 "permission denied: %s as the daemon, so only root "
			 "(or the daemon's own user) may ask for one",
			 what);
		return error_reply(why);
	}
	mine = keep_later(later);
	if (!mine)
		return error_reply("out of memory");
	if (begin(d, r, mine, why, sizeof(why)) < 0) {
		free(mine);
		return error_reply(why);
	}
	later->deferred = true;
	return NULL;
}

/* A snapshot's answer: DEST and the pause, or why it was not taken. */
static json_object *snapshot_reply(const struct vbd_snapshot_result *r)
{
	const struct vbd_pause *p = &r->pause;
	json_object *o;
	char msg[768];

	if (r->ret < 0) {
		snprintf(msg, sizeof(msg), "%s: snapshot %s not taken: %s",
			 r->name, r->dest, r->why);
		o = error_reply(msg);
	} else {
		o = json_object_new_object();
		json_object_object_add(o, "name",
				       json_object_new_string(r->name));
		json_object_object_add(o, "dest",
				       json_object_new_string(r->dest));
		add_pause(o, p);
		json_object_object_add(o, "monotonic_ns", monotonic(p));
	}
	return o;
}

/* A snapshot ended: its answer goes to the client that asked for it. */
static void snapshot_taken(void *arg, const struct vbd_snapshot_result *r)
{
	answer_later(arg, snapshot_reply(r));
}

/* "snapshot DOMID/DEVID DEST": answered once taken (begin_later()). */
static int begin_snapshot(struct daemon *d, const struct control_request *r,
			  struct control_later *mine, char *why, size_t len)
{
	return vbd_snapshot(d, r->domid, r->devid, r->dest, snapshot_taken,
			    mine, why, len);
}

/* A snapshot-copy ended: a snapshot's answer, and the bytes copied. */
static void snapshot_copied(void *arg, const struct vbd_snapshot_result *r,
			    uint64_t copied)
{
	json_object *o = snapshot_reply(r);

	if (r->ret == 0)
		json_object_object_add(o, "copied_bytes",
				       json_object_new_uint64(copied));
	answer_later(arg, o);
}

/*
 * "snapshot-copy DOMID/DEVID DEST [BPS]": answered once DEST is finished
 * (begin_later()).
 */
static int begin_snapshot_copy(struct daemon *d,
			       const struct control_request *r,
			       struct control_later *mine, char *why,
			       size_t len)
{
	return vbd_move_copy(d, r->domid, r->devid, r->dest, r->bw,
			     snapshot_copied, mine, why, len);
}

/* A move started, or could not: the answer to its requester. */
static void move_started(void *arg, int ret, const char *why)
{
	struct control_later *later = arg;
	json_object *o;

	if (ret < 0) {
		o = error_reply(why);
	} else {
		o = json_object_new_object();
		json_object_object_add(o, "started",
				       json_object_new_boolean(1));
	}
	answer_later(later, o);
}

/*
 * "move DOMID/DEVID DEST [BPS]": answered once DEST exists and the
 * guest's writes are tracked (begin_later()). Its progress is in list and
 * stats.
 */
static int begin_move(struct daemon *d, const struct control_request *r,
		      struct control_later *mine, char *why, size_t len)
{
	return vbd_move_start(d, r->domid, r->devid, r->dest, r->bw,
			      move_started, mine, why, len);
}

/* "move-cancel DOMID/DEVID": asked; the move ends soon after. */
static json_object *move_cancel(struct daemon *d,
				const struct control_request *r,
				const struct control_later *later)
{
	json_object *o;
	char why[640];

	if (!later->privileged)
		return error_reply("permission denied: only root (or the "
				   "daemon's own user) may cancel a move");
	if (vbd_move_cancel(d, r->domid, r->devid, why, sizeof(why)) < 0)
		return error_reply(why);
	o = json_object_new_object();
	json_object_object_add(o, "cancelling", json_object_new_boolean(1));
	return o;
}

/* The reply to one request line; NULL: it comes later. */
static json_object *answer(struct daemon *d, const char *line, size_t len,
			   struct control_later *later)
{
	struct control_request r;
	char why[192];

	if (control_request_parse(line, len, &r, why, sizeof(why)) < 0)
		return bad_request(why);
	switch (r.op) {
	case CONTROL_LOG_LEVEL:
		return log_level(d, r.level[0] ? r.level : NULL);
	case CONTROL_RELOAD:
		return reload(d);
	case CONTROL_LIMIT:
		return limit(d, &r);
	case CONTROL_RESIZE:
		return resize(d, &r);
	case CONTROL_SNAPSHOT:
		return begin_later(d, &r, later, "a snapshot writes a file",
				   begin_snapshot);
	case CONTROL_MOVE:
		return begin_later(d, &r, later, "a move writes a new image",
				   begin_move);
	case CONTROL_MOVE_CANCEL:
		return move_cancel(d, &r, later);
	case CONTROL_SNAPSHOT_COPY:
		return begin_later(d, &r, later, "a copy writes a new image",
				   begin_snapshot_copy);
	case CONTROL_LIST:
	case CONTROL_STATS:
		break;
	}
	return report(d, &r);
}

char *control_reply(struct daemon *d, const char *line, size_t len,
		    size_t *reply_len, struct control_later *later)
{
	json_object *reply = answer(d, line, len, later);

	return reply ? reply_text(reply, reply_len) : NULL;
}

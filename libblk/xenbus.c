// SPDX-License-Identifier: MIT
/*
 * xenstore reads and writes: the generic helpers, then the backend side
 * of the handshake.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libblk/parse.h"
#include "libblk/xenbus.h"

/* Longest path we build: "/local/domain/N/backend/vbd/N/N/" plus a key. */
#define XENBUS_PATH_MAX 256
#define XENBUS_VALUE_MAX 1024

static int make_path(char *buf, const char *dir, const char *key)
{
	int n = snprintf(buf, XENBUS_PATH_MAX, "%s/%s", dir, key);

	return n < 0 || n >= XENBUS_PATH_MAX ? -ENAMETOOLONG : 0;
}

static int read_in(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		   const char *key, char **out)
{
	char path[XENBUS_PATH_MAX];
	unsigned int len;
	int ret = make_path(path, dir, key);

	if (ret < 0)
		return ret;
	*out = xs_read(xs, t, path, &len);
	if (!*out)
		return -errno;
	/*
	 * A value is bytes: one with a NUL inside would be parsed as the
	 * string before it, "1\0junk" as 1, which is not strict.
	 */
	if (strlen(*out) != len) {
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

int xenbus_read_str(struct xs_handle *xs, const char *dir, const char *key,
		    char **out)
{
	return read_in(xs, XBT_NULL, dir, key, out);
}

int xenbus_read_uint(struct xs_handle *xs, const char *dir, const char *key,
		     uint64_t max, uint64_t *out)
{
	char *s;
	int ret = xenbus_read_str(xs, dir, key, &s);

	if (ret < 0)
		return ret;
	ret = blk_parse_u64(s, max, out);
	free(s);
	return ret;
}

enum xenbus_state xenbus_read_state(struct xs_handle *xs, const char *dir)
{
	uint64_t v;

	if (xenbus_read_uint(xs, dir, "state", XenbusStateReconfigured, &v))
		return XenbusStateUnknown;
	return (enum xenbus_state)v;
}

static int write_in(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		    const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int write_in(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		    const char *key, const char *fmt, ...)
{
	/* Values are short but for error messages, which name a path. */
	char path[XENBUS_PATH_MAX], val[XENBUS_VALUE_MAX];
	va_list ap;
	int ret = make_path(path, dir, key);

	if (ret < 0)
		return ret;
	va_start(ap, fmt);
	ret = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (ret < 0 || ret >= (int)sizeof(val))
		return -EINVAL;
	return xs_write(xs, t, path, val, (unsigned int)ret) ? 0 : -errno;
}

int xenbus_mkdir(struct xs_handle *xs, xs_transaction_t t, const char *path,
		 struct xs_permissions *perms, unsigned int n)
{
	if (!xs_mkdir(xs, t, path) ||
	    !xs_set_permissions(xs, t, path, perms, n))
		return errno ? -errno : -EIO;
	return 0;
}

int xenbus_transact(struct xs_handle *xs,
		    int (*fn)(struct xs_handle *xs, xs_transaction_t t,
			      void *arg),
		    void *arg)
{
	for (int tries = 0; tries < 100; tries++) {
		xs_transaction_t t = xs_transaction_start(xs);
		int ret;

		if (t == XBT_NULL)
			return errno ? -errno : -EIO;
		ret = fn(xs, t, arg);
		if (ret < 0) {
			xs_transaction_end(xs, t, true);
			return ret;
		}
		if (xs_transaction_end(xs, t, false))
			return 0;
		if (errno != EAGAIN)
			return errno ? -errno : -EIO;
	}
	return -EAGAIN;
}

struct backend_fill {
	const char *be;
	int (*fill)(struct xs_handle *, xs_transaction_t, const char *,
		    const void *);
	const void *arg;
};

static int fill_if_present(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct backend_fill *bf = arg;
	char *state;
	int ret = read_in(xs, t, bf->be, "state", &state);

	if (ret < 0)
		return ret;
	free(state);
	return bf->fill(xs, t, bf->be, bf->arg);
}

/*
 * Run @fill inside a transaction that commits only if @be/state still
 * exists; retried while xenstored reports a conflict.
 */
static int transact_on_backend(struct xs_handle *xs, const char *be,
			       int (*fill)(struct xs_handle *, xs_transaction_t,
					   const char *, const void *),
			       const void *arg)
{
	struct backend_fill bf = { be, fill, arg };

	return xenbus_transact(xs, fill_if_present, &bf);
}

struct state_change {
	enum xenbus_state state;
	const char *error;
};

static int fill_state(struct xs_handle *xs, xs_transaction_t t, const char *be,
		      const void *arg)
{
	const struct state_change *sc = arg;
	int ret = 0;

	if (sc->error)
		ret = write_in(xs, t, be, "error", "%s", sc->error);
	if (ret == 0)
		ret = write_in(xs, t, be, "state", "%d", sc->state);
	return ret;
}

/* A number node of a transaction's batch; written only when @write. */
struct number_node {
	const char *key;
	uint64_t value;
	bool write;
};

/* Each node of @nodes that is to be written, in order; the first error. */
static int write_numbers(struct xs_handle *xs, xs_transaction_t t,
			 const char *be, const struct number_node *nodes,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret = nodes[i].write ? write_in(xs, t, be, nodes[i].key,
						    "%" PRIu64, nodes[i].value)
					 : 0;

		if (ret < 0)
			return ret;
	}
	return 0;
}

struct limits_pair {
	uint64_t iops, bps;
};

static int fill_limits(struct xs_handle *xs, xs_transaction_t t, const char *be,
		       const void *arg)
{
	const struct limits_pair *l = arg;
	const struct number_node nodes[] = {
		{ BLK_XENBUS_LIMIT_IOPS, l->iops, true },
		{ BLK_XENBUS_LIMIT_BPS, l->bps, true },
	};

	return write_numbers(xs, t, be, nodes, sizeof(nodes) / sizeof(*nodes));
}

int blk_xenbus_write_limits(struct xs_handle *xs, const char *be, uint64_t iops,
			    uint64_t bps)
{
	struct limits_pair l = { iops, bps };

	return transact_on_backend(xs, be, fill_limits, &l);
}

int xenbus_switch_state(struct xs_handle *xs, const char *be,
			enum xenbus_state state, const char *error)
{
	struct state_change sc = { .state = state, .error = error };

	return transact_on_backend(xs, be, fill_state, &sc);
}

static int fill_init_wait(struct xs_handle *xs, xs_transaction_t t,
			  const char *be, const void *arg)
{
	const struct blk_backend_features *f = arg;
	const struct number_node nodes[] = {
		{ "feature-flush-cache", f->flush, true },
		{ "feature-barrier", f->barrier, true },
		{ "feature-persistent", f->persistent, true },
		/* blkif.h: both or neither, or a frontend may call it an error.
		 */
		{ "feature-discard", f->discard, true },
		{ "discard-granularity", f->discard_granularity, f->discard },
		{ "discard-alignment", f->discard_alignment, f->discard },
		{ "discard-secure", 0, f->discard },
		/* blkif.h: a backend without indirect must not create the node.
		 */
		{ "feature-max-indirect-segments", f->max_indirect_segments,
		  f->max_indirect_segments != 0 },
		{ "max-ring-page-order", f->max_ring_order, true },
		{ "multi-queue-max-queues", f->max_queues, true },
		{ "state", XenbusStateInitWait, true },
	};

	return write_numbers(xs, t, be, nodes, sizeof(nodes) / sizeof(*nodes));
}

int blk_xenbus_init_wait(struct xs_handle *xs, const char *be,
			 const struct blk_backend_features *f)
{
	return transact_on_backend(xs, be, fill_init_wait, f);
}

static int read_abi(struct xs_handle *xs, const char *fe, enum blkif_abi *abi)
{
	char *proto;
	int ret = xenbus_read_str(xs, fe, "protocol", &proto);

	/* No protocol node: the guest's native ABI, x86_32 as Linux assumes. */
	if (ret == -ENOENT) {
		*abi = BLKIF_ABI_X86_32;
		return 0;
	}
	if (ret < 0)
		return ret;
	if (strcmp(proto, XEN_IO_PROTO_ABI_X86_64) == 0)
		*abi = BLKIF_ABI_X86_64;
	else if (strcmp(proto, XEN_IO_PROTO_ABI_X86_32) == 0)
		*abi = BLKIF_ABI_X86_32;
	else
		ret = -EINVAL;
	free(proto);
	return ret;
}

/* An optional number: @dflt when absent, -EINVAL when above @max. */
static int read_optional(struct xs_handle *xs, const char *dir, const char *key,
			 uint64_t max, uint64_t dflt, uint64_t *out)
{
	int ret = xenbus_read_uint(xs, dir, key, max, out);

	if (ret == -ENOENT) {
		*out = dflt;
		return 0;
	}
	return ret;
}

static bool read_bool(struct xs_handle *xs, const char *dir, const char *key)
{
	uint64_t v;

	return xenbus_read_uint(xs, dir, key, 1, &v) == 0 && v == 1;
}

/*
 * One queue's ring references and event channel in @dir: "ring-ref" for a
 * one-page ring, "ring-ref0".."ring-refN-1" otherwise.
 */
static int read_queue(struct xs_handle *xs, const char *dir, unsigned int order,
		      struct blk_frontend_queue *q, char *what, size_t what_len)
{
	uint64_t v;
	int ret;

	for (unsigned int i = 0; i < (1u << order); i++) {
		char key[24];

		if (order == 0)
			snprintf(key, sizeof(key), "ring-ref");
		else
			snprintf(key, sizeof(key), "ring-ref%u", i);
		snprintf(what, what_len, "%s/%s", dir, key);
		ret = xenbus_read_uint(xs, dir, key, UINT32_MAX, &v);
		if (ret < 0)
			return ret;
		q->ring_refs[i] = (uint32_t)v;
	}
	snprintf(what, what_len, "%s/event-channel", dir);
	ret = xenbus_read_uint(xs, dir, "event-channel", UINT32_MAX, &v);
	if (ret < 0)
		return ret;
	q->event_channel = (uint32_t)v;
	return 0;
}

int blk_xenbus_read_frontend(struct xs_handle *xs, const char *fe,
			     const struct blk_backend_features *f,
			     struct blk_frontend *out, char *what,
			     size_t what_len)
{
	uint64_t v;
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(what, what_len, "%s/ring-page-order", fe);
	ret = read_optional(xs, fe, "ring-page-order", f->max_ring_order, 0,
			    &v);
	if (ret < 0)
		return ret;
	out->ring_order = (unsigned int)v;
	snprintf(what, what_len, "%s/multi-queue-num-queues", fe);
	ret = read_optional(xs, fe, "multi-queue-num-queues", f->max_queues, 1,
			    &v);
	if (ret < 0 || v == 0)
		return ret < 0 ? ret : -EINVAL;
	out->nr_queues = (unsigned int)v;
	snprintf(what, what_len, "%s/protocol", fe);
	ret = read_abi(xs, fe, &out->abi);
	if (ret < 0)
		return ret;
	out->persistent = f->persistent &&
			  read_bool(xs, fe, "feature-persistent");
	out->large_sectors = read_bool(xs, fe, "feature-large-sector-size");

	/* With one queue the keys are at the top; with more, per queue. */
	if (out->nr_queues == 1)
		return read_queue(xs, fe, out->ring_order, &out->queue[0], what,
				  what_len);
	for (unsigned int i = 0; i < out->nr_queues; i++) {
		char dir[XENBUS_PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/queue-%u", fe, i);
		ret = read_queue(xs, dir, out->ring_order, &out->queue[i], what,
				 what_len);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int fill_connected(struct xs_handle *xs, xs_transaction_t t,
			  const char *be, const void *arg)
{
	const struct blk_disk_info *d = arg;
	const struct number_node nodes[] = {
		{ "sectors", d->sectors, true },
		{ "info", d->info, true },
		{ "sector-size", d->sector_size, true },
		{ "physical-sector-size", d->physical_sector_size, true },
		{ "state", XenbusStateConnected, true },
	};

	return write_numbers(xs, t, be, nodes, sizeof(nodes) / sizeof(*nodes));
}

int blk_xenbus_connected(struct xs_handle *xs, const char *be,
			 const struct blk_disk_info *disk)
{
	return transact_on_backend(xs, be, fill_connected, disk);
}

static int fill_resized(struct xs_handle *xs, xs_transaction_t t,
			const char *be, const void *arg)
{
	const uint64_t *sectors = arg;
	const struct number_node nodes[] = {
		{ "sectors", *sectors, true },
		{ "state", XenbusStateConnected, true },
	};

	return write_numbers(xs, t, be, nodes, sizeof(nodes) / sizeof(*nodes));
}

int blk_xenbus_resized(struct xs_handle *xs, const char *be, uint64_t sectors)
{
	return transact_on_backend(xs, be, fill_resized, &sectors);
}

int blk_xenbus_write_image_path(struct xs_handle *xs, const char *be,
				const char *path)
{
	return write_in(xs, XBT_NULL, be, "physical-device-path", "%s", path);
}

void blk_xenbus_clear_error(struct xs_handle *xs, const char *be)
{
	char path[XENBUS_PATH_MAX];

	if (make_path(path, be, "error") == 0)
		xs_rm(xs, XBT_NULL, path);
}

/* ---- generic node helpers ---- */

int64_t xenbus_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int xenbus_printf(struct xs_handle *xs, xs_transaction_t t, const char *path,
		  const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = xenbus_vprintf(xs, t, path, fmt, ap);
	va_end(ap);
	return ret;
}

int xenbus_vprintf(struct xs_handle *xs, xs_transaction_t t, const char *path,
		   const char *fmt, va_list ap)
{
	char buf[4096];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	if (!xs_write(xs, t, path, buf, (unsigned int)n))
		return errno ? -errno : -EIO;
	return 0;
}

int xenbus_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *path,
		    uint64_t *out)
{
	unsigned int len;
	char *val = xs_read(xs, t, path, &len);
	int ret;

	if (!val)
		return errno ? -errno : -ENOENT;
	ret = strlen(val) == len ? blk_parse_u64(val, UINT64_MAX, out)
				 : -EINVAL;
	free(val);
	return ret;
}

bool xenbus_exists(struct xs_handle *xs, const char *path)
{
	unsigned int len;
	char *val = xs_read(xs, XBT_NULL, path, &len);

	free(val);
	return val != NULL;
}

bool xenbus_domain_gone(struct xs_handle *xs, uint32_t domid)
{
	errno = 0;
	if (xs_is_domain_introduced(xs, domid))
		return false;
	return errno != EACCES && errno != EPERM;
}

/* Drain every queued watch event without blocking. */
static void drain_watch_events(struct xs_handle *xs)
{
	char **ev;

	while ((ev = xs_check_watch(xs)))
		free(ev);
}

static int read_state(struct xs_handle *xs, const char *path)
{
	uint64_t v;

	if (xenbus_read_u64(xs, XBT_NULL, path, &v) < 0 || v > 8)
		return 0;
	return (int)v;
}

int xenbus_wait_state(struct xs_handle *xs, const char *dir,
		      unsigned int wanted_mask, int timeout_ms, int *last)
{
	char path[512], token[64];
	int64_t deadline = xenbus_now_ms() + timeout_ms;
	int state = 0, ret;

	if (snprintf(path, sizeof(path), "%s/state", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* A token unique to this wait, so nested waits do not confuse. */
	snprintf(token, sizeof(token), "xenbus-wait-%p", (void *)&state);
	if (!xs_watch(xs, path, token))
		return errno ? -errno : -EIO;
	for (;;) {
		int64_t left;
		struct pollfd pfd = { .fd = xs_fileno(xs), .events = POLLIN };

		drain_watch_events(xs);
		state = read_state(xs, path);
		if (state >= 0 && (wanted_mask & XENBUS_STATE_BIT(state))) {
			ret = state;
			break;
		}
		left = deadline - xenbus_now_ms();
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		/* Re-read at least every 200 ms in case a watch was lost. */
		if (poll(&pfd, 1, left > 200 ? 200 : (int)left) < 0 &&
		    errno != EINTR) {
			ret = -errno;
			break;
		}
	}
	xs_unwatch(xs, path, token);
	drain_watch_events(xs);
	if (last)
		*last = state;
	return ret;
}

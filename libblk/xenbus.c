// SPDX-License-Identifier: MIT
/*
 * xenstore reads and writes of the backend handshake.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/xenbus.h"

/* Longest path we build: "/local/domain/N/backend/vbd/N/N/" plus a key. */
#define XENBUS_PATH_MAX 256

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
	return *out ? 0 : -errno;
}

int xenbus_read_str(struct xs_handle *xs, const char *dir, const char *key,
		    char **out)
{
	return read_in(xs, XBT_NULL, dir, key, out);
}

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int xenbus_read_uint(struct xs_handle *xs, const char *dir, const char *key,
		     uint64_t max, uint64_t *out)
{
	char *s;
	int ret = xenbus_read_str(xs, dir, key, &s);

	if (ret < 0)
		return ret;
	ret = parse_uint(s, max, out);
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
	char path[XENBUS_PATH_MAX], val[XENBUS_PATH_MAX];
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

/*
 * Run @fill inside a transaction that commits only if @be/state still
 * exists; retried while xenstored reports a conflict.
 */
static int transact_on_backend(struct xs_handle *xs, const char *be,
			       int (*fill)(struct xs_handle *,
					   xs_transaction_t, const char *,
					   const void *),
			       const void *arg)
{
	for (int tries = 0; tries < 100; tries++) {
		xs_transaction_t t = xs_transaction_start(xs);
		char *state;
		int ret;

		if (t == XBT_NULL)
			return -errno;
		ret = read_in(xs, t, be, "state", &state);
		if (ret == 0) {
			free(state);
			ret = fill(xs, t, be, arg);
		}
		if (ret < 0) {
			xs_transaction_end(xs, t, true);
			return ret;
		}
		if (xs_transaction_end(xs, t, false))
			return 0;
		if (errno != EAGAIN)
			return -errno;
	}
	return -EAGAIN;
}

struct state_change {
	enum xenbus_state state;
	const char *error;
};

static int fill_state(struct xs_handle *xs, xs_transaction_t t,
		      const char *be, const void *arg)
{
	const struct state_change *sc = arg;
	int ret = 0;

	if (sc->error)
		ret = write_in(xs, t, be, "error", "%s", sc->error);
	if (ret == 0)
		ret = write_in(xs, t, be, "state", "%d", sc->state);
	return ret;
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
	int ret;

	ret = write_in(xs, t, be, "feature-flush-cache", "%d", f->flush);
	/* Offered later; say so explicitly rather than by omission. */
	if (ret == 0)
		ret = write_in(xs, t, be, "feature-barrier", "0");
	if (ret == 0)
		ret = write_in(xs, t, be, "feature-discard", "0");
	if (ret == 0)
		ret = write_in(xs, t, be, "feature-persistent", "0");
	if (ret == 0)
		ret = write_in(xs, t, be, "max-ring-page-order", "0");
	if (ret == 0)
		ret = write_in(xs, t, be, "state", "%d", XenbusStateInitWait);
	return ret;
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

/* A node that must be absent or say 0/1: this backend offers one ring. */
static int check_single(struct xs_handle *xs, const char *fe, const char *key,
			uint64_t allowed)
{
	uint64_t v;
	int ret = xenbus_read_uint(xs, fe, key, UINT32_MAX, &v);

	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	return v <= allowed ? 0 : -EINVAL;
}

int blk_xenbus_read_frontend(struct xs_handle *xs, const char *fe,
			     struct blk_frontend_ring *ring, const char **what)
{
	uint64_t v;
	int ret;

	*what = "ring-page-order";
	ret = check_single(xs, fe, "ring-page-order", 0);
	if (ret < 0)
		return ret;
	*what = "multi-queue-num-queues";
	ret = check_single(xs, fe, "multi-queue-num-queues", 1);
	if (ret < 0)
		return ret;
	*what = "ring-ref";
	ret = xenbus_read_uint(xs, fe, "ring-ref", UINT32_MAX, &v);
	if (ret < 0)
		return ret;
	ring->ring_ref = (uint32_t)v;
	*what = "event-channel";
	ret = xenbus_read_uint(xs, fe, "event-channel", UINT32_MAX, &v);
	if (ret < 0)
		return ret;
	ring->event_channel = (uint32_t)v;
	*what = "protocol";
	return read_abi(xs, fe, &ring->abi);
}

static int fill_connected(struct xs_handle *xs, xs_transaction_t t,
			  const char *be, const void *arg)
{
	const struct blk_disk_info *d = arg;
	int ret;

	ret = write_in(xs, t, be, "sectors", "%" PRIu64, d->sectors);
	if (ret == 0)
		ret = write_in(xs, t, be, "info", "%u", d->info);
	if (ret == 0)
		ret = write_in(xs, t, be, "sector-size", "%u", d->sector_size);
	if (ret == 0)
		ret = write_in(xs, t, be, "physical-sector-size", "%u",
			       d->physical_sector_size);
	if (ret == 0)
		ret = write_in(xs, t, be, "state", "%d", XenbusStateConnected);
	return ret;
}

int blk_xenbus_connected(struct xs_handle *xs, const char *be,
			 const struct blk_disk_info *disk)
{
	return transact_on_backend(xs, be, fill_connected, disk);
}

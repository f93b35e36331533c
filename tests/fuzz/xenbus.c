// SPDX-License-Identifier: MIT
/*
 * Fuzz harness: the frontend's xenstore nodes as the backend parses them
 * (blk_xenbus_read_frontend() and xenbus_read_state() in libblk/xenbus.c).
 *
 * Input: text lines, "key=value", key relative to the frontend's
 * directory (ring-page-order, queue-3/ring-ref2, ...); the value is every
 * byte up to the newline, NUL bytes included, as a guest may write them.
 * Lines "!max-ring-page-order=N", "!multi-queue-max-queues=N",
 * "!feature-persistent=N" and "!what-len=N" set what the backend offered
 * and the size of the buffer that names a bad node. A key given twice
 * keeps its last value.
 *
 * The nodes are served by this file's xs_read(), which takes precedence
 * over libxenstore's at link time: the parsing code runs unchanged, but
 * without xenstored. Out of reach here, and covered by the xensim tests
 * instead: xenstored itself (permissions, its own size limits, watches,
 * transactions), and the backend's writes.
 *
 * Invariants: the parse succeeds exactly when every node it needs is
 * present and strictly valid — a plain decimal number within the range
 * the backend offered, made of the value's bytes and nothing else, or
 * one of the two protocol names — and then returns exactly those values,
 * with nothing set beyond the queues and ring pages in use; when it
 * fails it says -ENOENT or -EINVAL correctly and names the node at fault.
 */
#include <errno.h>
#include <stdbool.h>

#include "libblk/xenbus.h"
#include "tests/fuzz/fuzz.h"

#define FE "/local/domain/7/device/vbd/51712"
#define MAX_NODES 256
#define MAX_KEY 64

struct node {
	char key[MAX_KEY];
	const uint8_t *value;
	size_t len;
};

/* The frontend's directory, for the length of one input. */
static struct {
	struct node nodes[MAX_NODES];
	unsigned int nr;
} store;

static const struct node *find_node(const char *key)
{
	for (unsigned int i = store.nr; i-- > 0;)
		if (strcmp(store.nodes[i].key, key) == 0)
			return &store.nodes[i];
	return NULL;
}

/* xenstore's read, as libxenstore answers it: a copy, NUL-terminated. */
void *xs_read(struct xs_handle *h, xs_transaction_t t, const char *path,
	      unsigned int *len)
{
	size_t dir = strlen(FE);
	const struct node *n;
	char *v;

	if (strncmp(path, FE "/", dir + 1) != 0 ||
	    !(n = find_node(path + dir + 1))) {
		errno = ENOENT;
		return NULL;
	}
	v = malloc(n->len + 1);
	FUZZ_ASSERT(v != NULL);
	memcpy(v, n->value, n->len);
	v[n->len] = '\0';
	if (len)
		*len = (unsigned int)n->len;
	return v;
}

/* ---- the input ---- */

struct offer {
	struct blk_backend_features f;
	size_t what_len;
};

/* A lax number for the harness's own settings. */
static uint64_t setting(const uint8_t *v, size_t len)
{
	uint64_t n = 0;

	for (size_t i = 0; i < len && v[i] >= '0' && v[i] <= '9'; i++)
		n = n * 10 + (v[i] - '0');
	return n;
}

static void set_offer(struct offer *o, const char *key, const uint8_t *v,
		      size_t len)
{
	uint64_t n = setting(v, len);

	/* Clamped as blkbackd's options clamp them. */
	if (strcmp(key, "!max-ring-page-order") == 0)
		o->f.max_ring_order = (unsigned int)(n % 5);
	else if (strcmp(key, "!multi-queue-max-queues") == 0)
		o->f.max_queues = (unsigned int)(n % BLK_MAX_QUEUES + 1);
	else if (strcmp(key, "!feature-persistent") == 0)
		o->f.persistent = n & 1;
	else if (strcmp(key, "!what-len") == 0)
		o->what_len = (size_t)(n % 300 + 1);
}

static void read_lines(const uint8_t *data, size_t size, struct offer *o)
{
	const uint8_t *end = data + size;

	store.nr = 0;
	while (data < end) {
		const uint8_t *nl = memchr(data, '\n', (size_t)(end - data));
		const uint8_t *line_end = nl ? nl : end;
		const uint8_t *eq =
			memchr(data, '=', (size_t)(line_end - data));

		if (eq && eq - data < MAX_KEY && store.nr < MAX_NODES) {
			struct node *n = &store.nodes[store.nr];

			memcpy(n->key, data, (size_t)(eq - data));
			n->key[eq - data] = '\0';
			n->value = eq + 1;
			n->len = (size_t)(line_end - eq - 1);
			if (n->key[0] == '!')
				set_offer(o, n->key, n->value, n->len);
			else if (strlen(n->key) == (size_t)(eq - data))
				store.nr++;
		}
		data = line_end + (nl != NULL);
	}
}

/* ---- what the guest's nodes must mean ---- */

struct expect {
	int ret;
	char what[160]; /* the node at fault, when ret < 0 */
	struct blk_frontend fe;
};

/*
 * A number node as blkif.h means it: decimal digits and nothing else, at
 * most @max. -ENOENT when absent, -EINVAL otherwise.
 */
static int strict_number(const char *key, uint64_t max, uint64_t *out)
{
	const struct node *n = find_node(key);
	uint64_t v = 0;

	if (!n)
		return -ENOENT;
	if (n->len == 0)
		return -EINVAL;
	for (size_t i = 0; i < n->len; i++) {
		if (n->value[i] < '0' || n->value[i] > '9')
			return -EINVAL;
		v = v * 10 + (n->value[i] - '0');
		if (v > max)
			return -EINVAL;
	}
	*out = v;
	return 0;
}

static bool node_is(const struct node *n, const char *s)
{
	return n && n->len == strlen(s) && memcmp(n->value, s, n->len) == 0;
}

static bool flag_set(const char *key)
{
	uint64_t v;

	return strict_number(key, 1, &v) == 0 && v == 1;
}

/* Fails @e at node @key (relative to FE) with @ret. */
static bool fail(struct expect *e, const char *key, int ret)
{
	e->ret = ret;
	snprintf(e->what, sizeof(e->what), FE "/%s", key);
	return false;
}

static bool number_or(struct expect *e, const char *key, uint64_t max,
		      uint64_t dflt, uint64_t *out)
{
	int ret = strict_number(key, max, out);

	if (ret == -ENOENT)
		*out = dflt;
	else if (ret < 0)
		return fail(e, key, ret);
	return true;
}

static bool expect_queue(struct expect *e, const char *prefix,
			 struct blk_frontend_queue *q)
{
	char key[MAX_KEY];
	uint64_t v;
	int ret;

	for (unsigned int i = 0; i < (1u << e->fe.ring_order); i++) {
		if (e->fe.ring_order == 0)
			snprintf(key, sizeof(key), "%sring-ref", prefix);
		else
			snprintf(key, sizeof(key), "%sring-ref%u", prefix, i);
		ret = strict_number(key, UINT32_MAX, &v);
		if (ret < 0)
			return fail(e, key, ret);
		q->ring_refs[i] = (uint32_t)v;
	}
	snprintf(key, sizeof(key), "%sevent-channel", prefix);
	ret = strict_number(key, UINT32_MAX, &v);
	if (ret < 0)
		return fail(e, key, ret);
	q->event_channel = (uint32_t)v;
	return true;
}

static bool expect_abi(struct expect *e)
{
	const struct node *n = find_node("protocol");

	if (!n || node_is(n, XEN_IO_PROTO_ABI_X86_32))
		e->fe.abi = BLKIF_ABI_X86_32;
	else if (node_is(n, XEN_IO_PROTO_ABI_X86_64))
		e->fe.abi = BLKIF_ABI_X86_64;
	else
		return fail(e, "protocol", -EINVAL);
	return true;
}

static void expect_frontend(const struct blk_backend_features *f,
			    struct expect *e)
{
	uint64_t v;

	memset(e, 0, sizeof(*e));
	if (!number_or(e, "ring-page-order", f->max_ring_order, 0, &v))
		return;
	e->fe.ring_order = (unsigned int)v;
	if (!number_or(e, "multi-queue-num-queues", f->max_queues, 1, &v))
		return;
	if (v == 0) {
		fail(e, "multi-queue-num-queues", -EINVAL);
		return;
	}
	e->fe.nr_queues = (unsigned int)v;
	if (!expect_abi(e))
		return;
	e->fe.persistent = f->persistent && flag_set("feature-persistent");
	e->fe.large_sectors = flag_set("feature-large-sector-size");
	for (unsigned int q = 0; q < e->fe.nr_queues; q++) {
		char prefix[32] = "";

		if (e->fe.nr_queues > 1)
			snprintf(prefix, sizeof(prefix), "queue-%u/", q);
		if (!expect_queue(e, prefix, &e->fe.queue[q]))
			return;
	}
}

/* ---- the checks ---- */

static void check_frontend(const struct offer *o)
{
	struct blk_frontend got;
	struct expect want;
	char *what = malloc(o->what_len); /* exact: ASan sees an overrun */
	int ret;

	FUZZ_ASSERT(what != NULL);
	memset(&got, 0x5a, sizeof(got));
	ret = blk_xenbus_read_frontend((struct xs_handle *)&store, FE, &o->f,
				       &got, what, o->what_len);
	expect_frontend(&o->f, &want);
	FUZZ_ASSERT(ret == want.ret);
	if (ret < 0) {
		/* The node at fault, cut to the buffer, always terminated. */
		FUZZ_ASSERT(memchr(what, '\0', o->what_len) != NULL);
		FUZZ_ASSERT(strncmp(what, want.what, o->what_len - 1) == 0);
		free(what);
		return;
	}
	free(what);
	FUZZ_ASSERT(got.ring_order <= o->f.max_ring_order);
	FUZZ_ASSERT(got.nr_queues >= 1 && got.nr_queues <= o->f.max_queues);
	/* Values and zeros: nothing set past the queues and pages in use. */
	FUZZ_ASSERT(memcmp(&got, &want.fe, sizeof(got)) == 0);
}

static void check_state(void)
{
	uint64_t v;
	enum xenbus_state want =
		strict_number("state", XenbusStateReconfigured, &v) == 0
			? (enum xenbus_state)v
			: XenbusStateUnknown;

	FUZZ_ASSERT(xenbus_read_state((struct xs_handle *)&store, FE) == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct offer o = {
		.f = { .max_ring_order = 4,
		       .max_queues = 4,
		       .persistent = true },
		.what_len = 160,
	};

	read_lines(data, size, &o);
	check_frontend(&o);
	check_state();
	return 0;
}

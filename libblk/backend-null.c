// SPDX-License-Identifier: MIT
/*
 * The null image (libblk/backend-null.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/backend-null.h"
#include "libblk/backend.h"
#include "libblk/parse.h"

#define PREFIX "null:"
/* Whatever a 64-bit sector count can address. */
#define MAX_BYTES (UINT64_MAX >> 10)

struct null_done {
	void *cookie;
	int res;
};

struct null_backend {
	struct blk_backend base;
	struct null_done *done; /* answered, waiting for the watch to fire */
	unsigned int nr_done, cap_done;
	/* The other array, so that answering one batch may queue the next. */
	struct null_done *spare;
	unsigned int cap_spare;
	bool watching; /* a watch is armed to deliver them */
};

bool blk_null_is_target(const char *target)
{
	return strncmp(target, PREFIX, strlen(PREFIX)) == 0;
}

static int suffix_shift(const char *s, unsigned int *shift)
{
	static const char units[] = "KMGT";
	const char *u;

	if (!*s) {
		*shift = 0;
		return 0;
	}
	u = strchr(units, *s);
	if (!u || s[1])
		return -EINVAL;
	*shift = 10u * (unsigned int)(u - units + 1);
	return 0;
}

int blk_null_size(const char *target, uint64_t *bytes)
{
	const char *digits, *end;
	unsigned int shift;
	uint64_t n;

	if (!blk_null_is_target(target))
		return -EINVAL;
	digits = target + strlen(PREFIX);
	if (blk_parse_u64_prefix(digits, MAX_BYTES, &n, &end) < 0 ||
	    suffix_shift(end, &shift) < 0 || n == 0 || n > (MAX_BYTES >> shift))
		return -EINVAL;
	n <<= shift;
	if (n % 512)
		return -EINVAL;
	*bytes = n;
	return 0;
}

static struct null_backend *null_of(struct blk_backend *b)
{
	return (struct null_backend *)b;
}

static int queue_done(struct null_backend *n, void *cookie, int res)
{
	if (n->nr_done == n->cap_done) {
		unsigned int cap = n->cap_done ? 2 * n->cap_done : 32;
		struct null_done *grown =
			realloc(n->done, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		n->done = grown;
		n->cap_done = cap;
	}
	if (!n->watching) {
		int ret = blk_backend_watch(&n->base, -1, 0, 0);

		if (ret < 0)
			return ret;
		n->watching = true;
	}
	n->done[n->nr_done++] = (struct null_done){ cookie, res };
	return 0;
}

static int null_submit(struct blk_backend *b, const struct blk_backend_io *io,
		       void *cookie)
{
	int res = 0, ret;

	switch (io->op) {
	case BLK_BACKEND_READ:
		for (unsigned int i = 0; i < io->iovcnt; i++)
			memset(io->iov[i].iov_base, 0, io->iov[i].iov_len);
		res = (int)io->length;
		break;
	case BLK_BACKEND_WRITE:
		res = (int)io->length;
		break;
	case BLK_BACKEND_FLUSH:
	case BLK_BACKEND_DISCARD:
		break;
	}
	ret = queue_done(null_of(b), cookie, res);
	return ret < 0 ? ret : 1;
}

/* The watch fired: this pass answers what the last one submitted. */
static void null_event(struct blk_backend *b, unsigned int which, int res)
{
	struct null_backend *n = null_of(b);
	struct null_done *done = n->done;
	unsigned int nr = n->nr_done, cap = n->cap_done;

	n->watching = false;
	n->done = n->spare;
	n->cap_done = n->cap_spare;
	n->nr_done = 0;
	for (unsigned int i = 0; i < nr; i++)
		blk_backend_complete(b->e, done[i].cookie, done[i].res);
	n->spare = done;
	n->cap_spare = cap;
}

static void null_destroy(struct blk_backend *b)
{
	free(null_of(b)->done);
	free(null_of(b)->spare);
	free(b);
}

static const struct blk_backend_ops null_ops = {
	.submit = null_submit,
	.event = null_event,
	.destroy = null_destroy,
};

int blk_backend_null_new(struct blk_backend **out)
{
	struct null_backend *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->base.ops = &null_ops;
	*out = &n->base;
	return 0;
}

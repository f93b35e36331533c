// SPDX-License-Identifier: MIT
/*
 * Worker threads without threads (tests/fake-worker.h): each fake worker
 * is a list of rings, and a call is a change to it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blkbackd/worker.h"
#include "tests/fake-worker.h"

#define FAKE_MAX_RINGS 256

struct worker {
	unsigned int index;
	int closed_fd;
	struct fake_ring rings[FAKE_MAX_RINGS];
	unsigned int nr;
};

static unsigned int calls[FAKE_NR_CALLS];
static struct blk_conn_params last_connect;
static uint64_t last_resize;
static bool held;
static int connect_err;

void fake_workers_start(struct daemon *d, unsigned int n)
{
	d->workers = calloc(n, sizeof(*d->workers));
	if (!d->workers)
		abort();
	for (unsigned int i = 0; i < n; i++) {
		d->workers[i] = calloc(1, sizeof(struct worker));
		if (!d->workers[i])
			abort();
		d->workers[i]->index = i;
		d->workers[i]->closed_fd = d->closed_fd;
	}
	d->nr_workers = n;
	memset(calls, 0, sizeof(calls));
	held = false;
	connect_err = 0;
}

void fake_workers_stop(struct daemon *d)
{
	for (unsigned int i = 0; i < d->nr_workers; i++)
		free(d->workers[i]);
	free(d->workers);
	d->workers = NULL;
	d->nr_workers = 0;
}

unsigned int fake_calls(enum fake_call call)
{
	return calls[call];
}

const struct blk_conn_params *fake_last_connect(void)
{
	return &last_connect;
}

uint64_t fake_last_resize(void)
{
	return last_resize;
}

static unsigned int count_rings(const struct daemon *d, bool closing)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < d->nr_workers; i++)
		for (unsigned int r = 0; r < d->workers[i]->nr; r++)
			n += d->workers[i]->rings[r].closing == closing;
	return n;
}

unsigned int fake_live_rings(const struct daemon *d)
{
	return count_rings(d, false);
}

unsigned int fake_closing_rings(const struct daemon *d)
{
	return count_rings(d, true);
}

uint64_t fake_ring_cookie(const struct daemon *d, unsigned int i)
{
	for (unsigned int w = 0; w < d->nr_workers; w++)
		for (unsigned int r = 0; r < d->workers[w]->nr; r++)
			if (!d->workers[w]->rings[r].closing && i-- == 0)
				return d->workers[w]->rings[r].cookie;
	return 0;
}

/* Tell the main loop that rings closed, as a worker does. */
static void signal_closed(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		abort();
}

void fake_workers_hold(struct daemon *d, bool hold)
{
	held = hold;
	if (!hold && fake_closing_rings(d))
		signal_closed(d->closed_fd);
}

void fake_workers_fail_connect(int err)
{
	connect_err = err;
}

static struct fake_ring *find_ring(struct worker *w, uint64_t cookie)
{
	for (unsigned int r = 0; r < w->nr; r++)
		if (w->rings[r].cookie == cookie)
			return &w->rings[r];
	return NULL;
}

int worker_connect(struct worker *w, const struct blk_conn_params *p)
{
	struct fake_ring *r;

	calls[FAKE_CONNECT]++;
	last_connect = *p;
	/* Taken, whatever the result, as blk_engine_connect() takes it. */
	blk_handover_release(p->handover);
	if (connect_err) {
		int err = connect_err;

		connect_err = 0;
		return err;
	}
	if (w->nr == FAKE_MAX_RINGS)
		return -ENOMEM;
	r = &w->rings[w->nr++];
	*r = (struct fake_ring){ .cookie = (uint64_t)(uintptr_t)p->owner,
				 .params = *p,
				 .sectors = p->limits.sectors };
	return 0;
}

int worker_disconnect(struct worker *w, uint64_t cookie,
		      enum blk_disconnect_mode mode)
{
	struct fake_ring *r = find_ring(w, cookie);

	(void)mode;
	calls[FAKE_DISCONNECT]++;
	if (!r || r->closing)
		return -ENOENT;
	r->closing = true;
	if (!held)
		signal_closed(w->closed_fd);
	return 0;
}

void worker_take_closed(struct worker *w, worker_closed_fn fn, void *arg)
{
	static const struct blk_stats none;

	if (held)
		return;
	for (unsigned int r = 0; r < w->nr;) {
		uint64_t cookie = w->rings[r].cookie;

		if (!w->rings[r].closing) {
			r++;
			continue;
		}
		/* Off the list first: @fn may connect on this worker. */
		w->rings[r] = w->rings[--w->nr];
		fn(arg, cookie, &none, NULL);
	}
}

void worker_resize(struct worker *w, uint64_t cookie, uint64_t sectors)
{
	struct fake_ring *r = find_ring(w, cookie);

	calls[FAKE_RESIZE]++;
	last_resize = sectors;
	if (r)
		r->sectors = sectors;
}

int worker_stats(struct worker *w, uint64_t cookie, struct blk_stats *out)
{
	if (!find_ring(w, cookie))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	return 0;
}

unsigned int worker_nr_rings(const struct worker *w)
{
	return w->nr;
}

unsigned int worker_index(const struct worker *w)
{
	return w->index;
}

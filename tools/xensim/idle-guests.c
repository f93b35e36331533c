// SPDX-License-Identifier: MIT
/*
 * The handshakes are mostly waiting (for xenstored and for the backend to
 * change state), so a few threads take the domains from a shared counter
 * and run them side by side. Each frontend is touched by one thread at a
 * time: its connecting thread, then the owner, then its closing thread.
 */
#include "tools/xensim/idle-guests.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/xensim/frontend.h"

#define MAX_THREADS 64u

struct idle_guests {
	struct idle_guests_config cfg;
	uint32_t *domids;
	struct frontend **fe; /* cfg.n entries, NULL where not connected */
};

static int connect_one(struct idle_guests *ig, unsigned int i);

/* One parallel pass over all the frontends; the first error wins. */
struct pass {
	struct idle_guests *ig;
	int (*step)(struct idle_guests *ig, unsigned int i);
	const char *what;
	bool stop_on_error; /* connect: all or nothing; close: every one */
	unsigned int next; /* the next frontend to take */
	pthread_mutex_t lock;
	int error;
	char why[256];
};

static void *pass_thread(void *arg)
{
	struct pass *p = arg;

	for (;;) {
		unsigned int i;
		int ret;

		pthread_mutex_lock(&p->lock);
		i = p->error && p->stop_on_error ? p->ig->cfg.n : p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->ig->cfg.n)
			return NULL;
		ret = p->step(p->ig, i);
		if (ret < 0) {
			pthread_mutex_lock(&p->lock);
			if (!p->error) {
				p->error = ret;
				snprintf(p->why, sizeof(p->why),
					 "idle guest dom %u: %s: %s",
					 p->ig->domids[i], p->what,
					 strerror(-ret));
			}
			pthread_mutex_unlock(&p->lock);
		}
	}
}

/* Run @step on every frontend with the configured threads. */
static int run_pass(struct idle_guests *ig,
		    int (*step)(struct idle_guests *, unsigned int),
		    const char *what, char *why, size_t why_len)
{
	struct pass p = { .ig = ig,
			  .step = step,
			  .what = what,
			  .stop_on_error = step == connect_one };
	pthread_t tid[MAX_THREADS];
	unsigned int started = 0, want = ig->cfg.nr_threads;

	if (want > MAX_THREADS)
		want = MAX_THREADS;
	if (want > ig->cfg.n)
		want = ig->cfg.n;
	pthread_mutex_init(&p.lock, NULL);
	while (started < want &&
	       pthread_create(&tid[started], NULL, pass_thread, &p) == 0)
		started++;
	if (!started) /* no thread at all: do it here */
		pass_thread(&p);
	while (started)
		pthread_join(tid[--started], NULL);
	pthread_mutex_destroy(&p.lock);
	if (p.error)
		snprintf(why, why_len, "%s", p.why);
	return p.error;
}

static int connect_one(struct idle_guests *ig, unsigned int i)
{
	/* blkfront's single-queue defaults; no data page is ever used. */
	struct frontend_config fc = { .domid = ig->domids[i],
				      .devid = ig->cfg.devid,
				      .protocol = FRONTEND_PROTO_X86_64,
				      .nr_data_pages = 1,
				      .timeout_ms = ig->cfg.timeout_ms,
				      .ring_order = 0,
				      .nr_queues = 1,
				      .max_indirect = 0,
				      .persistent = FRONTEND_AUTO,
				      .large_sectors = 0 };

	int ret = frontend_connect(&fc, &ig->fe[i]);

	if (ret)
		return ret;
	/* The backend's event at connect came before its Connected state. */
	frontend_take_events(ig->fe[i]);
	if (ig->cfg.connected)
		ig->cfg.connected(ig->cfg.arg);
	return 0;
}

static int close_one(struct idle_guests *ig, unsigned int i)
{
	struct frontend *fe = ig->fe[i];

	ig->fe[i] = NULL;
	return fe ? frontend_close(fe) : 0;
}

static void free_guests(struct idle_guests *ig)
{
	free(ig->fe);
	free(ig->domids);
	free(ig);
}

int idle_guests_connect(const struct idle_guests_config *cfg,
			struct idle_guests **out, char *why, size_t why_len)
{
	struct idle_guests *ig = calloc(1, sizeof(*ig));
	char ignored[64];
	int ret;

	if (!ig)
		return -ENOMEM;
	ig->cfg = *cfg;
	ig->domids = calloc(cfg->n + 1, sizeof(*ig->domids));
	ig->fe = calloc(cfg->n + 1, sizeof(*ig->fe));
	if (!ig->domids || !ig->fe) {
		free_guests(ig);
		snprintf(why, why_len, "out of memory for %u idle guests",
			 cfg->n);
		return -ENOMEM;
	}
	memcpy(ig->domids, cfg->domids, cfg->n * sizeof(*ig->domids));
	ret = run_pass(ig, connect_one, "blkfront connect", why, why_len);
	if (ret < 0) {
		run_pass(ig, close_one, "close", ignored, sizeof(ignored));
		free_guests(ig);
		return ret;
	}
	*out = ig;
	return 0;
}

int idle_guests_close(struct idle_guests *ig, char *why, size_t why_len)
{
	int ret = run_pass(ig, close_one, "blkfront close", why, why_len);

	free_guests(ig);
	return ret;
}

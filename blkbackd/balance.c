// SPDX-License-Identifier: MIT
/*
 * Sharing the workers among busy rings: see balance.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "blkbackd/balance.h"
#include "blkbackd/log.h"
#include "blkbackd/vbd.h"
#include "blkbackd/worker.h"

/* A ring as the last interval saw it. */
struct ring_seen {
	uint64_t cookie;
	unsigned int worker; /* its index in d->workers */
	uint64_t answered; /* in the interval */
	/* Service lately: halved every interval, plus what it answered. */
	uint64_t score;
};

struct balance {
	struct ring_seen *seen; /* sorted by cookie */
	size_t nr_seen;
};

int balance_new(struct balance **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void balance_free(struct balance *b)
{
	if (b)
		free(b->seen);
	free(b);
}

static int by_cookie(const void *a, const void *b)
{
	uint64_t x = ((const struct ring_seen *)a)->cookie;
	uint64_t y = ((const struct ring_seen *)b)->cookie;

	return x < y ? -1 : x > y;
}

static int by_score_down(const void *a, const void *b)
{
	uint64_t x = ((const struct ring_seen *)a)->score;
	uint64_t y = ((const struct ring_seen *)b)->score;

	return x > y ? -1 : x < y;
}

/* The score a ring had at the last interval; 0 for a new one. */
static uint64_t last_score(const struct balance *b, uint64_t cookie)
{
	struct ring_seen key = { .cookie = cookie };
	const struct ring_seen *r;

	/* Before the first look there is no array, and bsearch() takes none. */
	if (!b->seen)
		return 0;
	r = bsearch(&key, b->seen, b->nr_seen, sizeof(key), by_cookie);
	return r ? r->score : 0;
}

/* Every worker's rings and what they answered; NULL without memory. */
static struct ring_seen *look(const struct balance *b, struct daemon *d,
			      size_t *nr)
{
	size_t max = 0, n = 0;
	struct ring_seen *rings;
	struct worker_ring_load *loads;

	for (unsigned int i = 0; i < d->nr_workers; i++)
		max += worker_nr_rings(d->workers[i]);
	rings = calloc(max ?: 1, sizeof(*rings));
	loads = calloc(max ?: 1, sizeof(*loads));
	if (!rings || !loads) {
		free(rings);
		free(loads);
		return NULL;
	}
	for (unsigned int i = 0; i < d->nr_workers && n < max; i++) {
		int got = worker_loads(d->workers[i], loads, max - n);

		for (int k = 0; k < got; k++, n++)
			rings[n] = (struct ring_seen){
				.cookie = loads[k].cookie,
				.worker = i,
				.answered = loads[k].answered,
				.score = last_score(b, loads[k].cookie) / 2 +
					 loads[k].answered,
			};
	}
	free(loads);
	*nr = n;
	return rings;
}

/*
 * Move one busy ring of the most crowded worker to the least crowded one,
 * if that evens them out or rotates who is crowded; see balance.h.
 */
static void even_out(struct daemon *d, struct ring_seen *rings, size_t n,
		     uint64_t busy_min)
{
	unsigned int *busy = calloc(d->nr_workers, sizeof(*busy));
	unsigned int most = 0, least = 0;

	if (!busy)
		return;
	for (size_t k = 0; k < n; k++)
		if (rings[k].answered >= busy_min)
			busy[rings[k].worker]++;
	for (unsigned int i = 1; i < d->nr_workers; i++) {
		if (busy[i] > busy[most])
			most = i;
		if (busy[i] < busy[least])
			least = i;
	}
	if (busy[most] < 2 || busy[most] <= busy[least]) {
		free(busy);
		return;
	}
	free(busy);
	qsort(rings, n, sizeof(*rings), by_score_down);
	for (size_t k = 0; k < n; k++) {
		if (rings[k].worker != most || rings[k].answered < busy_min)
			continue;
		if (vbd_move_ring(d, rings[k].cookie, d->workers[least]) == 0)
			return;
	}
}

void balance_run(struct balance *b, struct daemon *d, unsigned int interval_ms)
{
	uint64_t busy_min =
		(uint64_t)BALANCE_BUSY_PER_SECOND * interval_ms / 1000 ?: 1;
	struct ring_seen *rings;
	size_t n;

	if (d->nr_workers < 2 || vbd_rings_moving(d))
		return;
	rings = look(b, d, &n);
	if (!rings) {
		log_warn("out of memory for sharing the workers; trying again");
		return;
	}
	even_out(d, rings, n, busy_min);
	qsort(rings, n, sizeof(*rings), by_cookie);
	free(b->seen);
	b->seen = rings;
	b->nr_seen = n;
}

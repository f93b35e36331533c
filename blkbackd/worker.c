// SPDX-License-Identifier: MIT
/*
 * Worker threads and their command queue.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "blkbackd/cpu-affinity.h"
#include "blkbackd/log.h"
#include "blkbackd/worker.h"

enum cmd_type {
	CMD_CONNECT,
	CMD_DISCONNECT,
	CMD_RESIZE,
	CMD_STATS,
	CMD_LOADS,
	CMD_STOP,
};

struct cmd {
	enum cmd_type type;
	const struct blk_conn_params *params;
	uint64_t cookie;
	uint64_t sectors;
	enum blk_disconnect_mode mode;
	/* CMD_STATS: the caller's; CMD_DISCONNECT: the last counters, ours. */
	struct blk_stats *stats;
	/* CMD_DISCONNECT with BLK_DISCONNECT_MOVE: the ring's mappings. */
	struct blk_handover *kept;
	/* CMD_LOADS: the caller's array of @max, and how many it got. */
	struct worker_ring_load *loads;
	unsigned int max, nr_loads;
	int result;
	bool done;
	struct cmd *next;
};

/* A ring this worker serves, found again by its cookie. */
struct ring_slot {
	uint64_t cookie;
	struct blk_conn *conn;
	struct cmd *closing; /* the disconnect waiting for conn_closed() */
	uint64_t answered_seen; /* requests answered at the last CMD_LOADS */
	struct ring_slot *next;
};

struct worker {
	unsigned int index;
	struct worker_config cfg;
	pthread_t thread;
	int cmd_fd; /* eventfd: commands queued */
	int broken_fd;
	int closed_fd; /* eventfd: rings closed, see worker_take_closed() */

	pthread_mutex_t lock; /* protects queue, closed and cmd->done */
	pthread_cond_t cond;
	struct cmd *queue;
	struct cmd *closed; /* disconnects done, newest first */

	/* Owned by the worker thread. */
	struct blk_engine *engine;
	struct ring_slot *rings;
	bool stopping;
	char name[16]; /* its thread's, and so its event channels' */
	int cpu; /* pinned to, its events routed to; -1: no routing */

	/* The main thread's: its count, and each ring's disconnect. */
	unsigned int nr_rings;
	struct cmd *goodbyes;
};

static const uint64_t CMD_TAG = 1;

static void cmd_complete(struct worker *w, struct cmd *c, int result)
{
	pthread_mutex_lock(&w->lock);
	c->result = result;
	c->done = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Put @c on the locked list @head, then add one to the eventfd @fd. */
static int cmd_post(struct worker *w, struct cmd **head, struct cmd *c, int fd)
{
	uint64_t one = 1;

	pthread_mutex_lock(&w->lock);
	c->next = *head;
	*head = c;
	pthread_mutex_unlock(&w->lock);
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}

/* Hand @c to the worker thread. */
static int cmd_queue(struct worker *w, struct cmd *c)
{
	return cmd_post(w, &w->queue, c, w->cmd_fd);
}

/* Queue @c and wait until the worker thread completes it. */
static int cmd_run(struct worker *w, struct cmd *c)
{
	int ret = cmd_queue(w, c);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&w->lock);
	while (!c->done)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	return c->result;
}

static struct ring_slot **find_slot(struct worker *w, uint64_t cookie)
{
	struct ring_slot **pp;

	for (pp = &w->rings; *pp; pp = &(*pp)->next)
		if ((*pp)->cookie == cookie)
			return pp;
	return NULL;
}

/*
 * A pinned worker's newly bound event channel: its interrupt goes to the
 * worker's CPU (cpu-affinity.h). One that cannot be routed leaves the
 * worker pinned, and routing off from then on.
 */
static void route_events(struct worker *w)
{
	char irq_name[sizeof("evtchn:") + sizeof(w->name)];
	int ret;

	if (w->cpu < 0)
		return;
	snprintf(irq_name, sizeof(irq_name), "evtchn:%s", w->name);
	ret = affinity_route_irqs(irq_name, w->cpu);
	if (ret >= 0)
		return;
	log_warn("worker %u: cannot route its event channels' interrupts to "
		 "CPU %d: %s; it stays on that CPU, its events wherever Linux "
		 "binds them (a unit needs ProtectKernelTunables=no, see "
		 "blkbackd(8) on --pin-workers)",
		 w->index, w->cpu, strerror(-ret));
	w->cpu = -1;
}

static void do_connect(struct worker *w, struct cmd *c)
{
	struct ring_slot *slot = calloc(1, sizeof(*slot));
	int ret;

	if (!slot) {
		/* Ours to release, as blk_engine_connect() would have. */
		blk_handover_release(c->params->handover);
		cmd_complete(w, c, -ENOMEM);
		return;
	}
	ret = blk_engine_connect(w->engine, c->params, &slot->conn);
	if (ret < 0) {
		free(slot);
		cmd_complete(w, c, ret);
		return;
	}
	slot->cookie = (uint64_t)(uintptr_t)c->params->owner;
	slot->next = w->rings;
	w->rings = slot;
	cmd_complete(w, c, 0);
	route_events(w);
}

/* Give the main thread a finished disconnect (worker_take_closed()). */
static void report_closed(struct worker *w, struct cmd *c)
{
	/* An eventfd write fails only when its count would overflow. */
	if (cmd_post(w, &w->closed, c, w->closed_fd) < 0)
		log_err("worker %u: cannot report a closed ring: %m", w->index);
}

static void do_disconnect(struct worker *w, struct cmd *c)
{
	struct ring_slot **pp = find_slot(w, c->cookie);

	if (!pp) {
		report_closed(w, c);
		return;
	}
	(*pp)->closing = c;
	/* conn_closed() reports it, now or after draining. */
	blk_engine_disconnect(w->engine, (*pp)->conn, c->mode);
}

static void do_resize(struct worker *w, struct cmd *c)
{
	struct ring_slot **pp = find_slot(w, c->cookie);

	if (pp)
		blk_engine_resize(w->engine, (*pp)->conn, c->sectors);
	cmd_complete(w, c, pp ? 0 : -ENOENT);
}

static void do_stats(struct worker *w, struct cmd *c)
{
	struct ring_slot **pp = find_slot(w, c->cookie);

	if (pp)
		blk_engine_conn_stats((*pp)->conn, c->stats);
	cmd_complete(w, c, pp ? 0 : -ENOENT);
}

static uint64_t answered(const struct blk_stats *s)
{
	uint64_t n = 0;

	for (unsigned int op = 0; op < BLK_STAT_NR_OPS; op++)
		n += s->requests[op];
	return n;
}

/* Rings on their way out are not counted: they take no more requests. */
static void do_loads(struct worker *w, struct cmd *c)
{
	struct blk_stats st;

	c->nr_loads = 0;
	for (struct ring_slot *s = w->rings; s; s = s->next) {
		uint64_t now;

		if (s->closing || c->nr_loads == c->max)
			continue;
		blk_engine_conn_stats(s->conn, &st);
		now = answered(&st);
		c->loads[c->nr_loads++] = (struct worker_ring_load){
			.cookie = s->cookie,
			.answered = now - s->answered_seen,
		};
		s->answered_seen = now;
	}
	cmd_complete(w, c, 0);
}

static struct cmd *take_queue(struct worker *w)
{
	struct cmd *list, *rev = NULL;

	pthread_mutex_lock(&w->lock);
	list = w->queue;
	w->queue = NULL;
	pthread_mutex_unlock(&w->lock);
	/* Oldest first. */
	while (list) {
		struct cmd *next = list->next;

		list->next = rev;
		rev = list;
		list = next;
	}
	return rev;
}

static void on_fd_ready(void *arg, uint64_t tag)
{
	struct worker *w = arg;
	struct cmd *c, *next;
	uint64_t count;

	if (read(w->cmd_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_err("worker %u: reading its command queue: %m", w->index);
	for (c = take_queue(w); c; c = next) {
		next = c->next;
		switch (c->type) {
		case CMD_CONNECT:
			do_connect(w, c);
			break;
		case CMD_DISCONNECT:
			do_disconnect(w, c);
			break;
		case CMD_RESIZE:
			do_resize(w, c);
			break;
		case CMD_STATS:
			do_stats(w, c);
			break;
		case CMD_LOADS:
			do_loads(w, c);
			break;
		case CMD_STOP:
			w->stopping = true;
			cmd_complete(w, c, 0);
			break;
		}
	}
	if (!w->stopping && blk_engine_watch_fd(w->engine, w->cmd_fd, tag))
		log_err("worker %u: cannot watch its command queue", w->index);
}

static void on_conn_broken(void *arg, void *owner, int err)
{
	struct worker *w = arg;
	uint64_t cookie = (uint64_t)(uintptr_t)owner;

	if (write(w->broken_fd, &cookie, sizeof(cookie)) != sizeof(cookie))
		log_err("worker %u: cannot report a broken ring: %m", w->index);
}

static void on_conn_closed(void *arg, void *owner,
			   const struct blk_stats *final,
			   struct blk_handover *kept)
{
	struct worker *w = arg;
	struct ring_slot **pp = find_slot(w, (uint64_t)(uintptr_t)owner);
	struct ring_slot *slot;

	if (!pp) {
		blk_handover_release(kept);
		return;
	}
	slot = *pp;
	*pp = slot->next;
	if (slot->closing) {
		if (slot->closing->stats)
			*slot->closing->stats = *final;
		slot->closing->kept = kept;
		report_closed(w, slot->closing);
	} else {
		blk_handover_release(kept);
	}
	free(slot);
}

static void on_host_error(void *arg, void *owner, uint8_t op, int err)
{
	struct worker *w = arg;

	host_errors_record(w->cfg.host_errors, (uint64_t)(uintptr_t)owner, op,
			   err);
}

static const struct blk_engine_ops worker_engine_ops = {
	.fd_ready = on_fd_ready,
	.conn_broken = on_conn_broken,
	.conn_closed = on_conn_closed,
	.host_error = on_host_error,
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int ret;

	while (!w->stopping) {
		ret = blk_engine_run(w->engine);
		if (ret < 0) {
			/*
			 * Its rings would hang with nobody to notice. Die
			 * instead: the service manager restarts the daemon,
			 * which resumes every ring where this one stopped.
			 */
			log_err("worker %u: io_uring wait failed: %s; "
				"aborting so that a restart takes over",
				w->index, strerror(-ret));
			abort();
		}
	}
	return NULL;
}

/*
 * The engine is created on the worker thread itself: its io_uring is
 * single-issuer, owned by the thread that submits.
 */
struct start_ctx {
	struct worker *w;
	int result;
	bool done;
};

/*
 * Before the engine opens the event-channel device, which names every
 * interrupt of the handle after this thread's name then.
 */
static void name_and_pin(struct worker *w)
{
	int ret;

	snprintf(w->name, sizeof(w->name), "blkbackd-w%u", w->index);
	pthread_setname_np(pthread_self(), w->name);
	w->cpu = -1;
	if (!w->cfg.pin)
		return;
	ret = affinity_pick_cpu(w->index);
	if (ret >= 0) {
		w->cpu = ret;
		ret = affinity_pin_self(w->cpu);
	}
	if (ret < 0) {
		log_warn("worker %u: cannot pin itself to a CPU: %s; it runs "
			 "unpinned (a unit needs sched_setaffinity allowed, "
			 "see blkbackd(8) on --pin-workers)",
			 w->index, strerror(-ret));
		w->cpu = -1;
		return;
	}
	log_info("worker %u runs on CPU %d", w->index, w->cpu);
}

static void *worker_boot(void *arg)
{
	struct start_ctx *ctx = arg;
	struct worker *w = ctx->w;
	int ret;

	name_and_pin(w);
	ret = blk_engine_create(&w->engine, w->cfg.grants, &worker_engine_ops,
				w);
	if (ret == 0) {
		blk_engine_set_poll(w->engine, w->cfg.poll_us);
		blk_engine_set_timing(w->engine, w->cfg.stage_timing);
		blk_engine_set_precise_clock(w->engine, w->cfg.precise_clock);
		blk_engine_set_memory(w->engine, &w->cfg.mem);
		blk_engine_set_state_dir(w->engine, w->cfg.state_dir);
		ret = blk_engine_watch_fd(w->engine, w->cmd_fd, CMD_TAG);
	}
	pthread_mutex_lock(&w->lock);
	ctx->result = ret;
	ctx->done = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (ret < 0)
		return NULL;
	return worker_main(w);
}

int worker_start(struct worker **out, unsigned int index, int broken_fd,
		 int closed_fd, const struct worker_config *cfg)
{
	struct worker *w = calloc(1, sizeof(*w));
	struct start_ctx ctx = { .w = w };
	int ret;

	if (!w)
		return -ENOMEM;
	w->index = index;
	w->cfg = *cfg;
	w->broken_fd = broken_fd;
	w->closed_fd = closed_fd;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->cmd_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->cmd_fd < 0) {
		ret = -errno;
		free(w);
		return ret;
	}
	ret = -pthread_create(&w->thread, NULL, worker_boot, &ctx);
	if (ret == 0) {
		pthread_mutex_lock(&w->lock);
		while (!ctx.done)
			pthread_cond_wait(&w->cond, &w->lock);
		pthread_mutex_unlock(&w->lock);
		ret = ctx.result;
		if (ret < 0)
			pthread_join(w->thread, NULL);
	}
	if (ret < 0) {
		blk_engine_destroy(w->engine);
		close(w->cmd_fd);
		free(w);
		return ret;
	}
	*out = w;
	return 0;
}

void worker_stop(struct worker *w)
{
	struct cmd c = { .type = CMD_STOP };

	cmd_run(w, &c);
	pthread_join(w->thread, NULL);
	blk_engine_destroy(w->engine);
	close(w->cmd_fd);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/*
 * Each ring's disconnect is allocated with it, so that closing it cannot
 * fail for want of memory.
 */
int worker_connect(struct worker *w, const struct blk_conn_params *p)
{
	struct cmd c = { .type = CMD_CONNECT, .params = p };
	struct cmd *bye = calloc(1, sizeof(*bye));
	int ret;

	if (!bye) {
		blk_handover_release(p->handover);
		return -ENOMEM;
	}
	ret = cmd_run(w, &c);
	if (ret < 0) {
		free(bye);
		return ret;
	}
	bye->type = CMD_DISCONNECT;
	bye->cookie = (uint64_t)(uintptr_t)p->owner;
	bye->next = w->goodbyes;
	w->goodbyes = bye;
	w->nr_rings++;
	return 0;
}

int worker_disconnect(struct worker *w, uint64_t cookie,
		      enum blk_disconnect_mode mode)
{
	struct cmd **pp = &w->goodbyes, *bye;

	while (*pp && (*pp)->cookie != cookie)
		pp = &(*pp)->next;
	if (!*pp)
		return -ENOENT;
	bye = *pp;
	*pp = bye->next;
	bye->mode = mode;
	/* For the ring's last counters; they go unlogged without memory. */
	bye->stats = calloc(1, sizeof(*bye->stats));
	/* Queued even if the wake-up failed: the next command's finds it. */
	if (cmd_queue(w, bye) < 0)
		log_err("worker %u: cannot wake it for a disconnect: %m",
			w->index);
	return 0;
}

void worker_take_closed(struct worker *w, worker_closed_fn fn, void *arg)
{
	struct cmd *list, *next;

	pthread_mutex_lock(&w->lock);
	list = w->closed;
	w->closed = NULL;
	pthread_mutex_unlock(&w->lock);
	for (; list; list = next) {
		next = list->next;
		w->nr_rings--;
		fn(arg, list->cookie, list->stats, list->kept);
		free(list->stats);
		free(list);
	}
}

void worker_resize(struct worker *w, uint64_t cookie, uint64_t sectors)
{
	struct cmd c = { .type = CMD_RESIZE,
			 .cookie = cookie,
			 .sectors = sectors };

	cmd_run(w, &c);
}

/* A ring closed and not yet taken: its last counters, under w->lock. */
static int closed_stats(struct worker *w, uint64_t cookie,
			struct blk_stats *out)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&w->lock);
	for (struct cmd *c = w->closed; c; c = c->next) {
		if (c->cookie == cookie && c->stats) {
			*out = *c->stats;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return ret;
}

int worker_stats(struct worker *w, uint64_t cookie, struct blk_stats *out)
{
	struct cmd c = { .type = CMD_STATS, .cookie = cookie, .stats = out };
	int ret = cmd_run(w, &c);

	return ret == -ENOENT ? closed_stats(w, cookie, out) : ret;
}

int worker_loads(struct worker *w, struct worker_ring_load *out,
		 unsigned int max)
{
	struct cmd c = { .type = CMD_LOADS, .loads = out, .max = max };
	int ret = cmd_run(w, &c);

	return ret < 0 ? ret : (int)c.nr_loads;
}

unsigned int worker_nr_rings(const struct worker *w)
{
	return w->nr_rings;
}

unsigned int worker_index(const struct worker *w)
{
	return w->index;
}

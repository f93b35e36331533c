// SPDX-License-Identifier: MIT
/*
 * Remote images opened on threads of their own (see opener.h): a detached
 * thread per attempt, which waits out its delay, opens, and puts the job
 * on the done list for the main loop.
 */
#include "blkbackd/opener.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct opener_job {
	struct opener *o;
	struct opener_job *next; /* on o->done */
	uint64_t cookie;
	char *path;
	char *owner; /* NULL: none */
	bool readonly;
	enum blk_cache_mode cache;
	unsigned int delay_ms;
	atomic_bool cancelled; /* set by the main thread, read by the job's */
	int ret; /* the job thread's, read after it handed the job back */
	struct blk_image img; /* likewise */
};

struct opener {
	pthread_mutex_t lock; /* guards done and running */
	struct opener_job *done;
	unsigned int running; /* jobs whose thread has not handed them back */
	int efd;
};

int opener_new(struct opener **out)
{
	struct opener *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (o->efd < 0) {
		int err = -errno;

		free(o);
		return err;
	}
	pthread_mutex_init(&o->lock, NULL);
	*out = o;
	return 0;
}

static void job_free(struct opener_job *j)
{
	free(j->path);
	free(j->owner);
	free(j);
}

void opener_free(struct opener *o)
{
	if (!o)
		return;
	/* A thread that handed its job back may still be unlocking. */
	pthread_mutex_lock(&o->lock);
	pthread_mutex_unlock(&o->lock);
	opener_take_done(o, NULL, NULL);
	pthread_mutex_destroy(&o->lock);
	close(o->efd);
	free(o);
}

int opener_fd(const struct opener *o)
{
	return o->efd;
}

bool opener_busy(const struct opener *o)
{
	struct opener *mo = (struct opener *)o;
	bool busy;

	pthread_mutex_lock(&mo->lock);
	busy = mo->running > 0;
	pthread_mutex_unlock(&mo->lock);
	return busy;
}

/* The delay, in steps short enough that a cancel is seen within 100 ms. */
static void wait_delay(struct opener_job *j)
{
	const struct timespec step = { .tv_nsec = 100 * 1000000L };

	for (unsigned int ms = 0;
	     ms < j->delay_ms && !atomic_load(&j->cancelled); ms += 100)
		nanosleep(&step, NULL);
}

static void *run_job(void *arg)
{
	struct opener_job *j = arg;
	struct opener *o = j->o;
	const uint64_t one = 1;

	wait_delay(j);
	if (atomic_load(&j->cancelled)) {
		memset(&j->img, 0, sizeof(j->img));
		j->img.fd = -1;
		j->ret = -ECANCELED;
	} else {
		j->ret = blk_image_open(&j->img, j->path, j->readonly, j->cache,
					j->owner);
	}
	/* Everything under the lock: the job and @o are the main thread's
	 * once it is released. */
	pthread_mutex_lock(&o->lock);
	j->next = o->done;
	o->done = j;
	o->running--;
	if (write(o->efd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow with one write per job. */
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

static int start_thread(struct opener_job *j)
{
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	ret = pthread_attr_init(&attr);
	if (ret)
		return -ret;
	/* Never joined: a thread stuck in a connect must not hold the exit. */
	ret = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!ret)
		ret = pthread_create(&t, &attr, run_job, j);
	pthread_attr_destroy(&attr);
	if (!ret)
		pthread_setname_np(t, "blkbackd-open");
	return -ret;
}

struct opener_job *opener_open(struct opener *o, uint64_t cookie,
			       const struct opener_request *req, int *err)
{
	struct opener_job *j = calloc(1, sizeof(*j));

	*err = -ENOMEM;
	if (!j)
		return NULL;
	j->o = o;
	j->cookie = cookie;
	j->path = strdup(req->path);
	j->owner = req->owner ? strdup(req->owner) : NULL;
	j->readonly = req->readonly;
	j->cache = req->cache;
	j->delay_ms = req->delay_ms;
	atomic_init(&j->cancelled, false);
	if (!j->path || (req->owner && !j->owner)) {
		job_free(j);
		return NULL;
	}
	pthread_mutex_lock(&o->lock);
	o->running++;
	pthread_mutex_unlock(&o->lock);
	*err = start_thread(j);
	if (*err < 0) {
		pthread_mutex_lock(&o->lock);
		o->running--;
		pthread_mutex_unlock(&o->lock);
		job_free(j);
		return NULL;
	}
	return j;
}

void opener_cancel(struct opener_job *j)
{
	atomic_store(&j->cancelled, true);
}

void opener_take_done(struct opener *o, opener_done_fn *fn, void *arg)
{
	struct opener_job *j;
	uint64_t count;

	if (read(o->efd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing new since the last call. */
	}
	pthread_mutex_lock(&o->lock);
	j = o->done;
	o->done = NULL;
	pthread_mutex_unlock(&o->lock);
	while (j) {
		struct opener_job *next = j->next;

		if (atomic_load(&j->cancelled) || !fn ||
		    !fn(arg, j->cookie, j->ret, &j->img))
			blk_image_close(&j->img);
		job_free(j);
		j = next;
	}
}

// SPDX-License-Identifier: MIT
/*
 * Reading blkbackd.conf's bytes: only a regular file of at most
 * CONFIG_MAX_BYTES, on a thread of its own that the caller waits for no
 * longer than CONFIG_READ_DEADLINE_MS, so that neither a FIFO or a device
 * at the path nor a filesystem that stops answering holds the main loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "blkbackd/config-file.h"
#include "blkbackd/config-read.h"
#include "blkbackd/log.h"

/* What a path that is no regular file is, for the error. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/* -errno after saying why @path cannot be the configuration. */
static int refuse(const char *path, int err, const char *what)
{
	log_err("cannot read the configuration file %s: %s; give --config a "
		"regular file of at most %u KiB (blkbackd.conf(5))",
		path, what, CONFIG_MAX_BYTES / 1024);
	return -err;
}

/* Why a regular file is refused: -errno, or 0 when it is fine. */
static int check_file(const char *path, const struct stat *st)
{
	char what[64];

	if (!S_ISREG(st->st_mode)) {
		snprintf(what, sizeof(what), "it is %s",
			 file_kind(st->st_mode));
		return refuse(path, S_ISDIR(st->st_mode) ? EISDIR : EINVAL,
			      what);
	}
	if (st->st_size > CONFIG_MAX_BYTES) {
		snprintf(what, sizeof(what), "it has %lld bytes",
			 (long long)st->st_size);
		return refuse(path, EFBIG, what);
	}
	return 0;
}

/*
 * The whole file in *@text (NUL-terminated, the caller frees it). A FIFO
 * or a device never reaches read(): stat() refuses it before open(), and
 * O_NONBLOCK keeps open() from waiting for a FIFO's writer should one be
 * put in its place between the two; fstat() then checks what was opened.
 * Symbolic links are followed (/etc/alternatives, configuration
 * management): only root can place one where the daemon reads.
 */
static int read_config(const char *path, bool must_exist, char **text,
		       size_t *len)
{
	struct stat st;
	size_t n = 0;
	ssize_t got = 1;
	int fd, ret;

	if (stat(path, &st) < 0) {
		ret = errno;
		if (ret == ENOENT && !must_exist)
			return CONFIG_ABSENT;
		log_err("cannot read the configuration file %s: %s%s", path,
			strerror(ret),
			ret == ENOENT ? " (check the path given to --config)"
				      : "");
		return -ret;
	}
	/* --config /dev/null: no file, every setting at its default. */
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
		*len = 0;
		return 0;
	}
	ret = check_file(path, &st);
	if (ret < 0)
		return ret;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return refuse(path, errno, strerror(errno));
	ret = fstat(fd, &st) < 0 ? -errno : check_file(path, &st);
	*text = ret ? NULL : malloc(CONFIG_MAX_BYTES + 1);
	if (!ret && !*text)
		ret = -ENOMEM;
	/* One byte more than allowed: a file that grew is seen to. */
	while (!ret && got > 0 && n <= CONFIG_MAX_BYTES) {
		got = read(fd, *text + n, CONFIG_MAX_BYTES + 1 - n);
		n += got > 0 ? (size_t)got : 0;
	}
	if (!ret && got < 0)
		ret = refuse(path, errno, strerror(errno));
	else if (!ret && n > CONFIG_MAX_BYTES)
		ret = refuse(path, EFBIG, "it grew past the limit");
	close(fd);
	if (ret) {
		free(*text);
		*text = NULL;
		return ret;
	}
	(*text)[n] = '\0';
	*len = n;
	return 0;
}

/*
 * One read on its thread. The reader and the caller share it; whichever
 * of them is last to let go frees it: the caller after taking the result,
 * or the reader when the caller gave up waiting (abandoned).
 */
struct config_job {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done, abandoned;
	char *path;
	bool must_exist;
	int ret;
	char *text;
	size_t len;
};

/* Whether a reader the caller gave up on has not returned yet. */
static atomic_bool reader_stuck;

static void job_free(struct config_job *job)
{
	pthread_cond_destroy(&job->done_cond);
	pthread_mutex_destroy(&job->lock);
	free(job->text);
	free(job->path);
	free(job);
}

static void *reader(void *arg)
{
	struct config_job *job = arg;
	bool abandoned;

	job->ret =
		read_config(job->path, job->must_exist, &job->text, &job->len);
	pthread_mutex_lock(&job->lock);
	job->done = true;
	abandoned = job->abandoned;
	pthread_cond_signal(&job->done_cond);
	pthread_mutex_unlock(&job->lock);
	if (abandoned) {
		job_free(job);
		atomic_store(&reader_stuck, false);
	}
	return NULL;
}

static struct config_job *job_new(const char *path, bool must_exist)
{
	struct config_job *job = calloc(1, sizeof(*job));
	pthread_condattr_t attr;

	if (!job)
		return NULL;
	job->path = strdup(path);
	job->must_exist = must_exist;
	pthread_mutex_init(&job->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&job->done_cond, &attr);
	pthread_condattr_destroy(&attr);
	if (!job->path) {
		job_free(job);
		return NULL;
	}
	return job;
}

/*
 * Wait for @job until the deadline: true when it is done; else it is
 * abandoned to its reader, and reader_stuck set.
 */
static bool job_wait(struct config_job *job)
{
	struct timespec until;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += CONFIG_READ_DEADLINE_MS / 1000;
	until.tv_nsec += (CONFIG_READ_DEADLINE_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&job->lock);
	while (!job->done && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&job->done_cond, &job->lock,
					     &until);
	job->abandoned = !job->done;
	/* Under the lock: the reader clears it only after seeing abandoned. */
	if (job->abandoned)
		atomic_store(&reader_stuck, true);
	pthread_mutex_unlock(&job->lock);
	return !job->abandoned;
}

int config_read(const char *path, bool must_exist, char **text, size_t *len)
{
	struct config_job *job;
	pthread_attr_t attr;
	sigset_t all, old;
	int ret;

	if (atomic_load(&reader_stuck)) {
		log_err("cannot read the configuration file %s: an earlier "
			"read of it has not returned yet (its filesystem does "
			"not answer); keep it on a local filesystem",
			path);
		return -EBUSY;
	}
	job = job_new(path, must_exist);
	if (!job)
		return -ENOMEM;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Signals are the main thread's (its signalfd), never the reader's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&(pthread_t){ 0 }, &attr, reader, job);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		job_free(job);
		return ret;
	}
	if (!job_wait(job)) {
		/* The reader frees the job when it returns, if ever. */
		log_err("cannot read the configuration file %s within %u ms "
			"(its filesystem does not answer); keep it on a local "
			"filesystem",
			path, CONFIG_READ_DEADLINE_MS);
		return -ETIMEDOUT;
	}
	ret = job->ret;
	*text = job->text;
	*len = job->len;
	job->text = NULL;
	job_free(job);
	return ret;
}

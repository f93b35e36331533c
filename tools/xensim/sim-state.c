// SPDX-License-Identifier: MIT
/*
 * xensim: one simulated domain's state files — creating them atomically,
 * mapping them, marking a domain dying and removing its files once nothing
 * maps its memory any more.
 */
#include "libblk/parse.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/xensim/sim-internal.h"

int sim_path(char *buf, size_t len, const char *dir, uint32_t domid,
	     const char *leaf)
{
	int n;

	if (leaf)
		n = snprintf(buf, len, "%s/dom%u/%s", dir, domid, leaf);
	else
		n = snprintf(buf, len, "%s/dom%u", dir, domid);
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/* A name for this simulated host that is unique on this machine. */
int sim_host_key(const char *dir, char *buf, size_t len)
{
	struct stat st;
	int n;

	if (stat(dir, &st) < 0)
		return -errno;
	n = snprintf(buf, len, "xensim-%llx-%llx",
		     (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino);
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

uint32_t sim_env_domid(void)
{
	const char *s = getenv("XENSIM_DOMID");
	uint64_t v;

	return s && blk_parse_u64(s, 0x7fef, &v) == 0 ? (uint32_t)v : 0;
}

static int write_zeroed_file(int dirfd, const char *name, off_t size)
{
	int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			0600);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Every process of the simulated host maps every domain's files, and most
 * of each file is never touched. A read fault on a file mapping reads the
 * file ahead around it, which fills the page cache with the untouched rest
 * (zeroes: the files are sparse), and the kernel then maps whatever is
 * cached around a later fault into the faulting process ("fault-around").
 * With a thousand domains that put about 200 MiB of tables nobody uses into
 * the daemon's RSS, a cost Xen's own grant and event tables do not have.
 * Random access turns the read-ahead off, so only touched pages exist.
 */
static void no_read_around(void *addr, size_t len)
{
	/* Advice only: without it the mapping works, only bigger. */
	(void)madvise(addr, len, MADV_RANDOM);
}

static int init_state_file(int dirfd, uint32_t domid, uint32_t nr_pages)
{
	struct sim_shared *sh;
	int fd, ret;

	ret = write_zeroed_file(dirfd, "state", sizeof(*sh));
	if (ret)
		return ret;
	fd = openat(dirfd, "state", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED)
		return -errno;
	no_read_around(sh, sizeof(*sh));
	sh->hdr.domid = domid;
	sh->hdr.nr_pages = nr_pages;
	/* The magic goes last: a reader never sees a half-made header. */
	atomic_thread_fence(memory_order_release);
	sh->hdr.magic = SIM_MAGIC;
	munmap(sh, sizeof(*sh));
	return 0;
}

/* @a followed by @b in @buf; -ENAMETOOLONG if it does not fit. */
static int path_cat(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s%s", a, b);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

static void remove_dom_dir(const char *path)
{
	char leaf[4096];

	if (!path_cat(leaf, sizeof(leaf), path, "/state"))
		unlink(leaf);
	if (!path_cat(leaf, sizeof(leaf), path, "/memory"))
		unlink(leaf);
	rmdir(path);
}

/*
 * Build the domain in a private directory and rename it into place, so
 * that a concurrent open sees either no domain or a complete one.
 */
int sim_dom_create(const char *dir, uint32_t domid, uint32_t nr_pages)
{
	char tmp[4096], final[4096], gone[4096], suffix[32];
	int dirfd, ret;

	if (nr_pages > (1u << 22))
		return -EINVAL;
	snprintf(suffix, sizeof(suffix), ".new.%ld", (long)getpid());
	ret = sim_path(final, sizeof(final), dir, domid, NULL);
	if (!ret)
		ret = path_cat(tmp, sizeof(tmp), final, suffix);
	if (!ret)
		ret = path_cat(gone, sizeof(gone), final, ".gone");
	if (ret)
		return ret;
	if (access(final, F_OK) == 0)
		return -EEXIST;
	if (mkdir(tmp, 0700) < 0)
		return -errno;
	dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = write_zeroed_file(dirfd, "memory",
				(off_t)nr_pages * XENSIM_PAGE_SIZE);
	if (!ret)
		ret = init_state_file(dirfd, domid, nr_pages);
	close(dirfd);
	if (ret)
		goto fail;
	if (rename(tmp, final) < 0) {
		ret = (errno == ENOTEMPTY || errno == EEXIST) ? -EEXIST
							      : -errno;
		goto fail;
	}
	unlink(gone);
	return 0;
fail:
	remove_dom_dir(tmp);
	return ret;
}

static int map_state(int fd, struct sim_dom *d)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size != sizeof(struct sim_shared))
		return -EINVAL;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->sh = mmap(NULL, sizeof(*d->sh), PROT_READ | PROT_WRITE, MAP_SHARED,
		     fd, 0);
	if (d->sh == MAP_FAILED) {
		d->sh = NULL;
		return -errno;
	}
	no_read_around(d->sh, sizeof(*d->sh));
	if (d->sh->hdr.magic != SIM_MAGIC)
		return -EINVAL;
	return 0;
}

static int map_memory(const char *path, struct sim_dom *d)
{
	d->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (d->memfd < 0)
		return -errno;
	d->mem_len = (size_t)d->sh->hdr.nr_pages * XENSIM_PAGE_SIZE;
	if (!d->mem_len)
		return 0;
	d->mem = mmap(NULL, d->mem_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      d->memfd, 0);
	if (d->mem == MAP_FAILED) {
		d->mem = NULL;
		return -errno;
	}
	no_read_around(d->mem, d->mem_len);
	return 0;
}

int sim_dom_open(const char *dir, uint32_t domid, struct sim_dom **out)
{
	char path[4096];
	struct sim_dom *d;
	int fd, ret;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->domid = domid;
	d->memfd = -1;
	ret = sim_path(path, sizeof(path), dir, domid, "state");
	if (ret)
		goto fail;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = map_state(fd, d);
	close(fd);
	if (ret)
		goto fail;
	sim_path(path, sizeof(path), dir, domid, "memory");
	ret = map_memory(path, d);
	if (ret)
		goto fail;
	*out = d;
	return 0;
fail:
	sim_dom_close(d);
	return ret;
}

void sim_dom_close(struct sim_dom *d)
{
	if (!d)
		return;
	if (d->mem)
		munmap(d->mem, d->mem_len);
	if (d->sh)
		munmap(d->sh, sizeof(*d->sh));
	if (d->memfd >= 0)
		close(d->memfd);
	free(d);
}

/* True when @d's files are no longer the ones under its domid. */
bool sim_dom_replaced(const char *dir, const struct sim_dom *d)
{
	char path[4096];
	struct stat st;

	if (sim_path(path, sizeof(path), dir, d->domid, "state"))
		return true;
	if (stat(path, &st) < 0)
		return true;
	return st.st_dev != d->dev || st.st_ino != d->ino;
}

/*
 * A dying domain's files go when the last mapping of its memory does; the
 * tombstone lets xensim_domain_stats still answer for it afterwards.
 */
void sim_dom_remove_if_released(const char *dir, struct sim_dom *d)
{
	struct sim_header *h = &d->sh->hdr;
	char path[4096], gone[4096];
	uint32_t expected = 0;
	int fd;

	if (!atomic_load(&h->dying) || atomic_load(&h->live_maps))
		return;
	if (!atomic_compare_exchange_strong(&h->removed, &expected, 1))
		return;
	if (sim_dom_replaced(dir, d))
		return;
	if (sim_path(path, sizeof(path), dir, d->domid, NULL) ||
	    path_cat(gone, sizeof(gone), path, ".gone"))
		return;
	fd = open(gone, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	remove_dom_dir(path);
}

bool sim_dom_exists(const char *dir, uint32_t domid, bool *dying)
{
	struct sim_dom *d;

	if (sim_dom_open(dir, domid, &d))
		return false;
	*dying = atomic_load(&d->sh->hdr.dying) != 0;
	sim_dom_close(d);
	return true;
}

int sim_cache_init(struct sim_cache *c, const char *dir)
{
	c->doms = NULL;
	c->dir = strdup(dir);
	if (!c->dir)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	return 0;
}

void sim_cache_fini(struct sim_cache *c)
{
	struct sim_dom *d, *next;

	for (d = c->doms; d; d = next) {
		next = d->next;
		sim_dom_close(d);
	}
	c->doms = NULL;
	pthread_mutex_destroy(&c->lock);
	free(c->dir);
	c->dir = NULL;
}

static struct sim_dom *cache_find(struct sim_cache *c, uint32_t domid)
{
	struct sim_dom *d;

	for (d = c->doms; d; d = d->next)
		if (d->domid == domid)
			return d;
	return NULL;
}

/*
 * The newest entry for @domid. A dying entry is re-checked against the
 * files so that a domid reused after destruction reaches the new domain.
 */
int sim_cache_get(struct sim_cache *c, uint32_t domid, struct sim_dom **out)
{
	struct sim_dom *d;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	d = cache_find(c, domid);
	if (!d ||
	    (atomic_load(&d->sh->hdr.dying) && sim_dom_replaced(c->dir, d))) {
		struct sim_dom *fresh;

		ret = sim_dom_open(c->dir, domid, &fresh);
		if (!ret) {
			fresh->next = c->doms;
			c->doms = fresh;
			d = fresh;
		} else if (d && ret == -ENOENT) {
			/* Gone for good: keep answering "dying". */
			ret = 0;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (!ret)
		*out = d;
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * xensim: map ledgers. On Xen, the kernel's gntdev unmaps every grant a
 * process still holds when its /dev/xen/gntdev file is released at exit,
 * so a backend killed with SIGKILL leaks nothing. The fake libxengnttab
 * has no kernel behind it, so every handle records the map pins it holds
 * in a ledger file that outlives the process:
 *
 *   $XENSIM_DIR/maps/<pid>.<start time>.<unique>
 *
 * The name says who owns it (pid and the process start time, field 22 of
 * /proc/<pid>/stat, which tells a reused pid apart); the file is a header
 * and a fixed array of slots, one per mapped page, mmap()ed MAP_SHARED and
 * sparse. Only the owner writes slots, with atomics; anyone may reap the
 * ledger of an owner that no longer runs, under the host lock: it drops
 * each recorded pin and removes the file.
 *
 * A pin is taken before its slot is written and the slot is cleared
 * before the pin is dropped, so an owner killed between the two steps can
 * leak one pin but never have one dropped twice.
 */
#include "libblk/parse.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/xensim/sim-internal.h"

#define LEDGER_MAGIC 0x314c5358u /* "XSL1" */
#define SLOT_USED (1ull << 63)

struct sim_ledger_slot {
	/* SLOT_USED | domid << 32 | ref, or 0 for a free slot. */
	_Atomic uint64_t key;
	/* The inode of the domain's state file: which domain it was. */
	_Atomic uint64_t ino;
};

struct sim_ledger_file {
	uint32_t magic;
	uint32_t pid;
	uint64_t start;
	_Atomic uint32_t high; /* no slot at or above was ever used */
	uint32_t pad[11];
	struct sim_ledger_slot slots[SIM_LEDGER_SLOTS];
};

static int maps_dir(char *buf, size_t len, const char *dir)
{
	int n = snprintf(buf, len, "%s/maps", dir);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/*
 * The state and start time of @pid from /proc/<pid>/stat. The command
 * name (field 2) may hold spaces and parentheses, so fields are counted
 * from the last ')'.
 */
static int proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EIO;
	*state = p[2];
	/* p + 2 is field 3; step to field 22. */
	for (p += 2, field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -EIO;
		p++;
	}
	if (sscanf(p, "%llu", &v) != 1)
		return -EIO;
	*start = v;
	return 0;
}

/*
 * Whether the process that made a ledger still runs. A zombie has already
 * released its files, so its maps go too, as with the kernel's gntdev.
 */
static bool owner_alive(pid_t pid, uint64_t start)
{
	uint64_t now;
	char state;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	if (proc_stat(pid, &state, &now))
		return false;
	return now == start && state != 'Z' && state != 'X';
}

/* "<pid>.<start>.<unique>": the owner of a ledger, from its name. */
static bool parse_ledger_name(const char *name, pid_t *pid, uint64_t *start)
{
	const char *end;
	uint64_t p, s;

	if (blk_parse_u64_prefix(name, 0x7fffffff, &p, &end) < 0 ||
	    *end != '.' || p == 0)
		return false;
	if (blk_parse_u64_prefix(end + 1, UINT64_MAX, &s, &end) < 0 ||
	    *end != '.' || !end[1])
		return false;
	*pid = (pid_t)p;
	*start = s;
	return true;
}

/* The ledger in @fd, mapped; NULL (and errno) on failure. */
static struct sim_ledger_file *map_ledger(int fd)
{
	void *p = mmap(NULL, sizeof(struct sim_ledger_file),
		       PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

int sim_ledger_open(struct sim_ledger *l, const char *dir)
{
	char path[4096];
	uint64_t start = 0;
	char state;
	int fd, n, ret;

	memset(l, 0, sizeof(*l));
	ret = proc_stat(getpid(), &state, &start);
	if (!ret)
		ret = maps_dir(path, sizeof(path), dir);
	if (ret)
		return ret;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	n = snprintf(l->path, sizeof(l->path), "%s/%ld.%llu.XXXXXX", path,
		     (long)getpid(), (unsigned long long)start);
	if (n < 0 || (size_t)n >= sizeof(l->path))
		return -ENAMETOOLONG;
	fd = mkostemp(l->path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = ftruncate(fd, sizeof(*l->file)) < 0 ? -errno : 0;
	if (!ret) {
		l->file = map_ledger(fd);
		if (!l->file)
			ret = -errno;
	}
	close(fd);
	if (ret) {
		unlink(l->path);
		return ret;
	}
	l->file->pid = (uint32_t)getpid();
	l->file->start = start;
	l->file->magic = LEDGER_MAGIC;
	pthread_mutex_init(&l->lock, NULL);
	return 0;
}

void sim_ledger_close(struct sim_ledger *l)
{
	if (!l->file)
		return;
	unlink(l->path);
	munmap(l->file, sizeof(*l->file));
	l->file = NULL;
	free(l->free_slots);
	l->free_slots = NULL;
	pthread_mutex_destroy(&l->lock);
}

/*
 * A free slot: a released one, or the next never used. The stack of
 * released slots always has room for every slot below the high mark, so
 * releasing one cannot fail.
 */
static int take_slot(struct sim_ledger *l)
{
	uint32_t high, *grown;

	if (l->nr_free)
		return (int)l->free_slots[--l->nr_free];
	high = atomic_load(&l->file->high);
	if (high >= SIM_LEDGER_SLOTS)
		return -ENOSPC;
	if (high >= l->free_cap) {
		uint32_t cap = l->free_cap ? l->free_cap * 2 : 256;

		grown = realloc(l->free_slots, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		l->free_slots = grown;
		l->free_cap = cap;
	}
	atomic_store(&l->file->high, high + 1);
	return (int)high;
}

int sim_ledger_add(struct sim_ledger *l, const struct sim_dom *d, uint32_t ref)
{
	struct sim_ledger_slot *s;
	int slot;

	pthread_mutex_lock(&l->lock);
	slot = take_slot(l);
	pthread_mutex_unlock(&l->lock);
	if (slot < 0)
		return slot;
	s = &l->file->slots[slot];
	atomic_store(&s->ino, (uint64_t)d->ino);
	atomic_store(&s->key, SLOT_USED | (uint64_t)d->domid << 32 | ref);
	return slot;
}

void sim_ledger_remove(struct sim_ledger *l, uint32_t slot)
{
	atomic_store(&l->file->slots[slot].key, 0);
	pthread_mutex_lock(&l->lock);
	l->free_slots[l->nr_free++] = slot;
	pthread_mutex_unlock(&l->lock);
}

/* Drop the pin @s records, if its domain is still the one it names. */
static int release_slot(struct sim_cache *c, struct sim_ledger_slot *s)
{
	uint64_t key = atomic_exchange(&s->key, 0);
	uint32_t domid = (uint32_t)(key >> 32) & 0xffff;
	uint32_t ref = (uint32_t)key;
	struct sim_dom *d;

	if (!(key & SLOT_USED) || ref >= SIM_NR_GRANTS)
		return 0;
	if (sim_cache_get(c, domid, &d) ||
	    (uint64_t)d->ino != atomic_load(&s->ino))
		return 0;
	if (!SIM_GNT_MAPS(atomic_load(&d->sh->grants[ref].word)))
		return 0;
	sim_grant_unpin(d, ref, true);
	return 1;
}

static int release_ledger(struct sim_cache *c, struct sim_ledger_file *f)
{
	uint32_t i, high = atomic_load(&f->high);
	int n = 0;

	if (f->magic != LEDGER_MAGIC)
		return 0;
	for (i = 0; i < high && i < SIM_LEDGER_SLOTS; i++)
		n += release_slot(c, &f->slots[i]);
	return n;
}

/* With the host lock held: release every pin of one dead owner's ledger. */
static int reap_ledger(struct sim_cache *c, int dirfd, const char *name)
{
	struct sim_ledger_file *f = NULL;
	struct stat st;
	int fd, n = 0;

	fd = openat(dirfd, name, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0; /* another reaper was first */
	/* A short file is one its owner died making: nothing to release. */
	if (fstat(fd, &st) == 0 && (size_t)st.st_size == sizeof(*f))
		f = map_ledger(fd);
	if (f) {
		n = release_ledger(c, f);
		munmap(f, sizeof(*f));
	}
	close(fd);
	unlinkat(dirfd, name, 0);
	return n;
}

/*
 * Visit the ledgers of owners that are gone; with @c NULL, only say
 * whether there is one. Returns the pins released (or 1 for "there is
 * one") or -errno.
 */
static int scan_dead(const char *maps, struct sim_cache *c)
{
	struct dirent *de;
	uint64_t start;
	int n = 0;
	pid_t pid;
	DIR *dh;

	dh = opendir(maps);
	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dh))) {
		if (!parse_ledger_name(de->d_name, &pid, &start) ||
		    owner_alive(pid, start))
			continue;
		if (!c) {
			n = 1;
			break;
		}
		n += reap_ledger(c, dirfd(dh), de->d_name);
	}
	closedir(dh);
	return n;
}

int sim_reap_orphaned_maps(const char *dir)
{
	struct sim_cache cache;
	struct sim_dom *d;
	char maps[4096];
	int lock, ret;

	ret = maps_dir(maps, sizeof(maps), dir);
	if (ret)
		return ret;
	/* The common case, nobody died: no lock, no files opened. */
	ret = scan_dead(maps, NULL);
	if (ret <= 0)
		return ret;
	ret = sim_cache_init(&cache, dir);
	if (ret)
		return ret;
	lock = sim_host_lock(dir);
	if (lock < 0) {
		sim_cache_fini(&cache);
		return lock;
	}
	ret = scan_dead(maps, &cache);
	/* A dying domain left with no mapping goes now. */
	for (d = cache.doms; d; d = d->next)
		sim_dom_remove_if_released(dir, d);
	sim_host_unlock(lock);
	sim_cache_fini(&cache);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * The answer journal's file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libblk/journal.h"

#define JOURNAL_MAGIC 0x626b6a31u /* "bkj1" */

struct blk_journal_page {
	uint32_t magic;
	uint32_t cap;
	_Atomic uint32_t count; /* records of an unfinished push, 0: none */
	RING_IDX first;
	struct blk_journal_rec recs[];
};

static size_t journal_len(unsigned int cap)
{
	return sizeof(struct blk_journal_page) +
	       (size_t)cap * sizeof(struct blk_journal_rec);
}

int blk_journal_open(struct blk_journal *j, const char *dir, uint32_t domid,
		     uint32_t ring_ref, uint32_t port, unsigned int nr_slots)
{
	struct blk_journal_page *page;
	size_t len = journal_len(nr_slots);
	int fd, ret;

	*j = (struct blk_journal){ 0 };
	if (!dir)
		return 0;
	snprintf(j->path, sizeof(j->path), "%s/ring-%u-%u-%u.journal", dir,
		 domid, ring_ref, port);
	fd = open(j->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = page == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	/* A file from another ring size or a torn creation holds nothing. */
	if (page->magic != JOURNAL_MAGIC || page->cap != nr_slots) {
		memset(page, 0, len);
		page->cap = nr_slots;
		page->magic = JOURNAL_MAGIC;
	}
	j->page = page;
	j->len = len;
	j->cap = nr_slots;
	return 0;
}

void blk_journal_close(struct blk_journal *j, int remove)
{
	if (!j->page)
		return;
	munmap(j->page, j->len);
	if (remove)
		unlink(j->path);
	j->page = NULL;
}

unsigned int blk_journal_unfinished(const struct blk_journal *j,
				    RING_IDX *first,
				    const struct blk_journal_rec **recs)
{
	unsigned int n;

	if (!j->page)
		return 0;
	n = atomic_load_explicit(&j->page->count, memory_order_acquire);
	if (n > j->cap)
		return 0;
	*first = j->page->first;
	*recs = j->page->recs;
	return n;
}

void blk_journal_set(struct blk_journal *j, unsigned int i,
		     const struct blk_journal_rec *rec)
{
	if (j->page && i < j->cap)
		j->page->recs[i] = *rec;
}

void blk_journal_commit(struct blk_journal *j, RING_IDX first, unsigned int n)
{
	if (!j->page)
		return;
	j->page->first = first;
	/* The records are complete before the count makes them count. */
	atomic_store_explicit(&j->page->count, n, memory_order_release);
}

void blk_journal_done(struct blk_journal *j)
{
	if (j->page)
		atomic_store_explicit(&j->page->count, 0, memory_order_release);
}

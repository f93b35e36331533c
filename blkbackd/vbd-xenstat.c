// SPDX-License-Identifier: MIT
/*
 * A backend/vbd3 disk's counters where xentop looks for them.
 *
 * libxenstat 4.19 and later (Debian 13's 4.20; tools/libs/stat/
 * xenstat_linux.c, xenstat_collect_vbds()) finds each backend device in
 * /sys/bus/xen-backend/devices, where Linux's xenbus lists every backend
 * directory it saw appear, driver or not. For one named vbd3-DOMID-DEVID
 * it reads /local/domain/0/backend/vbd3/DOMID/DEVID/kthread-pid from
 * xenstore and then the first 96 bytes of
 * /dev/shm/td3-<kthread-pid>/vbd-DOMID-DEVID, tapdisk3's statistics:
 * struct vbd3_stats of xenstat_priv.h, native-endian, which it takes only
 * if its version is 1 (offsets in bytes):
 *
 *    0 uint32 version (1)        8 uint64 oo_reqs
 *    4 uint32 padding           16 uint64 read_reqs_submitted
 *   24 uint64 read_reqs_completed  32 uint64 read_sectors
 *   40 uint64 read_total_ticks     48 uint64 write_reqs_submitted
 *   56 uint64 write_reqs_completed 64 uint64 write_sectors
 *   72 uint64 write_total_ticks    80 uint64 io_errors
 *   88 uint64 flags
 *
 * Of these it shows oo_reqs, read_reqs_submitted, read_sectors,
 * write_reqs_submitted and write_sectors (xentop's VBD_OO, VBD_RD, VBD_WR,
 * VBD_RSECT, VBD_WSECT). The daemon writes them from its own counters:
 * requests answered (submitted and completed alike: it does not count
 * the two apart), 512-byte sectors, requests that waited for buffers as
 * oo_reqs (blkback's "out of requests" is the same want of resources),
 * errors answered as io_errors. The ticks and flags, which the library
 * does not read and whose unit tapdisk does not document, stay 0.
 *
 * The file is written once a second at most (vbd_xenstat_update_all()),
 * from the counters the main thread asks the workers for: the workers
 * do nothing for it. Libxenstat 4.17 (Debian 12) knows no vbd3: it reads
 * only xen-blkback's sysfs statistics, which no userspace backend has.
 *
 * Main thread only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blkbackd/vbd-internal.h"

/* The layout libxenstat reads, version 1 (see above). */
struct vbd3_stats_v1 {
	uint32_t version;
	uint32_t pad;
	uint64_t oo_reqs;
	uint64_t read_reqs_submitted;
	uint64_t read_reqs_completed;
	uint64_t read_sectors;
	uint64_t read_total_ticks;
	uint64_t write_reqs_submitted;
	uint64_t write_reqs_completed;
	uint64_t write_sectors;
	uint64_t write_total_ticks;
	uint64_t io_errors;
	uint64_t flags;
};
_Static_assert(sizeof(struct vbd3_stats_v1) == 96, "libxenstat reads 96");

#define SHM_DIR_FMT "/dev/shm/td3-%ld"

/* Disks with a statistics file now (they share this process's dir). */
static unsigned int nr_published;

static void shm_dir(char *buf, size_t len)
{
	snprintf(buf, len, SHM_DIR_FMT, (long)getpid());
}

static void stats_name(const struct vbd *v, char *buf, size_t len)
{
	snprintf(buf, len, "vbd-%" PRIu32 "-%" PRIu32, v->fe_domid, v->devid);
}

static void stats_path(const struct vbd *v, char *buf, size_t len)
{
	char dir[64], name[48];

	shm_dir(dir, sizeof(dir));
	stats_name(v, name, sizeof(name));
	snprintf(buf, len, "%s/%s", dir, name);
}

/*
 * The directory, opened: made here, or left by this daemon's earlier
 * disks. /dev/shm is everyone's and the name is predictable, so a local
 * user could make it first and put a link in it to a file of root's,
 * which the O_TRUNC below would empty: a directory that is not this
 * user's alone is refused, and nothing in it is followed.
 */
static int open_shm_dir(void)
{
	char dir[64];
	struct stat st;
	int fd;

	shm_dir(dir, sizeof(dir));
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

static void write_stats(struct vbd *v)
{
	struct vbd3_stats_v1 s = { .version = 1 };
	struct blk_stats sum;

	vbd_stats_sum(v, &sum);
	s.oo_reqs = sum.parked_no_buffers;
	s.read_reqs_submitted = s.read_reqs_completed =
		sum.requests[BLK_STAT_READ];
	s.read_sectors = sum.bytes[BLK_STAT_READ] / 512;
	s.write_reqs_submitted = s.write_reqs_completed =
		sum.requests[BLK_STAT_WRITE];
	s.write_sectors = sum.bytes[BLK_STAT_WRITE] / 512;
	for (unsigned int op = 0; op < BLK_STAT_NR_OPS; op++)
		s.io_errors += sum.errors[op];
	if (pwrite(v->xenstat_fd, &s, sizeof(s), 0) != (ssize_t)sizeof(s))
		vbd_log(v, LOG_WARNING, errno,
			"cannot update its statistics for xentop");
}

void vbd_xenstat_publish(struct vbd *v)
{
	char name[48], path[128], node[VBD_PATH_MAX + 16];
	int err, dir_fd;

	if (v->xenstat_fd >= 0 || strcmp(vbd_root_kind(v->d, v->root), "vbd3"))
		return;
	stats_path(v, path, sizeof(path));
	stats_name(v, name, sizeof(name));
	dir_fd = open_shm_dir();
	if (dir_fd < 0)
		goto fail;
	v->xenstat_fd = openat(
		dir_fd, name,
		O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	err = errno;
	close(dir_fd);
	errno = err;
	if (v->xenstat_fd < 0)
		goto fail;
	nr_published++;
	write_stats(v);
	/* Where libxenstat finds the file: this process stands for tapdisk. */
	snprintf(node, sizeof(node), "%s/kthread-pid", v->be);
	err = xenbus_printf(v->d->xs, XBT_NULL, node, "%ld", (long)getpid());
	if (err < 0)
		vbd_log(v, LOG_WARNING, -err,
			"cannot write kthread-pid: xentop will not show it");
	return;
fail:
	vbd_log(v, LOG_WARNING, errno,
		"cannot make %s: xentop will not show its counters", path);
}

void vbd_xenstat_remove(struct vbd *v)
{
	char path[128];

	if (v->xenstat_fd < 0)
		return;
	stats_path(v, path, sizeof(path));
	close(v->xenstat_fd);
	v->xenstat_fd = -1;
	unlink(path);
	if (--nr_published == 0) {
		char dir[64];

		shm_dir(dir, sizeof(dir));
		rmdir(dir);
	}
}

/*
 * Whether @name is "td3-PID" for a process that no longer exists. A
 * process of another user is alive too: kill() says EPERM.
 */
static bool dead_td3(const char *name)
{
	char *end;
	long pid;

	if (strncmp(name, "td3-", 4))
		return false;
	errno = 0;
	pid = strtol(name + 4, &end, 10);
	if (errno || *end || pid <= 1 || pid == (long)getpid())
		return false;
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/*
 * Empty and remove @dir_fd's directory @name if it holds only statistics
 * files of ours (vbd-DOMID-DEVID): what a killed daemon left.
 */
static void remove_stale(int shm_fd, const char *name)
{
	unsigned int domid, devid;
	struct dirent *e;
	struct stat st;
	char tail;
	DIR *dir;
	int fd;

	fd = openat(shm_fd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || !(dir = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((e = readdir(dir)))
		if (sscanf(e->d_name, "vbd-%u-%u%c", &domid, &devid, &tail) ==
		    2)
			unlinkat(fd, e->d_name, 0);
	closedir(dir);
	/* Fails, as it should, when something else was in it. */
	unlinkat(shm_fd, name, AT_REMOVEDIR);
}

void vbd_xenstat_sweep(void)
{
	struct dirent *e;
	DIR *shm = opendir("/dev/shm");

	if (!shm)
		return;
	while ((e = readdir(shm)))
		if (dead_td3(e->d_name))
			remove_stale(dirfd(shm), e->d_name);
	closedir(shm);
}

bool vbd_xenstat_any(void)
{
	return nr_published > 0;
}

void vbd_xenstat_update_all(struct daemon *d)
{
	for (struct vbd *v = d->vbds; v; v = v->next)
		if (v->xenstat_fd >= 0)
			write_stats(v);
}

// SPDX-License-Identifier: MIT
/*
 * A live move's record on disk. One small text file a device:
 *
 *   blkbackd-move-record 1
 *   domid 5
 *   devid 51712
 *   phase switched
 *   source /var/lib/xen/images/a.img
 *   dest /srv/images/a.img
 *   end
 *
 * Every line is required, in this order, and nothing may follow "end":
 * a file cut short, zeroed by a crash, edited wrongly or written by
 * another version is refused (-EINVAL) rather than read as a record that
 * sends the guest to the wrong image. The file is replaced with rename(),
 * so a reader sees the old record or the new one, never a mix.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blkbackd/move-record.h"
#include "libblk/image.h"

#define RECORD_MAGIC "blkbackd-move-record 1"
#define RECORD_DIR "moves"
#define TEMP_SUFFIX ".tmp"

/* Longer than any record: magic, ids, phase, two paths, their keys. */
#define RECORD_MAX (256 + 2 * VBD_PATH_MAX)

static const char *const phase_names[] = {
	[MOVE_COPYING] = "copying",
	[MOVE_SWITCHED] = "switched",
};

static void record_dir(const char *state_dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/" RECORD_DIR, state_dir);
}

void move_record_path(const char *state_dir, uint32_t domid, uint32_t devid,
		      char *buf, size_t len)
{
	snprintf(buf, len, "%s/" RECORD_DIR "/%" PRIu32 "-%" PRIu32, state_dir,
		 domid, devid);
}

/* STATE_DIR/moves, made (durably) if missing. */
static int make_record_dir(const char *state_dir, char *dir, size_t len)
{
	record_dir(state_dir, dir, len);
	if (mkdir(dir, 0700) == 0)
		return blk_sync_parent_dir(dir);
	return errno == EEXIST ? 0 : -errno;
}

static bool path_storable(const char *path, size_t size)
{
	size_t n = strnlen(path, size);

	return n > 0 && n < size && !memchr(path, '\n', n);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* @r's text in @buf; its length, or -EINVAL when it cannot be stored. */
static int format_record(const struct move_record *r, char *buf, size_t len)
{
	int n;

	if ((unsigned int)r->phase > MOVE_SWITCHED ||
	    !path_storable(r->source, sizeof(r->source)) ||
	    !path_storable(r->dest, sizeof(r->dest)))
		return -EINVAL;
	n = snprintf(buf, len,
		     RECORD_MAGIC "\ndomid %" PRIu32 "\ndevid %" PRIu32
				  "\nphase %s\nsource %s\ndest %s\nend\n",
		     r->domid, r->devid, phase_names[r->phase], r->source,
		     r->dest);
	return n > 0 && (size_t)n < len ? n : -EINVAL;
}

/* @text (of @len bytes) into @path, a new file, synced to the disk. */
static int write_synced(const char *path, const char *text, size_t len)
{
	int fd = open(path,
		      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		      0600);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write_all(fd, text, len);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

int move_record_save(const char *state_dir, const struct move_record *r)
{
	char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 8];
	char text[RECORD_MAX];
	int len, ret;

	len = format_record(r, text, sizeof(text));
	if (len < 0)
		return len;
	ret = make_record_dir(state_dir, dir, sizeof(dir));
	if (ret < 0)
		return ret;
	move_record_path(state_dir, r->domid, r->devid, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s" TEMP_SUFFIX, path);
	ret = write_synced(tmp, text, (size_t)len);
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0) {
		unlink(tmp);
		return ret;
	}
	return blk_sync_parent_dir(path);
}

/*
 * The next line of *@s if it starts with @key (and a space, when it has a
 * value): its value, NUL-terminated in place, *@s moved past it; NULL when
 * the line is another or has no newline (a file cut short).
 */
static char *take_line(char **s, const char *key)
{
	size_t klen = strlen(key);
	char *line = *s, *nl = strchr(line, '\n');

	if (!nl || strncmp(line, key, klen) != 0)
		return NULL;
	*nl = '\0';
	*s = nl + 1;
	if (line[klen] == '\0')
		return line + klen;
	return line[klen] == ' ' ? line + klen + 1 : NULL;
}

/* A decimal uint32_t and nothing else. */
static bool parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_phase(const char *s, enum move_phase *out)
{
	for (unsigned int i = 0; s && i <= MOVE_SWITCHED; i++)
		if (strcmp(s, phase_names[i]) == 0) {
			*out = (enum move_phase)i;
			return true;
		}
	return false;
}

static bool copy_path(const char *s, char *dst, size_t size)
{
	if (!s || !s[0] || strlen(s) >= size)
		return false;
	memcpy(dst, s, strlen(s) + 1);
	return true;
}

/* @text, NUL-terminated, into *r: 0, or -EINVAL for anything amiss. */
static int parse_record(char *text, struct move_record *r)
{
	char *s = text, *magic = take_line(&s, RECORD_MAGIC);
	bool ok = magic && !magic[0] &&
		  parse_u32(take_line(&s, "domid"), &r->domid) &&
		  parse_u32(take_line(&s, "devid"), &r->devid) &&
		  parse_phase(take_line(&s, "phase"), &r->phase) &&
		  copy_path(take_line(&s, "source"), r->source,
			    sizeof(r->source)) &&
		  copy_path(take_line(&s, "dest"), r->dest, sizeof(r->dest));
	char *end = ok ? take_line(&s, "end") : NULL;

	return end && !end[0] && !*s ? 0 : -EINVAL;
}

/* The whole of the file at @path in @buf (@len bytes, NUL-terminated). */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got < len && (n = read(fd, buf + got, len - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return (int)n;
		}
		got += (size_t)n;
	}
	close(fd);
	/* Longer than any record, or with a NUL in it: not one. */
	if (got == len || memchr(buf, '\0', got))
		return -EINVAL;
	buf[got] = '\0';
	return 0;
}

int move_record_load(const char *state_dir, uint32_t domid, uint32_t devid,
		     struct move_record *r)
{
	char path[PATH_MAX], text[RECORD_MAX + 1];
	struct move_record got = { 0 };
	int ret;

	move_record_path(state_dir, domid, devid, path, sizeof(path));
	ret = read_small(path, text, sizeof(text));
	if (ret == 0)
		ret = parse_record(text, &got);
	if (ret == -ELOOP)
		ret = -EINVAL; /* a symbolic link: not ours */
	if (ret < 0)
		return ret;
	if (got.domid != domid || got.devid != devid)
		return -EINVAL; /* another device's, renamed: trust neither */
	*r = got;
	return 0;
}

int move_record_remove(const char *state_dir, uint32_t domid, uint32_t devid)
{
	char path[PATH_MAX];

	move_record_path(state_dir, domid, devid, path, sizeof(path));
	if (unlink(path) < 0)
		return errno == ENOENT ? 0 : -errno;
	return blk_sync_parent_dir(path);
}

/* "DOMID-DEVID" and nothing else, as move_record_path() names them. */
static bool parse_name(const char *name, uint32_t *domid, uint32_t *devid)
{
	char buf[32], *dash;

	if (strlen(name) >= sizeof(buf))
		return false;
	strcpy(buf, name);
	dash = strchr(buf, '-');
	if (!dash)
		return false;
	*dash = '\0';
	return parse_u32(buf, domid) && parse_u32(dash + 1, devid);
}

static bool is_temp(const char *name)
{
	size_t n = strlen(name), s = strlen(TEMP_SUFFIX);

	return n > s && strcmp(name + n - s, TEMP_SUFFIX) == 0;
}

int move_record_foreach(const char *state_dir,
			int (*fn)(void *arg, uint32_t domid, uint32_t devid),
			void *arg)
{
	char dir[PATH_MAX];
	struct dirent *de;
	uint32_t domid, devid;
	int ret = 0;
	DIR *dp;

	record_dir(state_dir, dir, sizeof(dir));
	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while (ret == 0 && (de = readdir(dp))) {
		if (is_temp(de->d_name))
			unlinkat(dirfd(dp), de->d_name, 0);
		else if (parse_name(de->d_name, &domid, &devid))
			ret = fn(arg, domid, devid);
	}
	closedir(dp);
	return ret;
}

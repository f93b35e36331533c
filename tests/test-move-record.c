// SPDX-License-Identifier: MIT
/*
 * A move's record (blkbackd/move-record.h): what is saved is what is
 * loaded, a save replaces the record whole, and no damaged file (any
 * prefix of a good one, zeroes, a changed line, extra text) is read as a
 * record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blkbackd/move-record.h"
#include "check.h"

static const char *state;

static struct move_record sample(enum move_phase phase)
{
	struct move_record r = { .domid = 7, .devid = 51712, .phase = phase };

	snprintf(r.source, sizeof(r.source), "/var/lib/images/a disk.img");
	snprintf(r.dest, sizeof(r.dest), "rbd:pool/a-disk");
	return r;
}

static bool same(const struct move_record *a, const struct move_record *b)
{
	return a->domid == b->domid && a->devid == b->devid &&
	       a->phase == b->phase && strcmp(a->source, b->source) == 0 &&
	       strcmp(a->dest, b->dest) == 0;
}

static char *record_path(uint32_t domid, uint32_t devid)
{
	static char path[512];

	move_record_path(state, domid, devid, path, sizeof(path));
	return path;
}

/* The record file's bytes, as move_record_save() wrote them. */
static size_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	REQUIRE(fd >= 0);
	n = read(fd, buf, len);
	close(fd);
	REQUIRE(n > 0 && (size_t)n < len);
	return (size_t)n;
}

static void write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, buf, len) == (ssize_t)len);
	close(fd);
}

static void test_round_trip(void)
{
	struct move_record a = sample(MOVE_COPYING), b = sample(MOVE_SWITCHED);
	struct move_record got;
	struct stat st;

	CHECK_EQ(move_record_load(state, 7, 51712, &got), -ENOENT);
	REQUIRE_EQ(move_record_save(state, &a), 0);
	REQUIRE_EQ(move_record_load(state, 7, 51712, &got), 0);
	CHECK(same(&got, &a));
	/* A save replaces it whole, and leaves no temporary file. */
	REQUIRE_EQ(move_record_save(state, &b), 0);
	REQUIRE_EQ(move_record_load(state, 7, 51712, &got), 0);
	CHECK(same(&got, &b));
	CHECK_EQ(stat(record_path(7, 51712), &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	{
		char tmp[600];

		snprintf(tmp, sizeof(tmp), "%s.tmp", record_path(7, 51712));
		CHECK(access(tmp, F_OK) < 0 && errno == ENOENT);
	}
	/* Another device's record is another file. */
	CHECK_EQ(move_record_load(state, 7, 51728, &got), -ENOENT);

	CHECK_EQ(move_record_remove(state, 7, 51712), 0);
	CHECK_EQ(move_record_load(state, 7, 51712, &got), -ENOENT);
	CHECK_EQ(move_record_remove(state, 7, 51712), 0);
}

/* What a record cannot hold is refused, and nothing is written. */
static void test_refused(void)
{
	struct move_record r = sample(MOVE_COPYING), got;

	snprintf(r.dest, sizeof(r.dest), "/a\nphase switched");
	CHECK_EQ(move_record_save(state, &r), -EINVAL);
	r = sample(MOVE_COPYING);
	r.source[0] = '\0';
	CHECK_EQ(move_record_save(state, &r), -EINVAL);
	r = sample(MOVE_COPYING);
	memset(r.dest, 'x', sizeof(r.dest)); /* no terminator */
	CHECK_EQ(move_record_save(state, &r), -EINVAL);
	r = sample(MOVE_COPYING);
	r.phase = (enum move_phase)5;
	CHECK_EQ(move_record_save(state, &r), -EINVAL);
	CHECK_EQ(move_record_load(state, 7, 51712, &got), -ENOENT);
	/* A state directory that is not there is not made up. */
	r = sample(MOVE_COPYING);
	CHECK_EQ(move_record_save("/nonexistent/blkbackd", &r), -ENOENT);
}

/* The record of 7/51712 loads as a damaged one. */
static void check_refused(const char *what)
{
	struct move_record got;
	int ret = move_record_load(state, 7, 51712, &got);

	if (ret != -EINVAL)
		fprintf(stderr, "%s loaded as %d\n", what, ret);
	CHECK_EQ(ret, -EINVAL);
}

/* @text written as the record of 7/51712 loads as a damaged one. */
static void check_damaged(const char *what, const char *text, size_t len)
{
	write_file(record_path(7, 51712), text, len);
	check_refused(what);
}

/* Replace the first @from in @text with @to, into @out. */
static size_t edited(const char *text, const char *from, const char *to,
		     char *out, size_t len)
{
	const char *at = strstr(text, from);
	int n;

	REQUIRE(at);
	n = snprintf(out, len, "%.*s%s%s", (int)(at - text), text, to,
		     at + strlen(from));
	REQUIRE(n > 0 && (size_t)n < len);
	return (size_t)n;
}

static void test_damaged(void)
{
	struct move_record r = sample(MOVE_SWITCHED);
	static const char *const edits[][2] = {
		{ "blkbackd-move-record 1", "blkbackd-move-record 2" },
		{ "domid 7", "domid 8" }, /* another device's */
		{ "devid 51712", "devid 51712x" },
		{ "devid 51712", "devid -51712" },
		{ "domid 7", "domid 4294967303" }, /* 7 + 2^32 */
		{ "phase switched", "phase switched " },
		{ "phase switched", "phase copied" },
		{ "source ", "source" },
		{ "dest rbd:pool/a-disk\n", "dest \n" },
		{ "dest ", "dst " },
		{ "end\n", "end" },
		{ "end\n", "end\nend\n" },
		{ "devid 51712\n", "" },
		{ "domid 7\ndevid 51712\n", "devid 51712\ndomid 7\n" },
	};
	char good[1024], text[1024];
	size_t len;

	REQUIRE_EQ(move_record_save(state, &r), 0);
	len = read_file(record_path(7, 51712), good, sizeof(good) - 1);
	good[len] = '\0';

	/* A save cut short at any byte. */
	for (size_t cut = 0; cut < len; cut++)
		check_damaged("a prefix", good, cut);
	/* A crash that left the file's blocks zeroed. */
	memset(text, 0, len);
	check_damaged("zeroes", text, len);
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		size_t n = edited(good, edits[i][0], edits[i][1], text,
				  sizeof(text));

		check_damaged(edits[i][1], text, n);
	}
	/* A NUL where the last newline was. */
	memcpy(text, good, len);
	text[len - 1] = '\0';
	check_damaged("a NUL", text, len);
	/* Longer than any record. */
	memset(text, 'a', sizeof(text));
	check_damaged("1 KiB of text", text, sizeof(text));
	/* A symbolic link to a good record of the same device is not one. */
	{
		char elsewhere[600];

		snprintf(elsewhere, sizeof(elsewhere), "%s/good", state);
		write_file(elsewhere, good, len);
		REQUIRE_EQ(unlink(record_path(7, 51712)), 0);
		REQUIRE_EQ(symlink(elsewhere, record_path(7, 51712)), 0);
		check_refused("a symbolic link");
	}

	/* The good text, written back, loads: the checks above were fair. */
	REQUIRE_EQ(unlink(record_path(7, 51712)), 0);
	write_file(record_path(7, 51712), good, len);
	{
		struct move_record got;

		CHECK_EQ(move_record_load(state, 7, 51712, &got), 0);
		CHECK(same(&got, &r));
	}
	CHECK_EQ(move_record_remove(state, 7, 51712), 0);
}

struct seen {
	unsigned int n;
	uint32_t domid[4], devid[4];
};

static int note(void *arg, uint32_t domid, uint32_t devid)
{
	struct seen *s = arg;

	REQUIRE(s->n < 4);
	s->domid[s->n] = domid;
	s->devid[s->n++] = devid;
	/* The callee may remove the record it is given. */
	return move_record_remove(state, domid, devid);
}

static int stop_at_first(void *arg, uint32_t domid, uint32_t devid)
{
	(void)domid;
	(void)devid;
	++*(unsigned int *)arg;
	return -EIO;
}

static void test_foreach(void)
{
	struct move_record r = sample(MOVE_COPYING);
	struct seen s = { 0 };
	unsigned int calls = 0;
	char other[600];

	r.domid = 3;
	r.devid = 768;
	REQUIRE_EQ(move_record_save(state, &r), 0);
	r.domid = 4;
	REQUIRE_EQ(move_record_save(state, &r), 0);
	/* A killed save's leftover, and a file that is no record's name. */
	snprintf(other, sizeof(other), "%s.tmp", record_path(5, 768));
	write_file(other, "blkbackd", 8);
	snprintf(other, sizeof(other), "%s/moves/notes", state);
	write_file(other, "x", 1);

	CHECK_EQ(move_record_foreach(state, stop_at_first, &calls), -EIO);
	CHECK_EQ(calls, 1);

	CHECK_EQ(move_record_foreach(state, note, &s), 0);
	REQUIRE_EQ(s.n, 2);
	CHECK_EQ(s.domid[0] + s.domid[1], 7);
	CHECK_EQ(s.devid[0], 768);
	CHECK_EQ(s.devid[1], 768);
	snprintf(other, sizeof(other), "%s.tmp", record_path(5, 768));
	CHECK(access(other, F_OK) < 0 && errno == ENOENT);
	snprintf(other, sizeof(other), "%s/moves/notes", state);
	CHECK_EQ(access(other, F_OK), 0);
	s.n = 0;
	CHECK_EQ(move_record_foreach(state, note, &s), 0);
	CHECK_EQ(s.n, 0);
}

int main(void)
{
	state = check_make_dir("test-move-record");
	/* Without a moves directory: none to list, none to load. */
	CHECK_EQ(move_record_foreach(state, stop_at_first, NULL), 0);
	test_round_trip();
	test_refused();
	test_damaged();
	test_foreach();
	return check_done("test-move-record");
}

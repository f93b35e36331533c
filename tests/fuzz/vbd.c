// SPDX-License-Identifier: MIT
/*
 * Fuzz harness: the device state machine's handling of xenstore events
 * (blkbackd/vbd.c and the device code around it), with a guest and a
 * toolstack writing what they like, and watch events delivered late, in
 * any order, or in one batch.
 *
 * The daemon's device code runs unchanged on the rig of tests/vbd-rig.h,
 * as in tests/test-vbd.c, with two seams: the workers are
 * tests/fake-worker.c, and xenstore is tests/fuzz/xs-store.c, in this
 * process (why not the real xenstored: see xs-store.h). Images are
 * local (a file, a missing path, a directory, a null image): a remote
 * store's open runs on a thread, whose timing no input decides.
 *
 * The guest writes anything into its device directory while it runs;
 * the toolstack writes what libxl writes, into a backend directory that
 * exists (guest_writes(), toolstack_writes()).
 *
 * Input: one byte of set-up (bits 0-1: the image; bit 2: read-only;
 * bit 3: a hotplug script; bit 4: the workers hold closing rings), then
 * steps, each an opcode byte and its arguments (enum op). A value is one
 * byte: below 200 the decimal number of its value modulo 12; then one
 * of a few words (a protocol, "connected", "error", numbers a strict
 * parser must refuse); from 240 as many raw bytes of the input as the
 * byte is above 240, NUL bytes included.
 *
 * Invariants, after each step:
 *  - the backend's state node, when the daemon wrote it last, is a
 *    XenbusState from Initialising to Closed, in plain decimal;
 * and once every event is delivered and every closed ring taken back
 * (a "settle" step, and the end of the input):
 *  - a ring is connected only while the frontend's state reads
 *    Initialised or Connected, its domain runs, and its device's image
 *    is open;
 *  - the workers hold exactly the rings the devices count, none closing
 *    unless the workers hold them back;
 *  - a device that failed, whose backend directory still exists, says
 *    why in its error node (unless it is to be forgotten once its rings
 *    closed: that directory is a new device's);
 *  - a device whose backend directory is gone is forgotten;
 * and after the daemon released everything: no device, no ring, no file
 * descriptor left open (and, under libFuzzer, no memory: LeakSanitizer).
 * No input may crash, hang the settling (100 rounds) or abort the
 * daemon's own checks (its image phases abort on a move they forbid).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "blkbackd/log.h"
#include "blkbackd/vbd-internal.h"
#include "tests/fake-worker.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/xs-store.h"
#include "tests/vbd-rig.h"

#define DOMID 5
#define ROOT "/local/domain/0/backend/vbd"
#define BE ROOT "/5/51712"
#define FE "/local/domain/5/device/vbd/51712"
#define MAX_STEPS 96
#define MIB (1 << 20)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static struct daemon d;
static struct xs_handle *peer;
static bool held;
static bool guest_alive;
static char image[256], directory[256];

enum op {
	OP_FE_VALUE, /* key, value: the guest writes its node */
	OP_FE_RM, /* key: the guest removes it */
	OP_FE_STATE, /* value: the guest's state */
	OP_BE_VALUE, /* key, value: the toolstack writes a backend node */
	OP_BE_RM, /* key: the toolstack removes it */
	OP_DELIVER, /* count, then that many indexes: events, in that order */
	OP_SETTLE, /* everything delivered; the settled invariants */
	OP_HOLD, /* the workers hold closing rings, or let them go */
	OP_CLOSED, /* the workers' closed rings taken back */
	OP_UNPLUG, /* the toolstack's detach: online=0, state=5 */
	OP_REMOVE, /* the toolstack removes both directories */
	OP_REPLUG, /* and plugs the disk again */
	OP_DOMAIN_DIES, /* @releaseDomain */
	OP_RESIZE, /* size: the image's, in MiB from 1, then a resize */
	OP_TIMERS, /* the main loop's retries and image checks */
	OP_BROKEN, /* index: a worker finds that ring broken */
	OP_MOVE, /* index, worker: balance.c moves that ring */
	OP_FAIL_CONNECT, /* which: the next worker_connect() fails */
	NR_OPS,
};

static const char *const fe_keys[] = {
	"state",
	"ring-ref",
	"event-channel",
	"protocol",
	"feature-persistent",
	"feature-large-sector-size",
	"multi-queue-num-queues",
	"ring-page-order",
	"ring-ref0",
	"ring-ref1",
	"queue-0/ring-ref",
	"queue-0/event-channel",
	"queue-1/ring-ref",
	"queue-1/event-channel",
	"backend",
};

/* What a toolstack writes; the others (error, state) are the daemon's. */
static const char *const be_keys[] = {
	"online",	  "params",    "mode",	     "hotplug-status",
	"script",	  "frontend",  "dev",	     "device-type",
	"discard-enable", "removable", "limit-iops", "limit-bytes-per-second",
};

static const char *const words[] = {
	"",
	"x86_64-abi",
	"x86_32-abi",
	"connected",
	"error",
	"w",
	"r",
	"-1",
	"08",
	" 4",
	"4\n",
	"0x4",
	"4294967296",
	"18446744073709551616",
	"cdrom",
	"/etc/xen/scripts/block",
	FE,
	"relative/path",
	"/local/domain/6/device/vbd/51712",
	"/nonexistent.img",
	"null:1M",
};

/* One of @keys, as the next byte says. */
#define PICK(in, keys) ((keys)[fuzz_take(in, 1) % NELEM(keys)])

/* Which of the images the set-up byte or a params value names. */
static const char *image_named(unsigned int which)
{
	switch (which & 3) {
	case 0:
		return image;
	case 1:
		return "/nonexistent/disk.img";
	case 2:
		return "null:1M";
	default:
		return directory; /* neither a file nor a block device */
	}
}

/* A value off the input, in @buf (NUL-terminated), its length in @len. */
static void take_value(struct fuzz_input *in, char *buf, size_t size,
		       unsigned int *len)
{
	unsigned int v = (unsigned int)fuzz_take(in, 1);

	if (v < 200) {
		*len = (unsigned int)snprintf(buf, size, "%u", v % 12);
	} else if (v < 240) {
		const char *w =
			words[(v - 200) % (sizeof(words) / sizeof(words[0]))];

		*len = (unsigned int)snprintf(buf, size, "%s", w);
	} else {
		*len = v - 240;
		fuzz_take_bytes(in, buf, *len);
		buf[*len] = '\0';
	}
}

static void write_node(const char *dir, const char *key, const char *val,
		       unsigned int len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	FUZZ_ASSERT(xs_write(peer, XBT_NULL, path, val, len));
}

static void remove_node(const char *dir, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), "%s%s%s", dir, key ? "/" : "",
		 key ? key : "");
	xs_rm(peer, XBT_NULL, path);
}

static bool exists(const char *path)
{
	char *v = xs_read(peer, XBT_NULL, path, NULL);

	free(v);
	return v != NULL;
}

/*
 * Who may write now, as xenstore's permissions and libxl's ways have it:
 * the guest into its device directory while it runs (it cannot make the
 * directory again once the toolstack removed it); the toolstack into a
 * backend directory that exists (it writes a new device's whole, at
 * once: OP_REPLUG).
 */
static bool guest_writes(void)
{
	return guest_alive && exists(FE);
}

static bool toolstack_writes(void)
{
	return exists(BE);
}

/* One event to the daemon, as its main loop hands it over. */
static void deliver(unsigned int i)
{
	const char *path, *token;

	store_take(i, &path, &token);
	vbd_watch_fired(&d, path, token);
}

/* ---- the invariants ---- */

/* @path's value parsed as the daemon's XenbusState; -1 if absent. */
static long state_at(const char *path)
{
	char *v = xs_read(peer, XBT_NULL, path, NULL);
	char *end;
	long s;

	if (!v)
		return -1;
	errno = 0;
	s = strtol(v, &end, 10);
	if (end == v || *end || errno || v[0] == '+' || v[0] == '-' ||
	    (v[0] == '0' && v[1]))
		s = -2; /* not plain decimal */
	free(v);
	return s;
}

static void check_always(void)
{
	if (store_writer(BE "/state") == (int)STORE_DAEMON) {
		long s = state_at(BE "/state");

		FUZZ_ASSERT(s >= XenbusStateInitialising &&
			    s <= XenbusStateClosed);
	}
}

static void check_settled(void)
{
	unsigned int live = fake_live_rings(&d), counted = 0;
	long fe = state_at(FE "/state");

	for (struct vbd *v = d.vbds; v; v = v->next) {
		if (!v->closing)
			counted += v->nr_queues;
		if (v->nr_queues && !v->closing)
			FUZZ_ASSERT(vbd_image_open(v));
		/* One to be forgotten once its rings closed is past that. */
		if (v->failed && !v->forget && exists(BE "/state")) {
			char *err = xs_read(peer, XBT_NULL, BE "/error", NULL);

			FUZZ_ASSERT(err != NULL && err[0]);
			free(err);
		}
	}
	if (live) {
		FUZZ_ASSERT(fe == XenbusStateInitialised ||
			    fe == XenbusStateConnected);
		FUZZ_ASSERT(xs_is_domain_introduced(peer, DOMID));
	}
	if (!held) {
		FUZZ_ASSERT(fake_closing_rings(&d) == 0);
		FUZZ_ASSERT(live == counted);
		FUZZ_ASSERT(d.moving_rings == 0);
		if (!exists(BE "/state"))
			FUZZ_ASSERT(d.nr_vbds == 0);
	}
}

/* Every event delivered and closed ring taken back, until none come. */
static void settle(void)
{
	for (int round = 0; round < 100; round++) {
		bool news = store_pending() > 0;

		while (store_pending())
			deliver(0);
		vbd_reconcile_stale(&d);
		news |= rig_rings_closed(&d);
		check_always();
		if (!news) {
			check_settled();
			return;
		}
	}
	FUZZ_ASSERT(!"the device settles");
}

/* ---- the steps ---- */

static void step_deliver(struct fuzz_input *in)
{
	unsigned int n = (unsigned int)fuzz_take(in, 1) % 8;

	while (n-- && store_pending())
		deliver((unsigned int)fuzz_take(in, 1) % store_pending());
	/* The main loop looks at the devices after each batch. */
	vbd_reconcile_stale(&d);
}

static void step_be_value(struct fuzz_input *in)
{
	const char *key = PICK(in, be_keys);
	char val[64];
	unsigned int len;

	take_value(in, val, sizeof(val), &len);
	/* Its images are the harness's: a remote one opens on a thread. */
	if (strcmp(key, "params") == 0)
		len = (unsigned int)snprintf(val, sizeof(val), "%s",
					     image_named(val[0]));
	write_node(BE, key, val, len);
}

static void step_resize(struct fuzz_input *in)
{
	unsigned int mib = 1 + (unsigned int)fuzz_take(in, 1) % 4;

	FUZZ_ASSERT(truncate(image, (off_t)mib * MIB) == 0);
	vbd_resize_all(&d);
}

static void step_move(struct fuzz_input *in)
{
	uint64_t cookie = fake_ring_cookie(&d, (unsigned int)fuzz_take(in, 1));
	unsigned int w = (unsigned int)fuzz_take(in, 1) % d.nr_workers;

	if (cookie)
		vbd_move_ring(&d, cookie, d.workers[w]);
}

static void step_fail_connect(struct fuzz_input *in)
{
	static const int errs[] = { -EDQUOT, -ENOMEM, -EINVAL, -ENOENT };

	fake_workers_fail_connect(PICK(in, errs));
}

static void step(struct fuzz_input *in, enum op op)
{
	const char *key;
	char val[64];
	unsigned int len;
	uint64_t cookie;

	if (op <= OP_FE_STATE && !guest_writes())
		return;
	if ((op == OP_BE_VALUE || op == OP_BE_RM || op == OP_UNPLUG) &&
	    !toolstack_writes())
		return;
	switch (op) {
	case OP_FE_VALUE:
		key = PICK(in, fe_keys);
		take_value(in, val, sizeof(val), &len);
		write_node(FE, key, val, len);
		break;
	case OP_FE_RM:
		remove_node(FE, PICK(in, fe_keys));
		break;
	case OP_FE_STATE:
		take_value(in, val, sizeof(val), &len);
		write_node(FE, "state", val, len);
		break;
	case OP_BE_VALUE:
		step_be_value(in);
		break;
	case OP_BE_RM:
		remove_node(BE, PICK(in, be_keys));
		break;
	case OP_DELIVER:
		step_deliver(in);
		break;
	case OP_SETTLE:
		settle();
		break;
	case OP_HOLD:
		held = !held;
		fake_workers_hold(&d, held);
		break;
	case OP_CLOSED:
		rig_rings_closed(&d);
		break;
	case OP_UNPLUG:
		write_node(BE, "online", "0", 1);
		write_node(BE, "state", "5", 1);
		break;
	case OP_REMOVE:
		remove_node(BE, NULL);
		remove_node(FE, NULL);
		break;
	case OP_REPLUG:
		/*
		 * A new attach of the same disk comes after libxl removed the
		 * old one, and the daemon saw it go, 10 s later at most.
		 */
		if (exists(BE) || !guest_alive)
			break;
		settle();
		rig_plug(peer, BE, FE, DOMID, image, "w");
		break;
	case OP_DOMAIN_DIES:
		guest_alive = false;
		store_domain(DOMID, false);
		break;
	case OP_RESIZE:
		step_resize(in);
		break;
	case OP_TIMERS:
		vbd_retry_connects(&d);
		vbd_retry_handovers(&d);
		vbd_check_images(&d);
		break;
	case OP_BROKEN:
		cookie = fake_ring_cookie(&d, (unsigned int)fuzz_take(in, 1));
		if (cookie)
			vbd_ring_broken(&d, cookie);
		break;
	case OP_MOVE:
		step_move(in);
		break;
	case OP_FAIL_CONNECT:
		step_fail_connect(in);
		break;
	case NR_OPS:
		break;
	}
	check_always();
}

/* ---- set-up ---- */

static unsigned int open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	unsigned int n = 0;

	FUZZ_ASSERT(dir != NULL);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

static char tmp[200];

/* At exit: the images go with the process. */
static void remove_images(void)
{
	unlink(image);
	rmdir(directory);
	rmdir(tmp);
}

static void once(void)
{
	int fd;

	/* Quiet: a fuzzer's inputs fail devices by the million. */
	log_init(getenv("BLKBACKD_FUZZ_VERBOSE") ? LOG_DEBUG : LOG_EMERG);
	snprintf(tmp, sizeof(tmp), "%s/fuzz-vbd.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	FUZZ_ASSERT(mkdtemp(tmp) != NULL);
	snprintf(image, sizeof(image), "%s/disk.img", tmp);
	snprintf(directory, sizeof(directory), "%s/dir", tmp);
	fd = open(image, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	FUZZ_ASSERT(fd >= 0);
	close(fd);
	FUZZ_ASSERT(mkdir(directory, 0700) == 0 || errno == EEXIST);
	atexit(remove_images);
	peer = store_handle(STORE_PEER);
}

/* The world of one input: domain 5 running, its disk plugged. */
static void start(unsigned int setup)
{
	store_reset();
	store_domain(DOMID, true);
	guest_alive = true;
	write_node("/local/domain/5", "vm", "/vm/fuzz", 8);
	FUZZ_ASSERT(truncate(image, MIB) == 0);
	rig_start(&d, store_handle(STORE_DAEMON), ROOT, 2);
	rig_plug(peer, BE, FE, DOMID, image_named(setup),
		 setup & 4 ? "r" : "w");
	if (setup & 8)
		write_node(BE, "script", "/etc/xen/scripts/block", 22);
	held = setup & 16;
	fake_workers_hold(&d, held);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct fuzz_input in = { data, size };
	unsigned int fds;

	if (!ready) {
		once();
		ready = true;
	}
	fds = open_fds();
	start((unsigned int)fuzz_take(&in, 1));
	for (unsigned int i = 0; i < MAX_STEPS && in.left; i++)
		step(&in, (enum op)(fuzz_take(&in, 1) % NR_OPS));
	/* Whatever the guest left, the workers let go and all is seen. */
	held = false;
	fake_workers_hold(&d, false);
	settle();
	rig_stop(&d);
	FUZZ_ASSERT(d.vbds == NULL && d.nr_vbds == 0);
	store_reset();
	FUZZ_ASSERT(open_fds() == fds);
	return 0;
}

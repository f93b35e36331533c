// SPDX-License-Identifier: MIT
/*
 * blkbackctl attach and detach (see attach.h).
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/xen.h> /* DOMID_FIRST_RESERVED */

#include "libblk/parse.h"
#include "libblk/toolstack.h"
#include "libblk/xenbus.h"
#include "tools/blkbackctl/attach.h"
#include "tools/blkbackctl/deadline.h"

static struct xs_handle *open_store(void)
{
	struct xs_handle *xs;

	deadline_store_doing("opening a connection");
	xs = xs_open(0);

	if (!xs)
		fprintf(stderr,
			"blkbackctl: cannot reach xenstore: %s (is this a Xen "
			"domain, and are you root?)\n",
			strerror(errno));
	return xs;
}

/*
 * The domain blkbackctl (and so blkbackd) runs in: its own domid node,
 * read by a relative path; a xenstored without one is dom0's.
 */
static uint32_t own_domid(struct xs_handle *xs)
{
	uint64_t domid = 0;
	unsigned int len;
	char *s;

	deadline_store_doing("reading this domain's id");
	s = xs_read(xs, XBT_NULL, "domid", &len);

	if (s && blk_parse_u64(s, DOMID_FIRST_RESERVED - 1, &domid) < 0)
		domid = 0;
	free(s);
	return (uint32_t)domid;
}

/*
 * The image as the daemon must see it: a file path made absolute (the
 * daemon does not run where blkbackctl does); a URI (nbd://, rbd:) as it
 * is. Returns 0, or -errno for a file that is not there.
 */
static int target_of(const char *image, char *buf, size_t len)
{
	char *abs;

	if (image[0] == '/' || strchr(image, ':')) {
		snprintf(buf, len, "%s", image);
		return 0;
	}
	abs = realpath(image, NULL);
	if (!abs)
		return -errno;
	snprintf(buf, len, "%s", abs);
	free(abs);
	return 0;
}

/* Print what blkbackd wrote to the device's error node, if anything. */
static void print_backend_error(struct xs_handle *xs, const char *be)
{
	char *why;

	deadline_store_doing("reading %s/error", be);
	if (xenbus_read_str(xs, be, "error", &why) == 0) {
		fprintf(stderr, "blkbackctl: %s\n", why);
		free(why);
	}
}

static int paths_of(const struct blk_vbd_spec *s, struct blk_vbd_paths *p)
{
	if (blk_vbd_paths(s, p) == 0)
		return 0;
	fprintf(stderr,
		"blkbackctl: '%s' is not a virtual device name Xen accepts "
		"(xvda, xvdb1, hda, sda, or a device number)\n",
		s->vdev);
	return -EINVAL;
}

/* {"domid":7,"devid":51728,"vdev":"xvdb","backend":..,"image":..,@done:true} */
static void report_json(const struct blk_vbd_spec *s,
			const struct blk_vbd_paths *p, const char *done)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "domid", json_object_new_int64(s->domid));
	json_object_object_add(o, "devid", json_object_new_int64(p->devid));
	json_object_object_add(o, "vdev", json_object_new_string(s->vdev));
	json_object_object_add(o, "backend", json_object_new_string(p->be));
	if (s->target)
		json_object_object_add(o, "image",
				       json_object_new_string(s->target));
	json_object_object_add(o, done, json_object_new_boolean(1));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/*
 * "vbd 7/51728: xvdb of domain 7 is /srv/scratch.img" after an attach,
 * "... detached" after a detach; JSON with --json.
 */
static void report(const struct blk_vbd_spec *s, const struct blk_vbd_paths *p,
		   bool json, const char *done)
{
	if (json)
		report_json(s, p, done);
	else if (s->target)
		printf("vbd %u/%u: %s of domain %u is %s\n", s->domid, p->devid,
		       s->vdev, s->domid, s->target);
	else
		printf("vbd %u/%u: %s of domain %u %s\n", s->domid, p->devid,
		       s->vdev, s->domid, done);
}

/* Wait for InitWait; anything else is undone. Returns the exit status. */
static int await_offer(struct xs_handle *xs, const struct blk_vbd_spec *s,
		       const struct blk_vbd_paths *p, unsigned int timeout_s,
		       bool json)
{
	unsigned int wanted = XENBUS_STATE_BIT(XenbusStateInitWait) |
			      XENBUS_STATE_BIT(XenbusStateClosing) |
			      XENBUS_STATE_BIT(XenbusStateClosed);
	int ret, last = 0;

	deadline_store_doing("waiting on %s/state", p->be);
	ret = xenbus_wait_state(xs, p->be, wanted, (int)timeout_s * 1000,
				&last);

	if (ret == XenbusStateInitWait) {
		report(s, p, json, "attached");
		return 0;
	}
	if (ret < 0)
		fprintf(stderr,
			"blkbackctl: blkbackd did not take vbd %u/%u within "
			"%u s (state %d); is it running?\n",
			s->domid, p->devid, timeout_s, last);
	else
		print_backend_error(xs, p->be);
	fprintf(stderr, "blkbackctl: vbd %u/%u not attached\n", s->domid,
		p->devid);
	deadline_store_doing("removing %s and %s", p->be, p->fe);
	blk_vbd_remove(xs, p);
	return 1;
}

static int plug(struct xs_handle *xs, const struct blk_vbd_spec *s,
		const struct attach_options *o)
{
	struct blk_vbd_paths p;
	char dom[64];
	int ret;

	if (paths_of(s, &p) < 0)
		return 2;
	snprintf(dom, sizeof(dom), "/local/domain/%u", s->domid);
	deadline_store_doing("reading %s, %s and %s", dom, p.be, p.fe);
	if (!xenbus_exists(xs, dom)) {
		fprintf(stderr,
			"blkbackctl: there is no domain %u (see xl list)\n",
			s->domid);
		return 1;
	}
	if (xenbus_exists(xs, p.be) || xenbus_exists(xs, p.fe)) {
		fprintf(stderr,
			"blkbackctl: domain %u already has a device %s (vbd "
			"%u/%u); detach it first\n",
			s->domid, s->vdev, s->domid, p.devid);
		return 1;
	}
	deadline_store_doing("writing %s and %s", p.be, p.fe);
	ret = blk_vbd_add(xs, s, &p);
	if (ret < 0) {
		fprintf(stderr, "blkbackctl: writing %s and %s: %s\n", p.be,
			p.fe, strerror(-ret));
		return 1;
	}
	return await_offer(xs, s, &p, o->timeout_s, o->json);
}

int attach_disk(uint32_t domid, const char *image, const char *vdev,
		const struct attach_options *o)
{
	char target[PATH_MAX];
	struct blk_vbd_spec s = {
		.domid = domid,
		.vdev = vdev,
		.target = target,
		.readonly = o->readonly || o->cdrom,
		.device_type = o->cdrom ? "cdrom" : NULL,
		.no_discard = o->no_discard,
	};
	struct xs_handle *xs;
	int ret = target_of(image, target, sizeof(target));

	if (ret < 0) {
		fprintf(stderr, "blkbackctl: %s: %s\n", image, strerror(-ret));
		return 1;
	}
	xs = open_store();
	if (!xs)
		return 1;
	s.backend_domid = own_domid(xs);
	ret = plug(xs, &s, o);
	xs_close(xs);
	return ret;
}

/* Closing and offline, wait for Closed, remove. Returns the exit status. */
static int unplug(struct xs_handle *xs, const struct blk_vbd_spec *s,
		  const struct attach_options *o)
{
	struct blk_vbd_paths p;
	int ret, last = 0;

	if (paths_of(s, &p) < 0)
		return 2;
	deadline_store_doing("writing %s/state (Closing)", p.be);
	ret = blk_vbd_unplug(xs, &p);
	if (ret == -ENODEV) {
		fprintf(stderr, "blkbackctl: domain %u has no device %s\n",
			s->domid, s->vdev);
		return 1;
	}
	if (ret < 0) {
		fprintf(stderr, "blkbackctl: writing %s: %s\n", p.be,
			strerror(-ret));
		return 1;
	}
	deadline_store_doing("waiting on %s/state", p.be);
	ret = xenbus_wait_state(xs, p.be, XENBUS_STATE_BIT(XenbusStateClosed),
				(int)o->timeout_s * 1000, &last);
	deadline_store_doing("removing %s and %s", p.be, p.fe);
	blk_vbd_remove(xs, &p);
	if (ret < 0) {
		fprintf(stderr,
			"blkbackctl: blkbackd did not close vbd %u/%u within "
			"%u s (state %d; the guest may still use it); its "
			"nodes were removed anyway, as xl does\n",
			s->domid, p.devid, o->timeout_s, last);
		return 1;
	}
	report(s, &p, o->json, "detached");
	return 0;
}

int detach_disk(uint32_t domid, const char *vdev,
		const struct attach_options *o)
{
	struct blk_vbd_spec s = { .domid = domid, .vdev = vdev };
	struct xs_handle *xs = open_store();
	int ret;

	if (!xs)
		return 1;
	s.backend_domid = own_domid(xs);
	ret = unplug(xs, &s, o);
	xs_close(xs);
	return ret;
}

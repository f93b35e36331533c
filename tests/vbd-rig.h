/* SPDX-License-Identifier: MIT */
/*
 * The daemon around its device code, for the tests that drive the device
 * state machine as a unit (tests/test-vbd.c against the real xenstored,
 * tests/fuzz/vbd.c against tests/fuzz/xs-store.c): a struct daemon with
 * the default options, one served root, fake workers
 * (tests/fake-worker.h), host errors and an opener, and what the
 * toolstack and a Linux blkfront write to plug a disk and connect it.
 * A setup that fails aborts, naming what failed: nothing can be tested
 * without it.
 */
#ifndef TESTS_VBD_RIG_H
#define TESTS_VBD_RIG_H

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

#include "blkbackd/daemon.h"

/* @d serving @root through @xs, with @workers fake workers. */
void rig_start(struct daemon *d, struct xs_handle *xs, const char *root,
	       unsigned int workers);
/* Every device released and @d's parts freed; @xs stays open. */
void rig_stop(struct daemon *d);

/*
 * The main loop's part for rings the workers closed: true when some had,
 * and vbd_rings_closed() took them.
 */
bool rig_rings_closed(struct daemon *d);

/*
 * The toolstack plugs disk @params (mode "w" or "r") of domain @domid:
 * the frontend's directory @fe and the backend's @be, both Initialising,
 * as libxl writes them for a disk without a hotplug script.
 */
void rig_plug(struct xs_handle *xs, const char *be, const char *fe,
	      uint32_t domid, const char *params, const char *mode);

/* A Linux blkfront's one-queue, one-page ring in @fe, then @state. */
void rig_frontend_rings(struct xs_handle *xs, const char *fe, int state);

/* Write @dir/@key = @val; aborts if xenstore refuses. */
void rig_put(struct xs_handle *xs, const char *dir, const char *key,
	     const char *val);

#endif /* TESTS_VBD_RIG_H */

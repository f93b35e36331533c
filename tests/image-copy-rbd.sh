#!/bin/sh
# Copying images for live moves with RBD on either side (libblk/image-copy.h;
# tests/test-image-copy.c's `rbd` mode) against a one-monitor, one-OSD
# cluster this test starts: a file into a new image and that into another,
# byte for byte, each created with exclusive-lock; the first marked as moved
# (its metadata names the second) and refused; the second back into a file
# with its unwritten ranges kept holes; removal.
. "$top_srcdir/tests/lib.sh"
scratch_dir
. "$top_srcdir/tests/lib-ceph.sh"
ceph_start

TMPDIR=$WORK "$top_builddir/tests/test-image-copy" rbd "$CEPH_CONF" ||
	fail "test-image-copy rbd failed"
rbd_cmd info rbd/moved-a | grep -q 'features:.*exclusive-lock' ||
	fail_later "the copy target was made without exclusive-lock"
moved=$(rbd_cmd image-meta get rbd/moved-a blkbackd.moved-to) ||
	fail "rbd/moved-a carries no moved-to mark"
case $moved in
*rbd:rbd/moved-b:*) ;;
*) fail_later "the moved-to mark names '$moved', not rbd/moved-b" ;;
esac
rbd_cmd info rbd/moved-b >/dev/null 2>&1 &&
	fail_later "rbd/moved-b is still there after blk_image_remove()"
finish "RBD copy targets made, copied, marked and removed"

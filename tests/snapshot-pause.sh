#!/bin/sh
# The guest's pause during reflink snapshots, as the daemon measures it
# (from its rings' stop to their resume), while a guest writes 4 KiB pages
# at depth 8 (tests/lib-snapshot.sh's numbered writer, over the image's
# first 16 MiB). Prints every pause and their p50 and p99 (nearest rank:
# with fewer than 100 snapshots the p99 is the longest); asserts only that
# every snapshot is taken and the guest sees no error.
#
# make check runs 3 snapshots of a 64 MiB image. Issue 31's target is
# measured with
#   SNAPSHOT_PAUSE_COUNT=20 SNAPSHOT_PAUSE_IMAGE_MIB=1024 \
#     make -C build check TESTS=tests/snapshot-pause.sh
# and read in build/tests/snapshot-pause.log (the image is written in
# full first, so that its blocks are allocated as a used disk's are).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
COUNT=${SNAPSHOT_PAUSE_COUNT:-3}
MIB=${SNAPSHOT_PAUSE_IMAGE_MIB:-64}
requires_loop_mount
requires python3 dd
xensim_setup
MNT=$WORK/xfs
# Room for the image and what its snapshots' copied-on-write blocks take.
scratch_fs xfs "$MNT" "$((MIB * 2 + 512))M" -m reflink=1
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

dd if=/dev/zero of="$MNT/d1.img" bs=1M count="$MIB" conv=fsync \
	status=none || fail "cannot write the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
attach 1 xvda "$MNT/d1.img"
numbered_start 1
: >"$WORK/pauses"
i=0
while [ "$i" -lt "$COUNT" ]; do
	i=$((i + 1))
	sleep 0.5
	snapshot 1/xvda "$MNT/snap$i.img" "$WORK/snap.json" ||
		fail "snapshot $i: $(cat "$WORK/snap.json.err")"
	pause_ms "$WORK/snap.json" >>"$WORK/pauses"
	# The next one is of the image, not of many snapshots' blocks.
	rm -f "$MNT/snap$i.img"
done
numbered_stop
python3 - "$WORK/pauses" "$MIB" <<'PY' || fail "pauses that cannot be true"
import math, sys
p = sorted(float(x) for x in open(sys.argv[1]))
if not p or p[0] <= 0:
    sys.exit(1)
rank = lambda q: p[max(0, math.ceil(q * len(p)) - 1)]
print("snapshot-pause: %d reflink snapshots of a %s MiB image under "
      "depth-8 writes: pause p50 %.2f ms, p99 %.2f ms, max %.2f ms"
      % (len(p), sys.argv[2], rank(0.5), rank(0.99), p[-1]))
print("snapshot-pause: every pause (ms): " +
      " ".join("%.2f" % x for x in p))
PY
assert_daemon_alive
exit 0

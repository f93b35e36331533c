#!/bin/sh
# Disks in Ceph RBD, on a one-monitor, one-OSD cluster this test starts on
# loopback: the guest's writes checked in `rbd export`, the host's data
# (`rbd import`) read back by the guest, a snapshot served read-only and
# refused writable, the exclusive lock keeping a second writer out, the
# OSD stopped under a guest's I/O: the requests wait and complete,
# verified, once it runs again; and requests of 4096 segments, more than
# librbd takes in one call, written and read back; and a migration's two
# ends in one host, the receiving device taking the image (and its
# exclusive lock) only once the sending one has let it go; and between two
# hosts (two daemons), where the receiving one knows the lock's holder
# only by the owner it wrote in the image. And `blkbackctl snapshot` of a
# running RBD disk: an RBD snapshot under the guest's pause, holding
# exactly the writes answered before it (tests/snapshot-check.py), read
# back as another guest's disk.
. "$top_srcdir/tests/lib.sh"
xensim_setup
. "$top_srcdir/tests/lib-ceph.sh"
. "$top_srcdir/tests/lib-migrate.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
ceph_start
# A ring's bounce buffers must hold one request of 4096 segments (16 MiB).
start_daemon --max-indirect-segments 4096 --ring-buffer-mib 16

size=16M
sectors=$((16 * 2048))
target() { echo "rbd:rbd/$1:conf=$CEPH_CONF"; }

note "the guest's writes land in the RBD image"
rbd_cmd create --size "$size" rbd/one || fail "rbd create failed"
guest 1 "$size"
attach 1 xvda "$(target one)"
blkfront 1 --fill --partial --bs 45056 --depth 16 --ops 300 --verify \
	--seed 7 --flush-every 8 >/dev/null
grep -q "vbd 1/51712: image $(target one)," "$WORK/blkbackd.log" ||
	fail "the daemon did not log the RBD image it opened"
grep -q "vbd 1/51712: the filesystem of" "$WORK/blkbackd.log" &&
	fail "the daemon took the RBD image for a file that refuses O_DIRECT"
detach 1
rbd_cmd export rbd/one "$WORK/one.raw" >/dev/null 2>&1 || fail "rbd export failed"
write_pattern "$WORK/expected-7" "$sectors" 7
cmp "$WORK/expected-7" "$WORK/one.raw" ||
	fail "the RBD image differs from what the guest wrote"

note "the guest reads what the host imported"
write_pattern "$WORK/p99" "$sectors" 99
rbd_cmd import "$WORK/p99" rbd/two >/dev/null 2>&1 || fail "rbd import failed"
guest 2 "$size"
attach 2 xvda "$(target two)"
blkfront 2 --preexisting --seed 99 --bs 4096 --depth 8 --ops 500 \
	--sequential >/dev/null
detach 2

note "a snapshot is read-only"
rbd_cmd snap create rbd/one@s1 >/dev/null 2>&1 || fail "rbd snap create failed"
guest 3 "$size"
attach_must_fail 3 "rbd:rbd/one@s1:conf=$CEPH_CONF" xvda \
	"snapshot s1 is read-only; give the disk access=ro"
attach 3 xvdb "rbd:rbd/one@s1:conf=$CEPH_CONF" --mode r
blkfront 3 --vdev xvdb --check readonly --preexisting --seed 7 --ops 200 \
	>/dev/null
expect_check "$WORK/front-3.out" readonly "a snapshot" readonly_facts 4 \
	"$(be_path 3 51728)"
detach 3 xvdb

note "the exclusive lock keeps a second writer out"
guest 4 "$size"
xenstore-write /local/domain/4/vm /vm/5e1f0000-0000-4000-8000-000000000004
attach 4 xvda "$(target two)"
guest 5 "$size"
# The refusal names the holder's VM, not librbd's errno for it (EROFS).
attach_must_fail 5 "$(target two)" xvda \
	"another client holds its exclusive lock (the disk of /vm/5e1f0000-0000-4000-8000-000000000004); detach"
blkfront 4 --preexisting --seed 99 --ops 100 >/dev/null
detach 4

note "the OSD stops under I/O: the requests wait, then complete"
rbd_cmd create --size "$size" rbd/three || fail "rbd create failed"
guest 6 "$size"
attach 6 xvda "$(target three)"
blkfront_bg 6 --bs 65536 --depth 8 --ops 3000 --verify --seed 11
front6=$BG_PID
wait_file_line "$WORK/front-6.out" "connected" 20 || fail "dom 6 never connected"
osd=$(ceph_pid osd.0)
kill -STOP "$osd"
sleep 2
kill -0 "$front6" 2>/dev/null || fail "the guest ended while the OSD was stopped"
kill -CONT "$osd"
blkfront_wait 6 "$front6" "the guest's I/O failed across the OSD's pause"
expect_verified "$WORK/front-6.out" "dom 6 across the OSD's pause"
# It must have spanned the pause: a run that ended before it proves nothing.
secs=$(sed -n 's/.* in \([0-9.]*\) s:.*/\1/p' "$WORK/front-6.out")
note "dom 6: $(grep ': wrote ' "$WORK/front-6.out" | cut -c1-80)"
awk -v s="$secs" 'BEGIN { exit !(s >= 2) }' ||
	fail "the guest's run ($secs s) did not span the OSD's 2 s pause"
detach 6

note "requests of 4096 segments, over librbd's 1024 vectors a call"
rbd_cmd create --size 64M rbd/wide || fail "rbd create failed"
guest 7 64M 64
attach 7 xvda "$(target wide)"
blkfront 7 --queues 1 --indirect 4096 --bs $((4096 * 4096)) --depth 1 \
	--data-pages 4200 --ops 16 --verify --seed 13 >/dev/null
grep -q "4096 segments per request" "$WORK/front-7.out" ||
	fail "the guest did not use 4096 segments: $(head -1 "$WORK/front-7.out")"
expect_verified "$WORK/front-7.out" "requests of 4096 segments"
detach 7

note "a migration's two ends: the exclusive lock passes from one to the other"
write_pattern "$WORK/p5" $((8 * 2048)) 5
rbd_cmd import "$WORK/p5" rbd/mig >/dev/null 2>&1 || fail "rbd import failed"
sender_and_receiver 8 9 "$(target mig)"
handover 8 9

note "a migration between hosts: the other host's daemon waits for the lock"
write_pattern "$WORK/p6" $((8 * 2048)) 6
rbd_cmd import "$WORK/p6" rbd/far >/dev/null 2>&1 || fail "rbd import failed"
other_host_start 20
between_hosts 10 11 12 "$(target far)" "another client holds its exclusive lock"
owners=$(rbd_cmd lock ls rbd/far 2>/dev/null | grep -c "auto ")
[ "$owners" = 1 ] || fail "rbd lock ls shows $owners lockers, not one"
other_host_alive

note "blkbackctl snapshot: an RBD snapshot of a running disk"
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
rbd_cmd create --size "$size" rbd/live || fail "rbd create failed"
guest 13 "$size"
attach 13 xvda "$(target live)"
numbered_start 13
sleep 0.5
snapshot 13/xvda @before "$WORK/rbd-snap.json" ||
	fail "RBD snapshot: $(cat "$WORK/rbd-snap.json.err")"
snapshot 13/xvda @before "$WORK/again.json" &&
	fail "a second RBD snapshot of the same name was taken"
grep -q "one of that name exists" "$WORK/again.json.err" ||
	fail "the same name again: $(cat "$WORK/again.json.err")"
snapshot 13/xvda "$WORK/live.img" "$WORK/path.json" &&
	fail "a file path was taken for an RBD disk's snapshot"
grep -q "give @NAME" "$WORK/path.json.err" ||
	fail "a path for RBD: $(cat "$WORK/path.json.err")"
numbered_stop
rbd_cmd snap ls rbd/live | grep -q " before " ||
	fail "rbd snap ls: $(rbd_cmd snap ls rbd/live 2>&1)"
guest 14 "$size"
attach 14 xvdb "rbd:rbd/live@before:conf=$CEPH_CONF" --mode r
blkfront 14 --vdev xvdb --check numbered-read >/dev/null
python3 "$top_srcdir/tests/snapshot-check.py" "$WORK/front-13.out" \
	"$WORK/rbd-snap.json" "$WORK/front-14.out" >"$WORK/rbd-check.out" ||
	fail "the RBD snapshot: $(cat "$WORK/rbd-check.out")"
note "RBD snapshot (paused $(pause_ms "$WORK/rbd-snap.json") ms): $(cat "$WORK/rbd-check.out")"
detach 14 xvdb
detach 13
assert_daemon_alive
exit 0

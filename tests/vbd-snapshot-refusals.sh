#!/bin/sh
# Snapshots that cannot be taken, or not now: each is refused with what
# is wrong and the fix, names the disk, leaves nothing behind, and never
# costs the guest an error. An image on ext4 (no reflink: the refusal
# names the filesystem); a DEST that exists (left as it was), on another
# filesystem, or an RBD snapshot's @NAME for a file; a disk that does not
# exist, or whose guest is not connected; an NBD disk (its server's to
# snapshot). On storage that stops answering (a FUSE file over nbdkit's
# pause filter): a second snapshot while the first waits for the guest's
# I/O is refused; the first gives up after its 5 s bound and the guest
# goes on, unharmed, once the storage answers; a guest that dies while
# its snapshot waits ends the snapshot, and its disk goes once the
# storage answers; a client that hangs up meanwhile is dropped, and its
# snapshot ends all the same. A relative DEST is the caller's.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
. "$top_srcdir/tests/lib-nbd.sh"
requires_loop_mount
requires python3 nbdkit nbdfuse fusermount3 mkfs.ext4
[ -c /dev/fuse ] || skip "no /dev/fuse: the stalled store needs FUSE"
xensim_setup
XFS=$WORK/xfs
EXT4=$WORK/ext4
xfs_reflink "$XFS"
scratch_fs ext4 "$EXT4" 64M
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

# refused DISK DEST REGEX WHAT: the snapshot fails, saying REGEX.
refused() {
	if snapshot "$1" "$2" "$WORK/refused.json"; then
		fail "$4: a snapshot was taken: $(cat "$WORK/refused.json")"
	fi
	grep -q -- "$3" "$WORK/refused.json.err" ||
		fail "$4: blkbackctl said: $(cat "$WORK/refused.json.err")"
}

# ---- ext4 cannot share blocks ----
truncate -s 32M "$EXT4/d1.img" || fail "cannot make the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
attach 1 xvda "$EXT4/d1.img"
numbered_start 1
refused 1/xvda "$EXT4/s1.img" \
	"vbd 1/51712: snapshot $EXT4/s1.img not taken: the image is on ext4" \
	"on ext4"
grep -q "XFS .*reflink=1.* or btrfs.*snapshot --copy" "$WORK/refused.json.err" ||
	fail "the ext4 refusal gives no fix: $(cat "$WORK/refused.json.err")"
[ ! -e "$EXT4/s1.img" ] || fail "a refused snapshot left $EXT4/s1.img"
numbered_stop
grep -q "vbd 1/51712: snapshot $EXT4/s1.img not taken" "$WORK/blkbackd.log" ||
	fail "the journal does not say the snapshot failed"

# ---- on XFS, what DEST must not be ----
truncate -s 32M "$XFS/d2.img" || fail "cannot make the image"
"$TOOLSTACK" create 2 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 2"
attach 2 xvda "$XFS/d2.img"
numbered_start 2
echo "keep me" >"$XFS/exists.img"
refused 2/xvda "$XFS/exists.img" "File exists (a snapshot never replaces" \
	"DEST exists"
[ "$(cat "$XFS/exists.img")" = "keep me" ] || fail "DEST that existed changed"
refused 2/xvda "$EXT4/other.img" "is on another filesystem than the image" \
	"DEST on another filesystem"
[ ! -e "$EXT4/other.img" ] || fail "a refused snapshot left $EXT4/other.img"
refused 2/xvda @first "give a path for the copy" "an RBD name for a file"
refused 9/xvda "$XFS/none.img" "no such device" "a disk that does not exist"
# A relative DEST is where blkbackctl runs.
(cd "$XFS" && $CTL snapshot 2/xvda rel.img >"$WORK/rel.out" 2>&1) ||
	fail "a relative DEST: $(cat "$WORK/rel.out")"
[ -f "$XFS/rel.img" ] || fail "a relative DEST is not beside the caller"
numbered_stop
$CTL --json stats 2/xvda >"$WORK/stats.json" || fail "stats"
[ "$(json "$WORK/stats.json" 'd["devices"][0]["snapshots"]["failed"]')" = 2 ] ||
	fail "stats: $(json "$WORK/stats.json" 'd["devices"][0]["snapshots"]')"

# ---- a disk whose guest is not connected ----
truncate -s 32M "$XFS/d3.img" || fail "cannot make the image"
"$TOOLSTACK" create 3 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 3"
attach 3 xvda "$XFS/d3.img"
wait_node "$(be_path 3)/state" 2 10 || fail "dom 3 not offered"
refused 3/xvda "$XFS/s3.img" "no guest is connected to it" "not connected"

# ---- an NBD export: its server's to snapshot ----
nbd_server exp memory 16M
"$TOOLSTACK" create 5 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 5"
attach 5 xvda "$(uri exp)"
wait_node "$(be_path 5)/state" 2 10 || fail "dom 5 not offered"
refused 5/xvda "$XFS/s5.img" "an NBD export belongs to its server" "NBD"

# ---- storage that stops answering ----
mkdir "$WORK/slow" || hard_error "mkdir"
nbdfuse "$WORK/slow/disk.img" --command nbdkit -s --filter=pause memory 32M \
	pause-control="$WORK/pause.sock" >"$WORK/nbdfuse.log" 2>&1 &
SCRATCH_MOUNTS="$SCRATCH_MOUNTS $WORK/slow"
n=50
until [ -e "$WORK/slow/disk.img" ] && [ -S "$WORK/pause.sock" ]; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || skip "nbdfuse cannot mount here: $(cat "$WORK/nbdfuse.log")"
	sleep 0.1
done
# A paused store would hold the daemon's stop (its rings wait for their
# I/O): at exit it answers again first.
trap 'rc=$?; nbdkit_pause "$WORK/pause.sock" r; (exit $rc); cleanup' EXIT
# store p|r: pause or resume the export.
store() { nbdkit_pause "$WORK/pause.sock" "$1" || fail "nbdkit did not $1"; }
paused() { $CTL --json list | python3 -c "import json,sys
print([d['paused'] for d in json.load(sys.stdin)['devices'] if d['domid'] == $1][0])"; }
# wait_paused DOMID True|False
wait_paused() {
	n=100
	until [ "$(paused "$1")" = "$2" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "dom $1: paused is not $2"
		sleep 0.1
	done
}

"$TOOLSTACK" create 4 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 4"
attach 4 xvda "$WORK/slow/disk.img"
numbered_start 4
# A client that hangs up while its snapshot waits: the daemon drops it,
# the snapshot goes on (and gives up, as below), the journal says so.
store p
sleep 0.3
timeout 1 $CTL snapshot 4/xvda "$WORK/slow/gone.img" >/dev/null 2>&1 &&
	fail "a snapshot answered while its guest's I/O could not drain"
wait_file_line "$WORK/blkbackd.log" \
	"snapshot $WORK/slow/gone.img not taken: .* in flight 5000 ms" 10 ||
	fail "the snapshot of a client that hung up did not end in the journal"
store r
wait_paused 4 False
store p
sleep 0.3
start=$(now_ms)
snapshot 4/xvda "$WORK/slow/a.img" "$WORK/a.json" &
A_PID=$!
wait_paused 4 True
refused 4/xvda "$XFS/b.img" "it is paused already" "a second snapshot at once"
if wait "$A_PID"; then
	fail "a snapshot whose guest's I/O never drained was taken"
fi
took=$(($(now_ms) - start))
grep -q "still had I/O in flight 5000 ms after .*the guest goes on" \
	"$WORK/a.json.err" || fail "the bounded drain: $(cat "$WORK/a.json.err")"
[ "$took" -ge 4900 ] && [ "$took" -lt 15000 ] ||
	fail "the bounded drain answered after $took ms"
store r
wait_paused 4 False
numbered_stop
note "a drain that did not end was given up after $took ms; the guest went on"

# A guest that dies while its snapshot waits for its I/O: its disk goes
# away (the daemon tears it down as for a detach), which ends the
# snapshot at once; the device goes once the storage answers.
blkfront_bg 4 --seconds 60 --depth 4
sleep 1
store p
sleep 0.3
snapshot 4/xvda "$WORK/slow/c.img" "$WORK/c.json" &
C_PID=$!
wait_paused 4 True
kill -9 "$BG_PID"
wait "$BG_PID" 2>/dev/null
"$TOOLSTACK" destroy 4 >>"$WORK/toolstack.log" 2>&1 || fail "destroy dom 4"
start=$(now_ms)
if wait "$C_PID"; then
	fail "a snapshot of a disk that went away meanwhile was taken"
fi
took=$(($(now_ms) - start))
grep -q "the device closed before the action ran" "$WORK/c.json.err" ||
	fail "snapshot of a guest that died: $(cat "$WORK/c.json.err")"
[ "$took" -lt 4000 ] ||
	fail "the snapshot of a guest that died answered after $took ms"
store r
n=100
while $CTL --json list | grep -q '"domid":4,'; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "dom 4's device stayed after its storage answered"
	sleep 0.1
done
assert_daemon_alive
exit 0

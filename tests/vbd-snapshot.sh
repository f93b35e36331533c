#!/bin/sh
# Snapshots of a running disk on XFS (reflink): a guest writes numbered
# pages at depth 8 throughout while three snapshots are taken. Each
# snapshot, attached to another guest and read back through the daemon,
# holds every write the writer saw answered before the pause, none it
# sent after the device had drained, and no torn page
# (tests/snapshot-check.py); the writer sees no error. The checker itself
# must fail on a copy taken without a pause, and on a window that lies.
# blkbackctl prints the pause; stats count the snapshots and their pauses;
# the journal has a line per snapshot. The daemon's pauses are printed,
# not held to a target (see tests/snapshot-pause.sh for that).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
requires_loop_mount
requires python3 cp
xensim_setup
MNT=$WORK/xfs
xfs_reflink "$MNT"
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
CHECK="python3 $top_srcdir/tests/snapshot-check.py"

truncate -s 64M "$MNT/d1.img" || fail "cannot make the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
attach 1 xvda "$MNT/d1.img"
numbered_start 1

pauses=
for i in 1 2 3; do
	sleep 0.4
	snapshot 1/xvda "$MNT/snap$i.img" "$WORK/snap$i.json" ||
		fail "snapshot $i: $(cat "$WORK/snap$i.json.err")"
	pauses="$pauses $(pause_ms "$WORK/snap$i.json")"
done
# As an operator sees it.
sleep 0.2
$CTL snapshot 1/xvda "$MNT/snap4.img" >"$WORK/snap4.txt" 2>&1 ||
	fail "snapshot 4: $(cat "$WORK/snap4.txt")"
grep -q "^vbd 1/51712: snapshot $MNT/snap4.img taken; the guest paused [0-9.]* ms (draining" \
	"$WORK/snap4.txt" || fail "blkbackctl snapshot printed: $(cat "$WORK/snap4.txt")"
# A copy without a pause, for the checker to refuse below: its window is
# put 200 ms before the copy, so that the writer (at depth 8, however
# loaded the machine) has sent writes that the copy holds and the window
# excludes; with the window right at the copy, a writer not scheduled
# in between would make it a true snapshot.
sleep 0.2
raw_from=$(python3 -c 'import time; print(time.monotonic_ns())')
sleep 0.2
cp --reflink=always "$MNT/d1.img" "$MNT/raw.img" || fail "cp --reflink"
sleep 0.2
numbered_stop

for i in 1 2 3; do
	read_back $((10 + i)) "$MNT/snap$i.img"
done
read_back 20 "$MNT/raw.img"
for i in 1 2 3; do
	d=$((10 + i))
	$CHECK "$WORK/front-1.out" "$WORK/snap$i.json" "$WORK/front-$d.out" \
		>"$WORK/check$i.out" ||
		fail "snapshot $i: $(cat "$WORK/check$i.out")"
	note "snapshot $i (paused $(pause_ms "$WORK/snap$i.json") ms): $(cat "$WORK/check$i.out")"
done

# The checker can fail: on the copy taken without a pause, given a time
# before the copy began as its window...
printf '{"monotonic_ns": {"stopped": %s, "drained": %s}}\n' "$raw_from" \
	"$raw_from" >"$WORK/raw.json"
if $CHECK "$WORK/front-1.out" "$WORK/raw.json" "$WORK/front-20.out" \
	>"$WORK/check-raw.out"; then
	fail "the checker passed a copy taken with no pause: $(cat "$WORK/check-raw.out")"
fi
grep -q "taken after the pause began" "$WORK/check-raw.out" ||
	fail "the copy without a pause: $(cat "$WORK/check-raw.out")"
# ... and on a true snapshot given a window 300 ms too late: writes
# answered before that "pause" are missing from it.
python3 - "$WORK/snap1.json" >"$WORK/late.json" <<'PY' || fail "late window"
import json, sys
m = json.load(open(sys.argv[1]))["monotonic_ns"]
late = m["resumed"] + 300 * 1000 * 1000
print(json.dumps({"monotonic_ns": {"stopped": late, "drained": late}}))
PY
if $CHECK "$WORK/front-1.out" "$WORK/late.json" "$WORK/front-11.out" \
	>"$WORK/check-late.out"; then
	fail "the checker passed a window after the pause: $(cat "$WORK/check-late.out")"
fi
grep -q ": lost" "$WORK/check-late.out" ||
	fail "a late window: $(cat "$WORK/check-late.out")"

# Counted and shown.
$CTL --json stats 1/xvda >"$WORK/stats.json" || fail "stats"
[ "$(json "$WORK/stats.json" 'd["devices"][0]["snapshots"]["taken"]')" = 4 ] ||
	fail "stats: $(json "$WORK/stats.json" 'd["devices"][0]["snapshots"]')"
[ "$(json "$WORK/stats.json" 'd["devices"][0]["snapshots"]["failed"]')" = 0 ] ||
	fail "stats count failed snapshots"
[ "$(json "$WORK/stats.json" 'd["devices"][0]["snapshots"]["max_pause_us"] > 0')" = True ] ||
	fail "stats: no pause measured"
$CTL stats 1/xvda >"$WORK/stats.txt" || fail "stats"
grep -q "^  snapshots 4 (0 failed), the guest paused [0-9.]* ms in all, [0-9.]* the last, [0-9.]* the most\$" \
	"$WORK/stats.txt" || fail "stats printed: $(cat "$WORK/stats.txt")"
$CTL metrics >"$WORK/metrics.prom" || fail "metrics"
grep -q '^blkbackd_snapshots_total{.*domid="1".*} 4$' "$WORK/metrics.prom" ||
	fail "metrics: $(grep snapshot "$WORK/metrics.prom")"
$CTL --json list >"$WORK/list.json" || fail "list"
[ "$(json "$WORK/list.json" 'd["devices"][0]["paused"]')" = False ] ||
	fail "list: the disk is still paused"
[ "$(grep -c "snapshot $MNT/snap[0-9].img taken: the guest paused" "$WORK/blkbackd.log")" = 4 ] ||
	fail "the journal does not have a line per snapshot"
# A generous sanity bound, no target: the bounded drain is 5 s.
for p in $pauses; do
	python3 -c "import sys; sys.exit(not 0 < float('$p') < 5000)" ||
		fail "a pause of $p ms cannot be right"
done
assert_daemon_alive
note "pauses (ms):$pauses"
exit 0

#!/bin/sh
# Live moves, file to file and on to another file, while a guest writes
# numbered pages at depth 8 throughout (tools/xensim/workload-numbered.c).
# blkbackctl move --wait exits 0 once switched and prints the guest's
# pause; the guest saw no error; the last image, read back through another
# guest, holds every write the guest saw answered (before, during and
# after the moves); the first image no longer holds them all (the checker
# can fail), the daemon has each old image closed, each carries the
# moved-to mark, and a new attach of the first is refused with the fix.
# The move's record stays while the disk is attached, and goes with it.
# list, stats, the metrics and the journal say what happened.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
. "$top_srcdir/tests/lib-move.sh"
requires python3 cp
xensim_setup
DIR=$WORK/images
xattr_dir "$DIR"
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
SRC=$DIR/src.img
DST=$DIR/dst.img
DST2=$DIR/dst2.img

truncate -s 64M "$SRC" || fail "cannot make the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
attach 1 xvda "$SRC"
numbered_start 1
sleep 0.5

# At 32 MiB/s the first pass over 64 MiB takes about 2 s: the guest writes
# throughout it, and those chunks are copied again.
$CTL move --wait --bw 32M 1/xvda "$DST" >"$WORK/move.txt" 2>&1 ||
	fail "move: $(cat "$WORK/move.txt")"
grep -q "^moved to $DST after [0-9]* pass[es]*: the guest paused [0-9.]* ms for the switch (draining" \
	"$WORK/move.txt" || fail "blkbackctl move printed: $(cat "$WORK/move.txt")"
# The guest goes on, on the new image.
sleep 0.5
daemon_has_open "$DST" || fail "the daemon does not have $DST open"
daemon_has_open "$SRC" && fail "the daemon still has $SRC open"
[ "$(moved_to "$SRC")" = "$DST" ] ||
	fail "$SRC is not marked as moved to $DST: '$(moved_to "$SRC")'"

# What the daemon says about it.
[ "$(move_field 1/xvda 'm["phase"]')" = switched ] ||
	fail "stats: $(cat "$WORK/move.json")"
[ "$(move_field 1/xvda 'm["copied_bytes"] >= m["total_bytes"] == 64 << 20')" = True ] ||
	fail "stats: not all copied: $(cat "$WORK/move.json")"
[ "$(move_field 1/xvda 'm["passes"] >= 1 and m["dirty_bytes"] == 0')" = True ] ||
	fail "stats: $(cat "$WORK/move.json")"
pause=$(move_field 1/xvda 'm["pause_ms"]')
# A generous sanity bound, no target: the bounded drain is 5 s.
python3 -c "import sys; sys.exit(not 0 < float('$pause') < 5000)" ||
	fail "a pause of $pause ms cannot be right"
$CTL list >"$WORK/list.txt" || fail "list"
grep -q "^1/51712 (.*) moved to $DST after [0-9]* pass[es]*: the guest paused" \
	"$WORK/list.txt" || fail "list printed: $(cat "$WORK/list.txt")"
grep -q " $DST\$" "$WORK/list.txt" || fail "list names not $DST: $(cat "$WORK/list.txt")"
$CTL --json list >"$WORK/list.json" || fail "list"
[ "$(json "$WORK/list.json" 'd["devices"][0]["move"]["phase"]')" = switched ] ||
	fail "list --json: $(cat "$WORK/list.json")"
$CTL metrics >"$WORK/metrics.prom" || fail "metrics"
grep -q '^blkbackd_move_copied_bytes{.*domid="1".*} [0-9]*$' "$WORK/metrics.prom" ||
	fail "metrics: $(grep move "$WORK/metrics.prom")"
grep -q '^blkbackd_move_remaining_bytes{.*domid="1".*} 0$' "$WORK/metrics.prom" ||
	fail "metrics: $(grep move "$WORK/metrics.prom")"
grep -q '^blkbackd_move_switch_pause_seconds{.*domid="1".*} 0\.[0-9e-]*$' \
	"$WORK/metrics.prom" || fail "metrics: $(grep move "$WORK/metrics.prom")"
$CTL stats 1/xvda >"$WORK/stats.txt" || fail "stats"
grep -q "^  moved to $DST" "$WORK/stats.txt" ||
	fail "stats printed: $(cat "$WORK/stats.txt")"
grep -q "moving $SRC to $DST at up to 32.0 MiB/s" "$WORK/blkbackd.log" ||
	fail "the journal has no start of the move"
grep -q "move to $DST: pass 1 ended" "$WORK/blkbackd.log" ||
	fail "the journal has no pass of the move"
grep -q "moved $SRC to $DST: the guest paused [0-9.]* ms for the switch" \
	"$WORK/blkbackd.log" || fail "the journal has no switch"
[ -f "$WORK/state/moves/1-51712" ] ||
	fail "no record of the switch, for a restart to find $DST"

# The disk moves on, the guest still writing; the record follows it.
$CTL move --wait 1/xvda "$DST2" >"$WORK/move2.txt" 2>&1 ||
	fail "a second move: $(cat "$WORK/move2.txt")"
sleep 0.3
numbered_stop
[ "$(moved_to "$DST")" = "$DST2" ] ||
	fail "$DST is not marked as moved to $DST2: '$(moved_to "$DST")'"
daemon_has_open "$DST" && fail "the daemon still has $DST open"
[ -f "$WORK/state/moves/1-51712" ] || fail "no record of the second switch"

# Every acknowledged write is in the last image; the first one, copied
# without its mark, misses those made after its switch. The disk gone,
# so is its record.
detach 1
files_gone "$WORK/state/moves/1-51712" || fail "a detached disk's record stayed"
cp "$SRC" "$DIR/old-copy.img" || fail "cp"
writes_in 1 11 "$DST2"
read_back 12 "$DIR/old-copy.img"
if all_writes_in "$WORK/front-1.out" "$WORK/front-12.out" \
	"$WORK/check-old.out"; then
	fail "the checker found every write in the old image too: $(cat "$WORK/check-old.out")"
fi
grep -q ": lost" "$WORK/check-old.out" ||
	fail "the old image: $(cat "$WORK/check-old.out")"

# The source is refused, with the fix.
"$TOOLSTACK" create 2 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 2"
attach_must_fail 2 "$SRC" xvda "was moved to $DST"
grep -q "setfattr -x user.blkbackd.moved-to $SRC" "$WORK/attach-2-xvda.out" ||
	fail "the refusal gives no fix: $(cat "$WORK/attach-2-xvda.out")"
assert_daemon_alive
note "the switch paused the guest $pause ms"
exit 0

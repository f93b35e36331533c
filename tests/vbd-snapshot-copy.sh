#!/bin/sh
# Snapshots by copy (blkbackctl snapshot --copy), in a directory of the
# test's own (no reflink needed), while a guest writes numbered pages at
# depth 8 throughout. While it runs, list and stats show the copy as a
# move that copies, and its record says copying. The first copy, read
# back through another guest after a second copy to its DEST was refused,
# holds every write the writer saw answered before its last pause and none
# it sent after the device had drained (tests/snapshot-check.py, with the
# pause's times from the reply as a reflink snapshot's); the writer sees
# no error. Afterwards the disk is
# still on its image, which holds every write (the source is served, not
# switched), unmarked; no record is left; a copy to an existing DEST is
# refused and leaves it as it was. blkbackctl prints the pause and the
# bytes copied; the journal says it. A daemon killed during a copy: the
# next one removes the unfinished copy and its record, and the guest,
# paused meanwhile, sees no error.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
. "$top_srcdir/tests/lib-move.sh"
requires python3
xensim_setup
DIR=$WORK/images
mkdir -p "$DIR" || hard_error "mkdir $DIR"
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
CHECK="python3 $top_srcdir/tests/snapshot-check.py"
SRC=$DIR/src.img
COPY1=$DIR/copy1.img
COPY2=$DIR/copy2.img
COPY3=$DIR/copy3.img
RECORD=$WORK/state/moves/1-51712

truncate -s 64M "$SRC" || fail "cannot make the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
attach 1 xvda "$SRC"
numbered_start 1
sleep 0.5

# At 32 MiB/s the first pass over 64 MiB takes about 2 s, the guest
# writing throughout: long enough to see the copy under way.
$CTL --json snapshot --copy --bw 32M 1/xvda "$COPY1" >"$WORK/copy1.json" \
	2>"$WORK/copy1.err" &
copy_pid=$!
n=0
until [ "$(move_field 1/xvda 'm and m["phase"]' 2>/dev/null)" = copying ]; do
	n=$((n + 1))
	[ "$n" -lt 100 ] || fail "stats never showed the copy: $(cat "$WORK/move.json")"
	sleep 0.05
done
[ "$(move_field 1/xvda 'm["copy"]')" = True ] ||
	fail "stats: not a copy: $(cat "$WORK/move.json")"
grep -q "^phase copying\$" "$RECORD" ||
	fail "the copy's record: $(cat "$RECORD" 2>&1)"
$CTL list >"$WORK/list-running.txt" || fail "list"
grep -q "^1/51712 (.*) copying (snapshot --copy) to $COPY1: copying, " \
	"$WORK/list-running.txt" ||
	fail "list printed: $(cat "$WORK/list-running.txt")"
wait "$copy_pid" || fail "snapshot --copy: $(cat "$WORK/copy1.err")"

# A copy to an existing DEST is refused; the guest still writing.
if $CTL snapshot --copy 1/xvda "$COPY1" >"$WORK/again.txt" 2>&1; then
	fail "a second copy to $COPY1 was taken: $(cat "$WORK/again.txt")"
fi
grep -qi "exists" "$WORK/again.txt" ||
	fail "the refusal does not say DEST exists: $(cat "$WORK/again.txt")"

# As an operator sees it.
sleep 0.3
$CTL snapshot --copy 1/xvda "$COPY2" >"$WORK/copy2.txt" 2>&1 ||
	fail "snapshot --copy 2: $(cat "$WORK/copy2.txt")"
grep -q "^vbd 1/51712: snapshot $COPY2 taken; the guest paused [0-9.]* ms (draining [0-9.]*, copying [0-9.]*, resuming [0-9.]*); [0-9.]* MiB copied\$" \
	"$WORK/copy2.txt" || fail "blkbackctl snapshot --copy printed: $(cat "$WORK/copy2.txt")"
# What the daemon says about it; no record is left.
[ ! -e "$RECORD" ] || fail "a finished copy left a record: $(cat "$RECORD")"
[ "$(move_field 1/xvda 'm["phase"]')" = copied ] ||
	fail "stats: $(cat "$WORK/move.json")"
[ "$(move_field 1/xvda 'm["copy"] and m["dirty_bytes"] == 0')" = True ] ||
	fail "stats: $(cat "$WORK/move.json")"
copied=$(json "$WORK/copy1.json" 'd["copied_bytes"]')
[ "$copied" -ge $((64 << 20)) ] ||
	fail "the first copy says it copied $copied bytes, less than the image"
$CTL stats 1/xvda >"$WORK/stats.txt" || fail "stats"
grep -q "^  copied to $COPY2 (snapshot --copy) after [0-9]* pass[es]*, [0-9.]* MiB copied; the disk stays on $SRC\$" \
	"$WORK/stats.txt" || fail "stats printed: $(cat "$WORK/stats.txt")"
[ "$(grep -c "copied $SRC to $DIR/copy[12].img: the guest paused" "$WORK/blkbackd.log")" = 2 ] ||
	fail "the journal does not have a line per copy"

# A daemon killed during a copy: the next one removes the unfinished
# DEST, and serves the guest on with its image. At 4 MiB/s the first
# pass takes 16 s.
$CTL snapshot --copy --bw 4M 1/xvda "$COPY3" >"$WORK/copy3.txt" 2>&1 &
copy_pid=$!
n=0
until grep -q "^dest $COPY3\$" "$RECORD" 2>/dev/null &&
	[ "$(move_field 1/xvda 'm["phase"]' 2>/dev/null)" = copying ]; do
	n=$((n + 1))
	[ "$n" -lt 100 ] || fail "the third copy never ran: $(cat "$WORK/copy3.txt")"
	sleep 0.05
done
[ -e "$COPY3" ] || fail "a running copy has no $COPY3"
restart_killed
wait "$copy_pid" && fail "snapshot --copy answered 0 from a killed daemon"
files_gone "$COPY3" "$RECORD" ||
	fail "the restart left the unfinished copy or its record: $(ls "$DIR" "$WORK/state/moves" 2>&1)"
grep -q "move to $COPY3 abandoned by a restart" "$WORK/blkbackd.log" ||
	fail "the journal does not say the copy was abandoned"
# The guest goes on, on its own image.
sleep 0.3
numbered_stop

# Where the disk is: on its image, unmarked.
daemon_has_open "$SRC" || fail "the daemon does not have $SRC open"
for f in "$COPY1" "$COPY2"; do
	daemon_has_open "$f" && fail "the daemon still has $f open"
done
[ -z "$(moved_to "$SRC")" ] || fail "$SRC is marked: '$(moved_to "$SRC")'"

# The first copy holds exactly the writes of its last pause; the source
# all of them.
detach 1
read_back 11 "$COPY1"
$CHECK "$WORK/front-1.out" "$WORK/copy1.json" "$WORK/front-11.out" \
	>"$WORK/check1.out" || fail "copy 1: $(cat "$WORK/check1.out")"
note "copy 1 (paused $(pause_ms "$WORK/copy1.json") ms, $copied bytes copied): $(cat "$WORK/check1.out")"
writes_in 1 13 "$SRC"
assert_daemon_alive
exit 0

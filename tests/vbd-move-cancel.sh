#!/bin/sh
# Live moves that are cancelled, end early, or cannot begin. Each refusal
# names the disk and what is wrong, and leaves nothing behind. A cancel
# (blkbackctl move --cancel) while the guest writes ends the move: DEST
# and the move's record are gone, the source carries no mark, the daemon
# no longer has DEST open, move --wait of it exits 1 saying so, and the
# source holds every write the guest saw answered. A second move while
# one runs is refused; a cancel with none under way too. A guest whose
# disk is detached during its move ends it the same way. Refused: a disk
# that does not exist, one whose guest is not connected, a read-only one,
# a DEST that exists (left as it was), a relative path is the caller's.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
. "$top_srcdir/tests/lib-move.sh"
requires python3
xensim_setup
DIR=$WORK/images
xattr_dir "$DIR"
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
RECORDS=$WORK/state/moves

# refused DISK DEST REGEX WHAT: the move is not started, saying REGEX.
refused() {
	if $CTL move "$1" "$2" >"$WORK/refused.out" 2>&1; then
		fail "$4: a move started: $(cat "$WORK/refused.out")"
	fi
	grep -q -- "$3" "$WORK/refused.out" ||
		fail "$4: blkbackctl said: $(cat "$WORK/refused.out")"
}

# ---- a cancel while the guest writes ----
truncate -s 64M "$DIR/d1.img" || fail "cannot make the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
attach 1 xvda "$DIR/d1.img"
numbered_start 1
# 1 MiB/s: 64 s to copy, far longer than the test waits.
$CTL move --wait --bw 1M 1/xvda "$DIR/new1.img" >"$WORK/wait.out" 2>&1 &
waiter=$!
track_pid $waiter
n=50
while [ "$(move_field 1/xvda 'm and m["phase"]' 2>/dev/null)" != copying ] &&
	[ $n -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
[ "$(move_field 1/xvda 'm["phase"]')" = copying ] ||
	fail "the move did not start: $(cat "$WORK/move.json")"
[ -f "$DIR/new1.img" ] || fail "the move did not create its DEST"
[ -f "$RECORDS/1-51712" ] || fail "the move has no record"
daemon_has_open "$DIR/new1.img" || fail "the daemon does not have DEST open"
# Its progress, as an operator sees it.
$CTL list >"$WORK/list.txt" || fail "list"
grep -q "^1/51712 (.*) moving to $DIR/new1.img: copying, [0-9.]* of 64.0 MiB copied" \
	"$WORK/list.txt" || fail "list printed: $(cat "$WORK/list.txt")"
$CTL metrics >"$WORK/metrics.prom" || fail "metrics"
grep -q '^blkbackd_move_remaining_bytes{.*domid="1".*} [1-9][0-9]*$' \
	"$WORK/metrics.prom" || fail "metrics: $(grep move "$WORK/metrics.prom")"
grep -q '^blkbackd_move_switch_pause_seconds' "$WORK/metrics.prom" &&
	fail "metrics: a switch pause before the switch"
refused 1/xvda "$DIR/other.img" "vbd 1/51712: a move of it is under way" \
	"a second move"
[ ! -e "$DIR/other.img" ] || fail "a refused move left $DIR/other.img"
sleep 0.5
$CTL move --cancel 1/xvda >"$WORK/cancel.out" 2>&1 ||
	fail "move --cancel: $(cat "$WORK/cancel.out")"
wait "$waiter"
rc=$?
[ "$rc" = 1 ] || fail "move --wait of a cancelled move exited $rc"
grep -q "^move to $DIR/new1.img cancelled; the disk stays on $DIR/d1.img" \
	"$WORK/wait.out" || fail "move --wait printed: $(cat "$WORK/wait.out")"
[ "$(move_field 1/xvda 'm["phase"]')" = cancelled ] ||
	fail "stats after the cancel: $(cat "$WORK/move.json")"
[ ! -e "$DIR/new1.img" ] || fail "a cancelled move left its DEST"
[ ! -e "$RECORDS/1-51712" ] || fail "a cancelled move left its record"
[ -z "$(moved_to "$DIR/d1.img")" ] || fail "a cancelled move marked its source"
daemon_has_open "$DIR/new1.img" && fail "the daemon has DEST open still"
grep -q "move to $DIR/new1.img cancelled after [0-9]* passes; the guest stays on $DIR/d1.img" \
	"$WORK/blkbackd.log" || fail "the journal does not say it was cancelled"
$CTL move --cancel 1/xvda >"$WORK/cancel2.out" 2>&1 &&
	fail "a cancel with no move under way succeeded"
grep -q "no move of it is under way" "$WORK/cancel2.out" ||
	fail "a second cancel: $(cat "$WORK/cancel2.out")"
sleep 0.3
numbered_stop
detach 1
writes_in 1 11 "$DIR/d1.img"

# ---- the disk is detached during its move ----
truncate -s 64M "$DIR/d2.img" || fail "cannot make the image"
"$TOOLSTACK" create 2 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 2"
attach 2 xvda "$DIR/d2.img"
hold_start 2 --hold
hold_wait CONNECTED 30
$CTL move --bw 1M 2/xvda "$DIR/new2.img" >"$WORK/move2.out" 2>&1 ||
	fail "move: $(cat "$WORK/move2.out")"
grep -q "^move started" "$WORK/move2.out" ||
	fail "move printed: $(cat "$WORK/move2.out")"
[ -f "$RECORDS/2-51712" ] || fail "the move has no record"
hold_end
detach 2
files_gone "$DIR/new2.img" "$RECORDS/2-51712"
[ ! -e "$DIR/new2.img" ] || fail "a detached disk's move left its DEST"
[ ! -e "$RECORDS/2-51712" ] || fail "a detached disk's move left its record"
[ -z "$(moved_to "$DIR/d2.img")" ] || fail "an unfinished move marked its source"

# ---- what cannot be moved ----
refused 9/xvda "$DIR/x.img" "no such device" "no such disk"
truncate -s 32M "$DIR/d3.img" || fail "cannot make the image"
"$TOOLSTACK" create 3 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 3"
attach 3 xvda "$DIR/d3.img"
wait_node "$(be_path 3)/state" 2 10 || fail "dom 3 not offered"
refused 3/xvda "$DIR/x.img" "vbd 3/51712: no guest is connected to it" \
	"not connected"
truncate -s 32M "$DIR/d4.img" || fail "cannot make the image"
"$TOOLSTACK" create 4 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 4"
attach 4 xvda "$DIR/d4.img" --mode r
hold_start 4 --hold
hold_wait CONNECTED 30
refused 4/xvda "$DIR/x.img" "vbd 4/51712: it is read-only" "read-only"
hold_end
truncate -s 32M "$DIR/d5.img" || fail "cannot make the image"
"$TOOLSTACK" create 5 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 5"
attach 5 xvda "$DIR/d5.img"
hold_start 5 --hold
hold_wait CONNECTED 30
echo "keep me" >"$DIR/exists.img"
refused 5/xvda "$DIR/exists.img" "cannot create $DIR/exists.img" "DEST exists"
[ "$(cat "$DIR/exists.img")" = "keep me" ] || fail "a refused move changed DEST"
[ "$(move_field 5/xvda 'm["phase"]')" = failed ] ||
	fail "stats after a refused DEST: $(cat "$WORK/move.json")"
[ ! -e "$RECORDS/5-51712" ] || fail "a refused move left its record"
# A relative DEST is the caller's.
(cd "$DIR" && $CTL move 5/xvda rel.img >"$WORK/rel.out" 2>&1) ||
	fail "a relative DEST: $(cat "$WORK/rel.out")"
[ -f "$DIR/rel.img" ] || fail "a relative DEST is not beside the caller"
$CTL move --cancel 5/xvda >/dev/null 2>&1
hold_end
assert_daemon_alive
exit 0

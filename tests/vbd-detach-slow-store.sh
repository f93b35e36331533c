#!/bin/sh
# A guest that dies with deep queued I/O on storage that does not answer
# (an NBD export behind nbdkit's pause filter) must not hold up anyone
# else: while its ring still waits for that I/O, another guest attaches,
# connects, does verified I/O and detaches, well inside libxl's 10 s
# deadlines. Once the storage answers, the dead guest's ring is closed
# all the same: every grant unmapped, every port unbound, the backend at
# Closed. And a daemon stopped while a ring waits so finishes that ring
# before it exits (a pause for its guest).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-nbd.sh"
xensim_setup
requires nbdkit python3
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

# How long the other guest's whole attach, I/O and detach may take. The
# daemon's main thread blocked on the dead guest's ring would make the
# attach alone wait for the toolstack's 10 s timeout.
BOUND_MS=6000

nbdkit --foreground --unix "$WORK/slow.sock" --filter=pause memory 16M \
	pause-control="$WORK/pause.sock" >"$WORK/nbdkit.log" 2>&1 &
NBDKIT_PID=$!
track_pid $NBDKIT_PID
# A paused nbdkit outlives SIGTERM, and a daemon waiting for it would
# outlive the test: at exit it dies first, failing what it holds.
trap 'rc=$?; kill -9 "$NBDKIT_PID" 2>/dev/null; (exit $rc); cleanup' EXIT
n=50
until [ -S "$WORK/slow.sock" ] && [ -S "$WORK/pause.sock" ]; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "nbdkit did not start: $(cat "$WORK/nbdkit.log")"
	sleep 0.1
done

# store p|r: pause or resume the export.
store() {
	nbdkit_pause "$WORK/pause.sock" "$1" || fail "nbdkit did not $1"
}

# in_flight DOMID: requests the daemon took off that guest's ring and has
# not answered.
in_flight() {
	$CTL --json stats "$1/51712" 2>/dev/null | python3 -c "import json,sys
print(json.load(sys.stdin)['devices'][0]['in_flight'])" 2>/dev/null ||
		echo 0
}

# stuck_guest DOMID: a guest on the paused export with requests in flight
# in the daemon, whose frontend is then killed.
stuck_guest() {
	guest "$1" 16M
	attach "$1" xvda "nbd+unix:///?socket=$WORK/slow.sock"
	store p
	blkfront_bg "$1" --depth 32 --bs 65536 --seconds 60 --timeout-ms 60000
	n=100
	while [ "$(in_flight "$1")" -lt 16 ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "dom $1: no I/O in flight: $(cat \
			"$WORK/front-$1.out")"
		sleep 0.1
	done
	STUCK=$(in_flight "$1")
	note "dom $1: $STUCK requests in flight on the paused store"
	kill -9 "$BG_PID"
	wait "$BG_PID" 2>/dev/null
}

# ---- a dead guest's ring waits for its storage; nobody else does ----
stuck_guest 1
"$TOOLSTACK" destroy 1 >>"$WORK/toolstack.log" 2>&1 ||
	fail "destroy dom 1 failed"
sleep 0.5

start=$(now_ms)
guest 2 4M
# shellcheck disable=SC2086 # SCRIPT_OPT is empty or one option
"$TOOLSTACK" attach 2 "$WORK/d2.img" xvda $SCRIPT_OPT \
	>>"$WORK/toolstack.log" 2>&1 ||
	fail "dom 2 could not attach while dom 1's ring waited for its" \
		"storage: the daemon's main thread was held up"
blkfront 2 --ops 200 --depth 8 --verify >/dev/null
detach 2
took=$(($(now_ms) - start))
note "dom 2: attached, verified and detached in $took ms while dom 1's" \
	"ring waited"
[ "$took" -lt "$BOUND_MS" ] ||
	fail "dom 2's attach and detach took $took ms (bound $BOUND_MS)"

# Still waiting for the store: not one of its answers was dropped.
[ "$(mapped_of 1)" -gt 0 ] ||
	fail "dom 1's ring was released before its I/O completed"
grep -q "vbd 1/51712: disconnected" "$WORK/blkbackd.log" &&
	fail "dom 1 disconnected before its I/O completed"

store r
wait_released 1 10 || fail "dom 1 not released after the store answered:" \
	"$(stat_of 1)"
wait_node "$(be_path 1)/state" 6 10 ||
	fail "dom 1's backend is not Closed: $(xs_read "$(be_path 1)/state")"
wait_file_line "$WORK/blkbackd.log" "vbd 1/51712: disconnected" 5 ||
	fail "the daemon did not log dom 1's disconnect"
# Its counters are logged as the rings closed: with the stuck requests.
answered=$(sed -n 's/.*vbd 1\/51712: read \([0-9]*\) .*, write \([0-9]*\) .*/\1 \2/p' \
	"$WORK/blkbackd.log" | awk '{ n += $1 + $2 } END { print n + 0 }')
[ "$answered" -ge "$STUCK" ] ||
	fail "dom 1's counters count $answered reads and writes, not the" \
		"$STUCK that were stuck"
assert_still_serving 3

# ---- stopping waits for a ring on the paused store, then pauses it ----
stuck_guest 4
kill -TERM "$DAEMON_PID"
sleep 1
daemon_alive || fail "the daemon exited with dom 4's I/O still in flight"
store r
n=100
while daemon_alive && [ "$n" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
daemon_alive && fail "the daemon did not stop once the store answered"
wait "$DAEMON_PID" || fail "the daemon's stop failed"
DAEMON_PID=
[ "$(mapped_of 4)" = 0 ] || fail "dom 4's grants still mapped: $(stat_of 4)"
finish

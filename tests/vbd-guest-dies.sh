#!/bin/sh
# A guest that dies while connected with I/O in flight is cleaned up by the
# daemon (@releaseDomain): no grant stays mapped, no port bound, and the
# daemon keeps serving the other guests.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

guest 1 64M
guest 2 32M
attach 1
attach 2

"$BLKFRONT" --domid 1 --seconds 60 --depth 32 --bs 45056 \
	>"$WORK/front-1.out" 2>&1 &
victim=$!
BG_PIDS="$BG_PIDS $victim"
"$BLKFRONT" --domid 2 --seconds 6 --depth 8 --verify \
	>"$WORK/front-2.out" 2>&1 &
survivor=$!
BG_PIDS="$BG_PIDS $survivor"

wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"
sleep 1
case $(stat_of 1) in
*bound_ports=[1-9]*) ;;
*) fail "guest 1 not connected: $(stat_of 1)" ;;
esac
"$TOOLSTACK" destroy 1 >>"$WORK/toolstack.log" 2>&1 ||
	fail "destroy dom 1 failed"
wait_released 1 5 ||
	fail "daemon still holds dom 1 resources 5 s after its death: $(stat_of 1)"
kill "$victim" 2>/dev/null
assert_daemon_alive

wait "$survivor" || {
	cat "$WORK/front-2.out" >&2
	fail "the other guest failed while dom 1 died"
}
grep -q "verified OK" "$WORK/front-2.out" || fail "guest 2 not verified"

# A guest that arrives afterwards is served too.
guest 3 8M
attach 3
blkfront 3 --ops 300 --verify >/dev/null
assert_daemon_alive
exit 0

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

blkfront_bg 1 --seconds 60 --depth 32 --bs 45056
victim=$BG_PID
blkfront_bg 2 --seconds 6 --depth 8 --verify
survivor=$BG_PID

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

blkfront_wait 2 "$survivor" "the other guest failed while dom 1 died"
expect_verified "$WORK/front-2.out" "guest 2 while dom 1 died"

# A guest that arrives afterwards is served too.
assert_still_serving 3 8M
exit 0

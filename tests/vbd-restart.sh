#!/bin/sh
# The daemon is killed (SIGKILL, no chance to clean up) while a guest has
# I/O in flight, and started again: it finds the connected device, maps the
# ring again, serves the requests left unanswered and everything after
# them, and the guest's verified workload finishes without an error.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

guest 1 64M
attach 1

blkfront_bg 1 --seconds 8 --depth 16 --verify
front=$BG_PID

wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"
sleep 2
stop_daemon KILL
note "daemon killed with the guest's I/O in flight"
sleep 0.5
start_daemon
wait_file_line "$WORK/blkbackd.log" "vbd 1/51712: connected" 10 ||
	fail "the restarted daemon did not reconnect the running guest"

blkfront_wait 1 "$front" "the guest's workload failed across the restart"
expect_verified "$WORK/front-1.out" "guest 1 across the restart"
[ "$(grep -c 'vbd 1/51712: connected' "$WORK/blkbackd.log")" -ge 2 ] ||
	fail "expected a connect by each daemon instance"
assert_daemon_alive
exit 0

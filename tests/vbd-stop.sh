#!/bin/sh
# Stopping the daemon (SIGTERM, as systemd does) is a pause for running
# guests, not an error. Requests still waiting for bounce buffers when the
# daemon stops are left on the ring, unanswered, and the next daemon
# serves them: the guest's verified workload sees no error response.
#
# The guest is made to queue more than its connection's bounce buffers
# hold (copy mode, a one-page ring full of 1 MiB indirect requests), so
# that each stop finds requests parked.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

guest 1 64M 40
attach 1

"$BLKFRONT" --domid 1 --seconds 10 --depth 27 --bs 1048576 --verify \
	--ring-order 0 --queues 1 --indirect 256 --persistent no \
	>"$WORK/front-1.out" 2>&1 &
front=$!
track_pid $front

wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"
for round in 1 2 3 4; do
	sleep 1
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	note "round $round: daemon stopped with the guest's I/O queued"
	start_daemon
	tries=0
	until [ "$(grep -c 'vbd 1/51712: connected' "$WORK/blkbackd.log")" \
		-gt "$round" ]; do
		tries=$((tries + 1))
		[ $tries -lt 100 ] ||
			fail "the restarted daemon did not reconnect the guest"
		sleep 0.1
	done
done

wait "$front" || {
	cat "$WORK/front-1.out" >&2
	fail "the guest saw an error across a daemon stop"
}
expect_verified "$WORK/front-1.out" "guest 1 across the stops"
# The stops must have found parked requests, or this proved nothing.
grep -q "[1-9][0-9]* waited for buffers" "$WORK/blkbackd.log" ||
	fail "no request waited for buffers: the test did not exercise parking"
assert_daemon_alive
exit 0

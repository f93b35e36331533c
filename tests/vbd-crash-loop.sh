#!/bin/sh
# kill -9 in a loop. A guest runs one long verified workload of writes and
# reads with a flush every 8 writes, and the daemon is killed at a random
# moment, restarted, and killed again, $CRASH_ITERATIONS times (default
# 30; CI runs 100). The guest must ride through every crash: its
# verification (every block it reads back holds what it last wrote) passes
# at the end. Prints the longest time a restarted daemon took to reconnect
# the guest.
. "$top_srcdir/tests/lib.sh"
xensim_setup
iterations=${CRASH_ITERATIONS:-30}
start_daemon

guest 1 64M
attach 1
# A second of workload per crash: enough on a slow machine. One queue: the
# simulated guest's queue threads share one event-channel handle and can
# take each other's wake-ups, which turns into 10 s stalls per request (a
# simulator race, not the daemon's) that a long run hits.
seconds=$((iterations + 10))
started=$(date +%s)
"$BLKFRONT" --domid 1 --seconds $seconds --depth 16 --verify \
	--flush-every 8 --queues 1 >"$WORK/front-1.out" 2>&1 &
front=$!
track_pid $front
wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"

now_ms() { date +%s%3N; }
longest=0
i=0
while [ $i -lt "$iterations" ]; do
	i=$((i + 1))
	# 50 to 549 ms of I/O, then the kill.
	sleep "0.$(printf '%03d' $((50 + $(od -An -N2 -tu2 /dev/urandom) % 500)))"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	pid_alive "$front" || {
		cat "$WORK/front-1.out" >&2
		fail "crash $i: the guest failed"
	}
	connects=$(grep -c 'vbd 1/51712: connected' "$WORK/blkbackd.log")
	t0=$(now_ms)
	start_daemon
	n=0
	until [ "$(grep -c 'vbd 1/51712: connected' "$WORK/blkbackd.log")" \
		-gt "$connects" ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "crash $i: no reconnect within 30 s"
		sleep 0.1
	done
	took=$(($(now_ms) - t0))
	[ "$took" -gt "$longest" ] && longest=$took
done
note "$iterations kills; the longest reconnect took $longest ms"

# The guest ends its workload by itself; one that does not within a minute
# of its time is stuck: show where, instead of hanging the suite.
while pid_alive "$front"; do
	if [ "$(date +%s)" -gt $((started + seconds + 60)) ]; then
		gdb -batch -p "$front" -ex 'thread apply all bt' >&2 2>&1
		cat "$WORK/front-1.out" >&2
		fail "the guest did not finish its workload"
	fi
	sleep 0.1
done
wait "$front" || {
	cat "$WORK/front-1.out" >&2
	fail "the guest's workload failed across $iterations crashes"
}
expect_verified "$WORK/front-1.out" "the guest after $iterations crashes"
! grep "without their event" "$WORK/front-1.out" >&2 ||
	fail "the guest missed an event in $iterations crashes"
assert_daemon_alive
exit 0

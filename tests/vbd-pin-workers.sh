#!/bin/sh
# Worker threads are named blkbackd-wN, and --pin-workers runs worker N on
# the N-th CPU the daemon may use (cpu-affinity.h). Pinned workers serve
# verified I/O while rings move between them. The simulator's event
# channels have no interrupts, so the routing half is checked under real
# Xen (tests/e2e, the concurrency part with BLKBACKD_E2E_CONC_VARIANT).
. "$top_srcdir/tests/lib.sh"
requires python3
xensim_setup

# worker_cpus: "NAME CPUS" for each of the daemon's worker threads.
worker_cpus() {
	for t in /proc/"$DAEMON_PID"/task/*; do
		name=$(cat "$t/comm" 2>/dev/null) || continue
		case $name in
		blkbackd-w*)
			echo "$name $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status")"
			;;
		esac
	done | sort
}

allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)

start_daemon --workers 2
assert_daemon_alive
got=$(worker_cpus)
note "unpinned: $(echo "$got" | tr '\n' ';')"
[ "$(echo "$got" | cut -d' ' -f1 | tr '\n' ' ')" = "blkbackd-w0 blkbackd-w1 " ] ||
	fail "worker threads are not named blkbackd-w0 and blkbackd-w1: $got"
echo "$got" | while read -r name cpus; do
	[ "$cpus" = "$allowed" ] ||
		fail "$name runs on $cpus unpinned, the daemon may use $allowed"
done || exit 1
stop_daemon

# The N-th CPU of the allowed set, counting round, as the daemon picks.
nth_cpu() { # N
	python3 -c '
import os, sys
cpus = sorted(os.sched_getaffinity(0))
print(cpus[int(sys.argv[1]) % len(cpus)])' "$1"
}

start_daemon --workers 2 --max-queues 1 --rebalance-ms 100 --pin-workers
assert_daemon_alive
got=$(worker_cpus)
note "pinned: $(echo "$got" | tr '\n' ';')"
for i in 0 1; do
	want=$(nth_cpu $i)
	echo "$got" | grep -qx "blkbackd-w$i $want" ||
		fail "worker $i is not pinned to CPU $want: $got"
	grep -q "worker $i runs on CPU $want" "$WORK/blkbackd.log" ||
		fail "worker $i did not log its CPU"
done

fronts=
for d in 1 2 3; do
	guest $d 32M
	attach $d
	blkfront_bg $d --seconds 3 --depth 8 --verify
	fronts="$fronts $BG_PID"
done
# shellcheck disable=SC2086 # a list of pids
wait_fronts "a guest's workload failed on pinned workers" $fronts
assert_verified 1 2 3
for d in 1 2 3; do
	detach $d
done
note "$(grep -c 'moves from worker' "$WORK/blkbackd.log") ring moves"
# No event channel here has an interrupt to route, so nothing failed to.
if grep -q 'cannot route\|cannot pin' "$WORK/blkbackd.log"; then
	fail "$(grep -m1 'cannot route\|cannot pin' "$WORK/blkbackd.log")"
fi
assert_daemon_alive
stop_daemon
finish

#!/bin/sh
# The restart promise at every point of a pass. A guest runs a verified
# workload with flushes; the daemon is stopped under gdb at a chosen point
# of its pass and ended there, by SIGKILL (no clean-up at all) or by
# SIGTERM (a clean stop); a second daemon takes over. Every time, the
# guest's workload must finish without an I/O error or a bad answer.
#
# The points: a request just consumed (io_consume), I/O about to be queued
# (io_start_all), completions about to be answered (io_finish_done), an
# answer being written into the ring (blk_ring_put_response), answers
# written and not yet published (blk_ring_push_responses), published with
# the journal not yet cleared (blk_journal_done), and published to a guest
# that asked for an event, which is not yet sent (xenevtchn_notify: the
# successor must send it, or a real blkfront waits for ever; the simulated
# one looks again after 10 s and says so), and the simulator's event half
# sent (sim_deliver: the port masked for its delivery, the port number not
# yet queued; Xen's send is one hypercall, so xensim must finish it for
# the dead sender).
. "$top_srcdir/tests/lib.sh"
requires gdb
xensim_setup

POINTS="io_consume io_start_all io_finish_done blk_ring_put_response
blk_ring_push_responses blk_journal_done xenevtchn_notify sim_deliver"

# crash_at POINT SIGNAL: run the daemon under gdb until the 300th time it
# reaches POINT, then end it with SIGNAL (KILL or TERM).
crash_at() {
	case $2 in
	KILL) end="kill" ;;
	TERM) end="call (int)kill((int)getpid(), 15)
continue" ;;
	esac
	cat >"$WORK/gdb.cmd" <<EOC
set pagination off
set confirm off
set breakpoint pending on
handle SIGTERM nostop noprint pass
set \$n = 0
break $1 if (\$n = \$n + 1) > 300
run
delete
bt 1
$end
EOC
	# LeakSanitizer cannot run under ptrace: no leak check for this one.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		gdb -batch -nx -x "$WORK/gdb.cmd" --args "$BLKBACKD" \
		--log-level debug --state-dir "$WORK/state" \
		>"$WORK/gdb.log" 2>>"$WORK/blkbackd.log" &
	gdb_pid=$!
}

d=0
for point in $POINTS; do
	for sig in KILL TERM; do
		d=$((d + 1))
		crash_at "$point" "$sig"
		guest $d 32M
		attach $d
		"$BLKFRONT" --domid $d --seconds 4 --depth 16 --verify \
			--flush-every 8 --queues 1 \
			>"$WORK/front-$d.out" 2>&1 &
		front=$!
		wait "$gdb_pid"
		grep -qE "hit Breakpoint 1(\.[0-9]+)?, $point " "$WORK/gdb.log" || {
			cat "$WORK/gdb.log" >&2
			fail "$point/$sig: gdb never stopped the daemon there"
		}
		pid_alive "$front" ||
			fail "$point/$sig: the guest ended before the crash"
		start_daemon
		wait "$front" || {
			cat "$WORK/front-$d.out" >&2
			fail "$point/$sig: the guest failed across the crash"
		}
		expect_verified "$WORK/front-$d.out" "$point/$sig: guest $d"
		! grep "without their event" "$WORK/front-$d.out" >&2 ||
			fail "$point/$sig: the guest missed an event"
		note "$point/$sig: the guest rode through"
		kill "$DAEMON_PID"
		wait "$DAEMON_PID" 2>/dev/null
		DAEMON_PID=
	done
done
exit 0

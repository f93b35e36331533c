# What the control-*.sh tests share (sourced after tests/lib.sh): a
# control client misbehaves while four guests do verified I/O, and the
# daemon must not notice beyond that client. Issue 29's targets, for each
# attack: no main-loop stall over 100 ms (tests/stall-probe.py), no error
# in any other guest, a new guest attaches in its usual time, SIGTERM
# exits within 5 s.

CLIENT="python3 $top_srcdir/tests/control-client.py"
SOCK=$WORK/state/control

# timed_attach DOMID: attach a new 4M guest DOMID; ATTACH_MS, how long.
timed_attach() {
	guest "$1" 4M
	ta_t0=$(now_ms)
	attach "$1"
	ATTACH_MS=$(($(now_ms) - ta_t0))
}

# control_setup SECONDS [DAEMON OPTIONS]: a simulated host and the daemon;
# USUAL_MS, how long a guest's attach takes when nothing happens; guests
# 1-4 doing verified I/O for SECONDS in the background (FRONT_PIDS); the
# stall probe running (unless NO_PROBE=1: the test starts it itself).
control_setup() {
	cs_seconds=$1
	shift
	xensim_setup
	start_daemon "$@"
	daemon_alive || fail "blkbackd did not start: $(cat "$WORK/blkbackd.log")"
	SOCK=$WORK/state/control
	timed_attach 20
	USUAL_MS=$ATTACH_MS
	FRONT_PIDS=
	for cs_d in 1 2 3 4; do
		guest "$cs_d" 16M
		attach "$cs_d"
	done
	for cs_d in 1 2 3 4; do
		blkfront_bg "$cs_d" --seconds "$cs_seconds" --depth 4 --verify
		FRONT_PIDS="$FRONT_PIDS $BG_PID"
	done
	[ "${NO_PROBE:-0}" = 1 ] || stall_probe_start
}

# control_new_guest: during the attack, a new guest (dom 21) attaches in
# its usual time (three times USUAL_MS, and a second for a busy machine)
# and does verified I/O.
control_new_guest() {
	timed_attach 21
	[ "$ATTACH_MS" -le $((3 * USUAL_MS + 1000)) ] ||
		fail_later "a new guest's attach took $ATTACH_MS ms" \
			"(usually $USUAL_MS ms)"
	blkfront 21 --ops 200 --verify >/dev/null
}

# control_verdict: no stall over 100 ms, guests 1-4 verified, SIGTERM
# ends the daemon within 5 s. VERDICT: what to finish with.
control_verdict() {
	stall_probe_stop 100
	wait_fronts "a guest failed during the attack" $FRONT_PIDS
	assert_verified 1 2 3 4
	cv_pid=$DAEMON_PID
	kill -TERM "$cv_pid"
	wait_gone "$cv_pid" 5 || fail "SIGTERM: the daemon still runs after 5 s"
	wait "$cv_pid" 2>/dev/null
	DAEMON_PID=
	VERDICT="worst control wait $STALL_WORST_MS ms, a new guest's attach"
	VERDICT="$VERDICT $ATTACH_MS ms (usually $USUAL_MS ms)"
}

# A store that is away (issue 29), sourced after tests/lib.sh once the
# simulated host is set up: four guests on image files doing verified I/O
# meanwhile, a silent NBD server, and the checks each such test makes.

CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

# busy_guests_start SECONDS: guests 1-4, each on an image file of its own,
# each running verified I/O for SECONDS in the background, at up to 2,000
# requests a second: unbounded, four guests keep both CPUs of a small
# test host busy, and the stall probe would measure the scheduler, not
# the main loop.
busy_guests_start() {
	BUSY_PIDS=
	for bgs in 1 2 3 4; do
		guest "$bgs" 32M
		attach "$bgs"
		$CTL limit "$bgs/xvda" --iops 2000 >/dev/null ||
			fail "blkbackctl limit failed"
		blkfront_bg "$bgs" --seconds "$1" --depth 8 --verify
		BUSY_PIDS="$BUSY_PIDS $BG_PID"
	done
	for bgs in 1 2 3 4; do
		wait_file_line "$WORK/front-$bgs.out" "connected" 20 ||
			fail "dom $bgs never connected"
	done
}

# busy_guests_wait: each of the four ran to its end without an error.
busy_guests_wait() {
	# shellcheck disable=SC2086 # a list of pids
	wait_fronts "a guest on an image file failed while a store was away" \
		$BUSY_PIDS
	assert_verified 1 2 3 4
}

# timed_attach DOMID: a new guest on an image file attached (ATTACH_MS:
# how long the toolstack's attach took) and doing verified I/O.
timed_attach() {
	guest "$1" 4M
	ta_start=$(now_ms)
	attach "$1"
	ATTACH_MS=$(($(now_ms) - ta_start))
	blkfront "$1" --ops 300 --verify >/dev/null
}

# assert_usual_attach DOMID BASELINE_MS: a guest attached now takes about
# as long as the one before the store went away: at most three times as
# long, plus 500 ms for a loaded host.
assert_usual_attach() {
	timed_attach "$1"
	note "dom $1 attached in $ATTACH_MS ms (before: $2 ms)"
	[ "$ATTACH_MS" -le $(($2 * 3 + 500)) ] ||
		fail "dom $1's attach took $ATTACH_MS ms, against $2 ms before"
}

# silent_server PATH: a unix socket that accepts every connection and
# never says a word, as an NBD server that hangs would; its pid in
# SILENT_PID.
silent_server() {
	rm -f "$1"
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(64)
held = []
while True:
    held.append(s.accept()[0])
' "$1" 3>&- &
	SILENT_PID=$!
	track_pid $SILENT_PID
	wait_socket "$1" "the silent server"
}

# assert_waits_for_store DOMID TARGET REGEX SECONDS: within SECONDS the
# device's error node says REGEX, the log says it with the device's name,
# and `blkbackctl list` shows the device waiting (not connected, not
# failed) for TARGET, and under its table what it waits for (REGEX).
assert_waits_for_store() {
	aw_be=$(be_path "$1")
	aw_n=$(($4 * 10))
	until xs_read "$aw_be/error" | grep -q -- "$3"; do
		aw_n=$((aw_n - 1))
		[ "$aw_n" -gt 0 ] ||
			fail "dom $1's error node does not say '$3':" \
				"'$(xs_read "$aw_be/error")'"
		sleep 0.1
	done
	note "dom $1: $(xs_read "$aw_be/error")"
	grep -q "vbd $1/51712: cannot reach the store of image" \
		"$WORK/blkbackd.log" || fail "the log does not say why dom $1 waits"
	$CTL --json list >"$WORK/list-$1.json" || fail "blkbackctl list failed"
	aw_state=$(json "$WORK/list-$1.json" \
		"[x['state'] + ' ' + x['image'] for x in d['devices'] if x['domid'] == $1][0]")
	[ "$aw_state" = "waiting $2" ] ||
		fail "list shows dom $1 as '$aw_state', not waiting for $2"
	# And says why, as the error node does, under its table.
	$CTL list >"$WORK/list-$1.txt" || fail "blkbackctl list failed"
	grep "^$1/51712 (.*) waits for .*$3" "$WORK/list-$1.txt" >/dev/null ||
		fail "blkbackctl list does not say why dom $1 waits:" \
			"$(cat "$WORK/list-$1.txt")"
}

# stop_within SECONDS: SIGTERM, and the daemon exits within SECONDS with
# status 0.
stop_within() {
	sw_start=$(now_ms)
	kill -TERM "$DAEMON_PID"
	wait_gone "$DAEMON_PID" "$1" ||
		fail "blkbackd did not exit within $1 s of SIGTERM"
	wait "$DAEMON_PID"
	sw_rc=$?
	DAEMON_PID=
	rm -f "$WORK/state/control"
	[ "$sw_rc" -eq 0 ] || fail "blkbackd exited with $sw_rc after SIGTERM"
	note "SIGTERM: the daemon exited in $(($(now_ms) - sw_start)) ms"
}

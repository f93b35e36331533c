# Bystanders, sourced after tests/lib.sh: four simulated guests running
# verified I/O while a test does something to the daemon that must touch
# no other guest (issue 29's "no shared fate"). Each has its own 16 MiB
# image and runs blkfront --verify for the given time.

BYSTANDERS=
BYSTANDER_PIDS=

# bystanders_start FIRST_DOMID SECONDS: guests FIRST_DOMID..+3, attached
# and connected, each running verified I/O for SECONDS in the background.
bystanders_start() {
	BYSTANDERS="$1 $(($1 + 1)) $(($1 + 2)) $(($1 + 3))"
	BYSTANDER_PIDS=
	for by_d in $BYSTANDERS; do
		guest "$by_d" 16M
		attach "$by_d"
	done
	for by_d in $BYSTANDERS; do
		blkfront_bg "$by_d" --seconds "$2" --depth 4 --verify
		BYSTANDER_PIDS="$BYSTANDER_PIDS $BG_PID"
	done
	for by_d in $BYSTANDERS; do
		wait_node "$(be_path "$by_d")/state" 4 15 ||
			fail "bystander dom $by_d did not connect"
	done
}

# bystanders_wait: every bystander's run must have succeeded and verified.
bystanders_wait() {
	# shellcheck disable=SC2086 # pids, one word each
	wait_fronts "a bystander guest failed" $BYSTANDER_PIDS
	# shellcheck disable=SC2086
	assert_verified $BYSTANDERS
}

# assert_stops_within SECONDS: SIGTERM ends the daemon in time.
assert_stops_within() {
	kill -TERM "$DAEMON_PID" 2>/dev/null
	wait_gone "$DAEMON_PID" "$1" ||
		fail "SIGTERM did not stop the daemon within $1 s"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

# start_daemon_config CONF: the daemon with --config CONF and nothing that
# would win over the file (start_daemon's --log-level would), serving.
start_daemon_config() {
	LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$BLKBACKD" --config "$1" --state-dir "$WORK/state" \
		2>>"$WORK/blkbackd.log" &
	DAEMON_PID=$!
	wait_control
	wait_file_line "$WORK/blkbackd.log" "serving" 10 ||
		fail "the daemon did not start"
}

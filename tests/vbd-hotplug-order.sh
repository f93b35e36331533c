#!/bin/sh
# libxl's hotplug ordering: a disk with a hotplug script does not go to
# Connected (4) before the script has written hotplug-status=connected,
# however early the frontend is ready. The toolstack runs the script late
# (--script-delay-ms, as a slow script or a busy xl would), and a wrapper
# records the backend state the script finds, the one Xen's `block` script
# insists is still 2. Also: a daemon killed and restarted in that window
# still waits; a disk whose toolstack runs no script (no `script` node)
# connects without waiting.
. "$top_srcdir/tests/lib.sh"
xensim_setup
[ -x "$HOTPLUG" ] || skip "no hotplug script at $HOTPLUG"
start_daemon

# A script wrapper that notes the backend state it was run in.
# shellcheck disable=SC2016 # expanded by the wrapper, not here
{
	echo '#!/bin/sh'
	echo '[ "$1" = add ] &&'
	echo "	xenstore-read \"\$XENBUS_PATH/state\" >'$WORK/state-at-add'"
	echo "exec '$HOTPLUG' \"\$@\""
} >"$WORK/slow-hotplug"
chmod +x "$WORK/slow-hotplug"

# slow_attach DOMID DELAY_MS: attach in the background ($ts is its pid),
# and wait for the backend to offer the disk.
slow_attach() {
	"$TOOLSTACK" attach "$1" "$WORK/d$1.img" xvda \
		--script "$WORK/slow-hotplug" --script-delay-ms "$2" \
		>>"$WORK/toolstack.log" 2>&1 &
	ts=$!
	track_pid $ts
	wait_node "$(be_path "$1")/state" 2 10 ||
		fail "dom $1: the backend did not reach InitWait"
}

# front_bg DOMID: a verified workload in the background ($front).
front_bg() {
	"$BLKFRONT" --domid "$1" --ops 200 --verify >"$WORK/front-$1.out" \
		2>&1 &
	front=$!
	track_pid $front
}

# still_waiting DOMID: for 1.5 s by the clock (the scripts run 4 s or more
# after InitWait, room for a loaded host's slow polls), while the script
# has not run yet, the backend stays in InitWait, and the frontend is
# ready and waits for it.
still_waiting() {
	sw_end=$(($(now_ms) + 1500))
	while [ "$(now_ms)" -lt "$sw_end" ]; do
		[ -e "$WORK/state-at-add" ] &&
			fail "dom $1: the script ran too early"
		st=$(xs_read "$(be_path "$1")/state")
		[ "$st" = 2 ] ||
			fail "dom $1: backend in state $st before the hotplug script ran"
		sleep 0.1
	done
	assert_node "$(fe_path "$1")/state" 3
}

# finished DOMID: the script found state 2, the attach and the guest's
# verified workload succeeded.
finished() {
	wait "$ts" || fail "dom $1: attach failed"
	got=$(cat "$WORK/state-at-add")
	[ "$got" = 2 ] ||
		fail "dom $1: the hotplug script ran in backend state $got"
	rm -f "$WORK/state-at-add"
	wait "$front" || {
		cat "$WORK/front-$1.out" >&2
		fail "dom $1: the guest failed"
	}
	expect_verified "$WORK/front-$1.out" "dom $1"
}

note "the frontend is ready 4 s before the script runs"
guest 1 8M
slow_attach 1 4000
front_bg 1
still_waiting 1
finished 1

note "the daemon is restarted while the device waits for its script"
guest 2 8M
slow_attach 2 5000
front_bg 2
still_waiting 2
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
mv "$WORK/blkbackd.log" "$WORK/blkbackd-before-restart.log"
start_daemon
wait_file_line "$WORK/blkbackd.log" "vbd 2/51712: frontend ready, waiting" 5 ||
	fail "the restarted daemon did not pick the device up"
st=$(xs_read "$(be_path 2)/state")
[ "$st" = 2 ] || fail "dom 2: restarted daemon went to state $st"
finished 2

note "no script, no script node: connects at once"
guest 3 8M
"$TOOLSTACK" attach 3 "$WORK/d3.img" xvda --no-script \
	>>"$WORK/toolstack.log" 2>&1 || fail "attach dom 3 failed"
xs_read "$(be_path 3)/script" >/dev/null &&
	fail "a script node without a script"
blkfront 3 --ops 100 --verify >/dev/null

assert_daemon_alive
exit 0

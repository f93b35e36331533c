#!/bin/sh
# A guest's disk on an NBD server that accepts and never answers, attached
# while four guests on image files do verified I/O (issue 29): the open
# runs off the main thread, so the main loop never stalls over 100 ms
# (tests/stall-probe.py), the four finish without an error, a new guest
# on a file attaches in its usual time, the waiting device says why (its
# error node, the log, `blkbackctl list`), and SIGTERM exits within 5 s
# with the open still under way.
. "$top_srcdir/tests/lib.sh"
xensim_setup
requires python3
. "$top_srcdir/tests/lib-store-away.sh"
start_daemon

busy_guests_start 20
timed_attach 6
base=$ATTACH_MS
note "dom 6 attached in $base ms before the store went away"
stall_probe_start

silent_server "$WORK/silent.sock"
target="nbd+unix:///?socket=$WORK/silent.sock"
guest 5 8M
# The toolstack waits 10 s for InitWait, which never comes: in the
# background, while everything else goes on.
# shellcheck disable=SC2086
"$TOOLSTACK" attach 5 "$target" xvda $SCRIPT_OPT >"$WORK/attach-5.out" 2>&1 &
attach5=$!
track_pid $attach5

# While the first attempt waits for the server, nobody else does.
sleep 1
assert_usual_attach 7 "$base"
# An attempt gives up after 5 s; the device says so and tries again.
assert_waits_for_store 5 "$target" \
	"cannot reach the store of image .*did not complete the NBD handshake within 5 s; trying again" 15

stall_probe_stop 100
note "the main loop's worst wait: $STALL_WORST_MS ms"
busy_guests_wait
wait "$attach5" && fail "the silent server's disk was attached"
# Still waiting, and still trying.
[ "$(xs_read "$(be_path 5)/state")" = 1 ] ||
	fail "dom 5's backend left Initialising: $(xs_read "$(be_path 5)/state")"
stop_within 5
exit 0

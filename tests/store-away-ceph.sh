#!/bin/sh
# A guest's disk on RBD whose Ceph monitor nobody reaches (its address a
# port nobody listens on), attached while four guests on image files do
# verified I/O (issue 29): the cluster connect runs off the main thread,
# so the main loop never stalls over 100 ms (tests/stall-probe.py), the
# four finish without an error, a new guest on a file attaches in its
# usual time while the connect is under way, the waiting device says why
# once librados gives up (its error node, the log, `blkbackctl list`),
# and SIGTERM exits within 5 s during the next attempt.
. "$top_srcdir/tests/lib.sh"
xensim_setup
requires python3
ldconfig -p 2>/dev/null | grep -q 'librbd\.so\.1 ' ||
	skip "no librbd.so.1 (install librbd1)"
. "$top_srcdir/tests/lib-store-away.sh"

# A port that was free a moment ago: nothing listens there.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/away.conf" <<EOF
[global]
mon host = v2:127.0.0.1:$port
auth cluster required = none
auth service required = none
auth client required = none
EOF
target="rbd:rbd/away:conf=$WORK/away.conf"

start_daemon
busy_guests_start 35
timed_attach 6
base=$ATTACH_MS
note "dom 6 attached in $base ms before the cluster went away"
stall_probe_start

guest 5 8M
# shellcheck disable=SC2086
"$TOOLSTACK" attach 5 "$target" xvda $SCRIPT_OPT >"$WORK/attach-5.out" 2>&1 &
attach5=$!
track_pid $attach5
sleep 2
# librados is still trying the monitor (for 20 s): nobody else waits.
grep -q "vbd 5/51712: cannot reach" "$WORK/blkbackd.log" &&
	fail "the first attempt ended before librados's 20 s"
assert_usual_attach 7 "$base"

assert_waits_for_store 5 "$target" \
	"cannot reach the store of image .*cannot reach the Ceph cluster: .*; trying again" 40

stall_probe_stop 100
note "the main loop's worst wait: $STALL_WORST_MS ms"
busy_guests_wait
wait "$attach5" && fail "the unreachable cluster's disk was attached"
# The second attempt is in librados's connect now.
stop_within 5
exit 0

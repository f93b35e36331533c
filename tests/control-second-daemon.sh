#!/bin/sh
# A second daemon started on the same state directory while the first
# serves four guests: it refuses to start, naming the first one's pid,
# and leaves its socket alone. Once the first is gone, its socket is
# stale and the next daemon replaces it.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-control.sh"
requires python3
control_setup 8

ino=$(stat -c %i "$SOCK")
LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BLKBACKD" --log-level debug --state-dir "$WORK/state" \
	>"$WORK/second.err" 2>&1 &
SECOND_PID=$!
track_pid $SECOND_PID
if ! wait_gone $SECOND_PID 5; then
	kill $SECOND_PID
	fail_later "a second daemon on the same socket still runs after 5 s"
fi
wait $SECOND_PID
rc=$?
[ "$rc" -ne 0 ] || fail_later "the second daemon exited 0"
grep -q "another blkbackd (pid $DAEMON_PID) serves $SOCK" "$WORK/second.err" ||
	fail_later "the second daemon did not name the first:" \
		"$(cat "$WORK/second.err")"
[ "$(stat -c %i "$SOCK")" = "$ino" ] ||
	fail_later "the second daemon replaced the first one's socket"
control_new_guest
$CLIENT ask "$SOCK" list | grep -q '"domid":21' ||
	fail_later "the first daemon does not answer on its socket"
control_verdict

# The socket a daemon left behind (it never removes it) answers nobody:
# the next daemon replaces it.
start_daemon
n=50
until $CLIENT ask "$SOCK" log-level 2>/dev/null |
	grep -q '"log_level":"debug"'; do
	n=$((n - 1))
	[ $n -gt 0 ] && daemon_alive ||
		fail "a daemon did not replace a stale socket"
	sleep 0.1
done
finish "a second daemon refused, naming the first (exit $rc); a stale" \
	"socket replaced; $VERDICT"

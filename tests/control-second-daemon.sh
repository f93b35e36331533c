#!/bin/sh
# A second daemon started on the same state directory while the first
# serves four guests: it refuses to start, naming the first one's pid,
# and leaves its socket alone. Once the first is gone, its socket is
# stale and the next daemon replaces it. The socket's lock keeps out a
# daemon while another process holds it, and of two daemons started at
# the same moment, one serves.
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
[ "$rc" -eq 3 ] || fail_later "the second daemon exited $rc, not 3"
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
stop_daemon

# The lock: a process that holds a POSIX write lock on the socket's
# PATH.lock (as a daemon does from before it binds until it exits) keeps
# a new daemon out though nobody listens yet, and is named.
python3 -c '
import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
time.sleep(60)' "$SOCK.lock" >"$WORK/locker.out" &
LOCKER=$!
track_pid $LOCKER
n=50
until grep -q locked "$WORK/locker.out"; do
	n=$((n - 1))
	[ $n -gt 0 ] || fail "the lock holder did not start"
	sleep 0.1
done
start_second() { # LOG
	LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$BLKBACKD" --log-level debug --state-dir "$WORK/state" \
		>"$1" 2>&1 &
	track_pid $!
}
start_second "$WORK/locked.err"
p=$!
wait_gone $p 5 || fail "a daemon started while another process holds $SOCK.lock"
grep -q "another blkbackd (pid $LOCKER) serves $SOCK" "$WORK/locked.err" ||
	fail "the refusal did not name the lock's holder: $(cat "$WORK/locked.err")"
kill $LOCKER
wait $LOCKER 2>/dev/null

# Two daemons started at the same moment, five times: one serves, the
# other exits naming it. Without the lock both found nobody listening and
# both bound a socket, the second over the first one's.
pairs=0
while [ $pairs -lt 5 ]; do
	start_second "$WORK/pair-a.err"
	pa=$!
	start_second "$WORK/pair-b.err"
	pb=$!
	n=100
	until $CLIENT ask "$SOCK" list >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || fail "neither daemon of pair $pairs serves $SOCK"
		sleep 0.1
	done
	if wait_gone $pa 5; then
		gone=$pa live=$pb err=$WORK/pair-a.err
	elif wait_gone $pb 1; then
		gone=$pb live=$pa err=$WORK/pair-b.err
	else
		fail "both daemons of pair $pairs run ($pa and $pb)"
	fi
	pid_alive $live || fail "no daemon of pair $pairs runs"
	grep -q "another blkbackd (pid $live) serves $SOCK" "$err" ||
		fail "pair $pairs: daemon $gone did not name $live: $(cat "$err")"
	kill $live
	wait_gone $live 5 || fail "daemon $live did not stop"
	pairs=$((pairs + 1))
done

finish "a second daemon refused, naming the first (exit $rc); a stale" \
	"socket replaced; a lock's holder named; 5 simultaneous pairs left" \
	"one daemon each; $VERDICT"

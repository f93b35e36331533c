#!/bin/sh
# Under systemd's WatchdogSec= the daemon pings: READY=1 once, then
# WATCHDOG=1 at half the interval systemd gives it (WATCHDOG_USEC), from
# its main loop; without a watchdog it sends none. A listener on a unix
# datagram socket stands in for systemd's NOTIFY_SOCKET.
. "$top_srcdir/tests/lib.sh"
requires python3
xensim_setup

# listen SECONDS: what arrives on $WORK/notify from READY=1 until SECONDS
# after it (at most 60 s in all, whatever the host's load), one per line.
listen() {
	python3 - "$WORK/notify" "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.1)
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        msg = s.recv(4096).decode().replace("\n", " ")
    except socket.timeout:
        continue
    print(msg, flush=True)
    if "READY=1" in msg:
        end = min(end, time.monotonic() + float(sys.argv[2]))
PY
}

run_daemon() { # WATCHDOG_USEC or empty
	rm -f "$WORK/notify"
	listen 2.5 >"$WORK/notes" &
	listener=$!
	# The daemon sends READY=1 once: the socket must be there first.
	n=100
	while [ ! -S "$WORK/notify" ] && [ "$n" -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	[ -S "$WORK/notify" ] || fail "the listener did not bind its socket"
	env NOTIFY_SOCKET="$WORK/notify" ${1:+WATCHDOG_USEC=$1} \
		LD_LIBRARY_PATH="$XENSIM_LIBDIR" "$BLKBACKD" --log-level info \
		--state-dir "$WORK/state" 2>>"$WORK/blkbackd.log" &
	DAEMON_PID=$!
	wait "$listener"
	stop_daemon
}

note "WatchdogSec=0.4s: a ping every 0.2 s"
run_daemon 400000
grep -q "READY=1" "$WORK/notes" || fail "no READY=1: $(cat "$WORK/notes")"
n=$(grep -c "WATCHDOG=1" "$WORK/notes")
# 2.5 s after READY=1 at 0.2 s intervals: about 12 pings.
[ "$n" -ge 8 ] || fail "$n watchdog pings in 2.5 s at 0.2 s intervals"
note "$n pings"

note "no watchdog: no ping"
run_daemon ""
grep -q "READY=1" "$WORK/notes" || fail "no READY=1 without a watchdog"
grep -q "WATCHDOG=1" "$WORK/notes" && fail "pinged without a watchdog"
exit 0

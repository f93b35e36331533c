#!/bin/sh
# The daemon restarts while a guest runs on an NBD export whose server now
# accepts and never answers, and four guests on image files run verified
# I/O across the restart (issue 29): the new daemon resumes the four at
# once (the export's open waits on an opener thread, not on the main
# thread before READY=1), its main loop never stalls over 100 ms
# (tests/stall-probe.py), the four finish without an error, a new guest
# on a file attaches in its usual time, the NBD disk says why it waits
# (its error node, the log, `blkbackctl list`), and SIGTERM exits within
# 5 s with the open still under way.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-nbd.sh"
xensim_setup
requires nbdkit python3
. "$top_srcdir/tests/lib-store-away.sh"
start_daemon

# The NBD guest, connected to a server that answers, its data verified;
# then it stays connected (xensim's frontend gives up on a request after
# 10 s without an answer, where a real guest waits: so no I/O of its own
# across the restart).
truncate -s 8M "$WORK/n9.img"
nbd_server n9 file "$WORK/n9.img"
target=$(uri n9)
guest 9 8M
attach 9 xvda "$target"
blkfront 9 --ops 300 --verify >/dev/null
hold_start 9 --hold
hold_wait CONNECTED 20

busy_guests_start 30
timed_attach 6
base=$ATTACH_MS
note "dom 6 attached in $base ms before the restart"
sleep 1

# The daemon stops; the NBD server hangs (another process on its socket,
# which accepts and never answers); a new daemon starts.
stop_within 5
kill "$n9_pid"
wait "$n9_pid" 2>/dev/null
silent_server "$WORK/n9.sock"
# connected_since DOMID: whether the new daemon connected it.
log_start=$(($(wc -l <"$WORK/blkbackd.log") + 1))
connected_since() {
	tail -n +"$log_start" "$WORK/blkbackd.log" |
		grep -q "vbd $1/51712: connected"
}
start_daemon
stall_probe_start

# Each of the four is connected again, by the new daemon, within 5 s.
for d in 1 2 3 4; do
	n=50
	until connected_since "$d"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "dom $d was not resumed within 5 s"
		sleep 0.1
	done
done

# While the first attempt waits for the server, nobody else does.
assert_usual_attach 7 "$base"
assert_waits_for_store 9 "$target" \
	"cannot reach the store of image .*did not complete the NBD handshake within 5 s; trying again" 15

[ "$(xs_read "$(be_path 9)/state")" = 4 ] ||
	fail "dom 9's backend left Connected: $(xs_read "$(be_path 9)/state")"
# The server answers again: the disk is opened at a later attempt, its
# error node goes, and the held guest is served again.
kill "$SILENT_PID"
wait "$SILENT_PID" 2>/dev/null
nbd_server n9 file "$WORK/n9.img"
connected_since 9 && fail "dom 9 was connected while its server was silent"
n=450
until connected_since 9; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "dom 9 was not resumed once its server answered"
	sleep 0.1
done
xs_read "$(be_path 9)/error" >/dev/null &&
	fail "dom 9's error node stayed: $(xs_read "$(be_path 9)/error")"
stall_probe_stop 100
note "the main loop's worst wait: $STALL_WORST_MS ms"
busy_guests_wait
stop_within 5
exit 0

#!/bin/sh
# An NBD server (nbdkit's file plugin on a unix socket) killed with SIGKILL
# under a guest's verified I/O:
# - back within a second on the same socket: the guest's workload runs to
#   its end without one error answer, the file behind the export holds
#   exactly what the guest wrote, and the outage is logged once, naming
#   the disk, and counted in blkbackctl stats;
# - back after 1.7 s of a 3 s wait: found in time, no error answer;
# - stopped cleanly (SIGTERM: it answers what it has with NBD_ESHUTDOWN
#   and closes) and started again: no error answer either;
# - back only after --nbd-reconnect-timeout: the guest's requests wait
#   that long, no less, then get error answers; the daemon and a guest on
#   a local file carry on; when the server is back, the disk (whose guest
#   is still connected) reconnects by itself;
# - back with a smaller export: refused and logged, and the guest's
#   requests fail after the timeout as if it had not come back.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-nbd.sh"
xensim_setup
requires nbdkit
timeout=3
start_daemon --nbd-reconnect-timeout $timeout
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
LOG=$WORK/blkbackd.log
size=64M
sectors=$((64 * 2048))

# kill_server NAME [SIGNAL]: SIGKILL (or SIGNAL), and reaped.
kill_server() {
	eval "ks_pid=\$${1}_pid"
	kill -"${2:-KILL}" "$ks_pid"
	wait "$ks_pid" 2>/dev/null
}

# nbd_guest NAME DOMID ARGS...: an export NAME of a new $size file, and
# guest DOMID on it running xensim-blkfront ARGS in the background (its
# pid in BG_PID), connected and half a second into its I/O.
nbd_guest() {
	ng_name=$1 ng_dom=$2
	shift 2
	truncate -s "$size" "$WORK/$ng_name.img"
	nbd_server "$ng_name" file "$WORK/$ng_name.img"
	guest "$ng_dom" "$size"
	attach "$ng_dom" xvda "$(uri "$ng_name")"
	blkfront_bg "$ng_dom" "$@"
	wait_file_line "$WORK/front-$ng_dom.out" "connected" 10 ||
		fail "dom $ng_dom never connected"
	sleep 0.5
}

note "the server is killed under I/O and back within a second"
nbd_guest r 1 --fill --seconds 4 --bs 65536 --depth 16 --verify --seed 11 \
	--flush-every 8
front1=$BG_PID
sleep 0.5
kill_server r
sleep 0.5
nbd_server r file "$WORK/r.img"
blkfront_wait 1 "$front1" "the guest saw an error although its server came back"
note "dom 1: $(tail -1 "$WORK/front-1.out")"
[ "$(grep -c "vbd 1/51712 (xvda): the NBD server went away" "$LOG")" = 1 ] ||
	fail "the outage was not logged once, naming the disk"
grep -q "vbd 1/51712 (xvda): the NBD server is back after" "$LOG" ||
	fail "the reconnection was not logged"
$CTL stats 1/51712 >"$WORK/stats-1" || fail "blkbackctl stats failed"
grep -Eq "nbd: outages 1, ended 1, requests resent [1-9][0-9]*, failed while away 0, connections down 0" \
	"$WORK/stats-1" || fail "the outage is not counted: $(cat "$WORK/stats-1")"
$CTL metrics >"$WORK/metrics-1" || fail "blkbackctl metrics failed"
grep -q '^blkbackd_nbd_outages_total{domid="1",domain="xensim-guest1",devid="51712",vdev="xvda"} 1$' \
	"$WORK/metrics-1" || fail "no NBD outage in the metrics: $(grep nbd "$WORK/metrics-1")"
detach 1
write_pattern "$WORK/expected-11" "$sectors" 11
cmp "$WORK/expected-11" "$WORK/r.img" ||
	fail "the exported file differs from what the guest wrote"

note "the server is back after 1.7 s, within the 3 s wait"
# The attempts come at 0, 0.1, 0.3, 0.7 and 1.5 s, then at most 1 s apart
# while requests wait, so the one at 2.5 s finds the server; doubling on
# to 3.1 s would have failed the requests at 3 s although it was back.
nbd_guest l 5 --bs 65536 --depth 16 --seconds 6 --verify --seed 7
front5=$BG_PID
kill_server l
sleep 1.7
nbd_server l file "$WORK/l.img"
blkfront_wait 5 "$front5" "the guest failed although its server was back within the wait"
grep -q "vbd 5/51712 (xvda): the NBD server is back after [23]\.[0-9] s" "$LOG" ||
	fail "the reconnection was not logged: $(grep 'vbd 5/' "$LOG" | tail -3)"
detach 5

note "the server stops cleanly under I/O and is started again"
nbd_guest t 6 --bs 65536 --depth 16 --seconds 4 --verify --seed 9
front6=$BG_PID
kill_server t TERM
sleep 0.3
nbd_server t file "$WORK/t.img"
blkfront_wait 6 "$front6" "the guest saw an error although its server only restarted"
grep -q "vbd 6/51712 (xvda): the NBD server is back after" "$LOG" ||
	fail "the restart was not seen as an outage: $(grep 'vbd 6/' "$LOG" | tail -3)"
detach 6

note "the server is killed and stays away, then comes back"
truncate -s "$size" "$WORK/g.img"
nbd_server g file "$WORK/g.img"
guest 2 "$size"
attach 2 xvda "$(uri g)"
guest 3 8M
attach 3
blkfront_bg 3 --bs 4096 --depth 8 --seconds 8 --verify --seed 4
front3=$BG_PID
# --hold keeps the ring connected after the failure, so that the daemon
# goes on trying to reconnect it.
hold_start 2 --bs 65536 --depth 16 --seconds 30 --verify --seed 3 --hold
wait_file_line "$WORK/front-2.out" "connected" 10 || fail "dom 2 never connected"
sleep 0.5
# The clock starts before the kill: the daemon may see the connection close
# (and start its wait) before the shell has reaped the server.
killed=$(now_ms)
kill_server g
until grep -q "^fact check=workload case=error-answer " "$WORK/front-2.out"; do
	[ $(($(now_ms) - killed)) -lt $((timeout * 1000 + 5000)) ] ||
		fail "the guest of the dead server hangs past the timeout"
	kill -0 "$HOLD_PID" 2>/dev/null || fail "dom 2 ended without failing"
	sleep 0.05
done
waited=$(($(now_ms) - killed))
note "dom 2 after $waited ms:" \
	"$(sed -n 's/^fact check=workload case=//p' "$WORK/front-2.out")"
[ "$waited" -ge $((timeout * 1000)) ] ||
	fail "the guest got its error after $waited ms, before the ${timeout}s timeout"
grep -q "^fact check=workload case=error-answer .* status=ERROR$" \
	"$WORK/front-2.out" ||
	fail "dom 2's answer was not an error: $(tail -3 "$WORK/front-2.out")"
grep -q "vbd 2/51712 (xvda): the NBD server is still away after .*fail with EIO" \
	"$LOG" || fail "the end of the wait was not logged"
blkfront_wait 3 "$front3" "the local guest failed while an NBD server was away"
assert_daemon_alive
note "the server comes back after the timeout: the disk reconnects"
nbd_server g file "$WORK/g.img"
wait_file_line "$LOG" "vbd 2/51712 (xvda): the NBD server is back after" 15 ||
	fail "the disk did not reconnect once its server was back"
$CTL stats 2/51712 >"$WORK/stats-2" || fail "blkbackctl stats failed"
grep -Eq "nbd: outages 1, ended 1, requests resent 0, failed while away [1-9][0-9]*, connections down 0" \
	"$WORK/stats-2" || fail "the outage is not counted: $(cat "$WORK/stats-2")"
exec 3>&-
wait "$HOLD_PID" && fail "dom 2's failed run exited 0"
detach 2
detach 3

note "the server comes back with a smaller export"
nbd_guest s 4 --bs 65536 --depth 16 --seconds 30 --verify --seed 5
front4=$BG_PID
kill_server s
truncate -s 32M "$WORK/s.img"
nbd_server s file "$WORK/s.img"
n=$((timeout * 20 + 100))
while kill -0 "$front4" 2>/dev/null; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "the guest of the shrunk export hangs"
	sleep 0.05
done
wait "$front4" && fail "the guest of the shrunk export saw no error"
grep -q "vbd 4/51712 (xvda): the NBD server at .* is back but refused: its export is smaller" \
	"$LOG" || fail "the smaller export was not refused with a reason"
grep -q "vbd 4/51712 (xvda): the NBD server is back after" "$LOG" &&
	fail "the smaller export was taken"
assert_daemon_alive
detach 4
assert_daemon_alive
exit 0

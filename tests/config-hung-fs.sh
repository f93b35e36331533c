#!/bin/sh
# The configuration file on a filesystem that stops answering (nbdfuse
# over nbdkit's delay filter: each read takes 6 s). A reload (SIGHUP) reads
# it on a thread of its own and gives up after CONFIG_READ_DEADLINE_MS
# (1 s), refusing the reload with the path and the fix; a second reload
# while that read is still stuck is refused at once; once it returned, a
# reload works again. Four other guests run verified I/O meanwhile, the
# main loop never waits longer than the deadline (the stall probe allows
# 1.5 s), a new guest attaches and SIGTERM ends the daemon.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-bystanders.sh"
requires nbdkit nbdfuse fusermount3 python3
xensim_setup
CONF=$WORK/blkbackd.conf
LOG=$WORK/blkbackd.log
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

printf 'log-level = debug\n' >"$WORK/local.conf"
printf 'log-level = info\n' >"$WORK/slow.base"
mkdir "$WORK/slow" || hard_error "mkdir failed"
nbdfuse "$WORK/slow/blkbackd.conf" --command nbdkit -s --filter=delay \
	file "$WORK/slow.base" rdelay=6 >"$WORK/nbdfuse.log" 2>&1 &
SCRATCH_MOUNTS="$SCRATCH_MOUNTS $WORK/slow"
n=50
while [ ! -e "$WORK/slow/blkbackd.conf" ] && [ $n -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
[ -e "$WORK/slow/blkbackd.conf" ] ||
	skip "nbdfuse cannot mount here: $(cat "$WORK/nbdfuse.log")"
ln -s "$WORK/local.conf" "$CONF" || hard_error "ln failed"

start_daemon_config "$CONF"
bystanders_start 11 15
stall_probe_start

# logged_within REGEX SECONDS: REGEX appears in the log in time.
logged_within() {
	wait_file_line "$LOG" "$1" "$2" || fail "not logged within $2 s: $1"
}

ln -sfn "$WORK/slow/blkbackd.conf" "$CONF" || hard_error "ln failed"
t0=$(date +%s)
kill -HUP "$DAEMON_PID"
logged_within "cannot read the configuration file $CONF within 1000 ms" 5
kill -HUP "$DAEMON_PID"
logged_within "$CONF: an earlier read of it has not returned yet" 3
[ "$($CTL log-level)" = debug ] || fail "a refused reload changed the log level"
ln -sfn "$WORK/local.conf" "$CONF" || hard_error "ln failed"
printf 'log-level = notice\n' >"$WORK/local.conf"
# The stuck read returns 6 s after it began; then reloads work again.
while [ $(($(date +%s) - t0)) -lt 8 ]; do sleep 0.5; done
$CTL reload >"$WORK/reload.out" 2>&1 || fail "reload: $(cat "$WORK/reload.out")"
[ "$($CTL log-level)" = notice ] || fail "the reload after the stuck one failed"

assert_still_serving 5
bystanders_wait
stall_probe_stop 1500
note "worst main-loop stall: $STALL_WORST_MS ms (the read deadline: 1000)"
assert_stops_within 5
exit 0

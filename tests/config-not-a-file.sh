#!/bin/sh
# The configuration path names something that is no regular file: a FIFO
# (whose open or read waits for a writer that never comes), /dev/zero
# (endless) or a file too large. At start-up the daemon refuses at once,
# naming the path and the fix; on a reload (SIGHUP) the running settings
# stay, while four other guests run verified I/O, the main loop never
# stalls over 100 ms, a new guest attaches and SIGTERM ends the daemon.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-bystanders.sh"
requires python3 timeout
xensim_setup
CONF=$WORK/blkbackd.conf
LOG=$WORK/blkbackd.log

# refused_at_start WHAT REGEX: the daemon, given --config $CONF, exits 3
# within 5 s saying REGEX.
refused_at_start() {
	timeout 5 "$BLKBACKD" --config "$CONF" --state-dir "$WORK/state" \
		>"$WORK/start.err" 2>&1
	rc=$?
	[ "$rc" -eq 124 ] && fail "with $1 as its configuration the daemon" \
		"did not return within 5 s"
	[ "$rc" -eq 3 ] || fail "with $1 the daemon exited $rc, not 3"
	grep -q -- "$2" "$WORK/start.err" ||
		fail "with $1 the daemon said: $(cat "$WORK/start.err")"
}

mkfifo "$CONF" || hard_error "mkfifo failed"
refused_at_start "a FIFO" \
	"cannot read the configuration file $CONF: it is a FIFO; give --config a regular file"
rm -f "$CONF"
ln -s /dev/zero "$CONF" || hard_error "ln failed"
refused_at_start "/dev/zero" "$CONF: it is a character device"
timeout 5 "$BLKBACKD" --config /dev/zero --check-config >"$WORK/start.err" 2>&1
[ $? -eq 3 ] || fail "--config /dev/zero was not refused at once"
rm -f "$CONF"
head -c 70000 /dev/zero | tr '\0' '#' >"$CONF"
refused_at_start "a 70000-byte file" "$CONF: it has 70000 bytes"

# A good file, then a daemon that reloads whatever is at its path.
printf 'log-level = debug\n' >"$CONF"
start_daemon_config "$CONF"
bystanders_start 11 12
stall_probe_start

# reload_refused WHAT REGEX: SIGHUP, then the refusal is logged in time.
reload_refused() {
	n=$(grep -c "reload: the configuration has errors" "$LOG")
	kill -HUP "$DAEMON_PID"
	i=0
	while [ "$(grep -c "reload: the configuration has errors" "$LOG")" \
		-le "$n" ]; do
		i=$((i + 1))
		[ $i -lt 50 ] || fail "no refused reload of $1 within 5 s"
		sleep 0.1
	done
	grep -q -- "$2" "$LOG" || fail "the reload of $1 said nothing of it"
}

rm -f "$CONF"
mkfifo "$CONF" || hard_error "mkfifo failed"
reload_refused "a FIFO" "configuration file $CONF: it is a FIFO"
sleep 1
rm -f "$CONF"
ln -s /dev/zero "$CONF" || hard_error "ln failed"
reload_refused "/dev/zero" "configuration file $CONF: it is a character device"
sleep 1
rm -f "$CONF"
printf 'log-level = debug\n' >"$CONF"
assert_still_serving 5
bystanders_wait
stall_probe_stop 100
note "worst main-loop stall during the reloads: $STALL_WORST_MS ms"
grep -q "running settings stay" "$LOG" || fail "no word that the settings stay"
assert_stops_within 5
exit 0

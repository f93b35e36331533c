#!/bin/sh
# SIGHUP reloads blkbackd.conf: the settings that can change under running
# guests take effect at once (log-level: a guest connecting after the
# reload leaves debug lines), the others are logged as waiting for a
# restart, and a file with errors changes nothing and keeps the daemon
# serving. A reload never resizes: an image grown before it keeps its old
# size in xenstore until `blkbackctl resize`. `blkbackctl reload` does the
# same as SIGHUP, says what it applied and what waits for a restart, and
# reports a bad file as an error.
. "$top_srcdir/tests/lib.sh"
xensim_setup
CONF=$WORK/blkbackd.conf
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
LOG=$WORK/blkbackd.log
printf 'log-level = info\nworkers = 2\n' >"$CONF"
# Not start_daemon: its --log-level would win over the file's.
LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BLKBACKD" --config "$CONF" --state-dir "$WORK/state" 2>>"$LOG" &
DAEMON_PID=$!
wait_file_line "$LOG" "serving" 10 || fail "the daemon did not start"

# reload_and_wait: SIGHUP, and wait until the daemon has read the file.
reload_and_wait() {
	n=$(grep -c "reloading the configuration" "$LOG")
	kill -HUP "$DAEMON_PID"
	i=0
	while [ "$(grep -c "reloading the configuration" "$LOG")" -le "$n" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "no reload logged after SIGHUP"
		sleep 0.1
	done
	sleep 0.2
}

guest 1 4M
attach 1
blkfront 1 --ops 50 --verify >/dev/null
grep -q "vbd 1/51712: queue 0 on worker" "$LOG" &&
	fail "debug lines at log-level info"
truncate -s 6M "$WORK/d1.img" || hard_error "truncate failed"

printf 'log-level = debug\nworkers = 3\n' >"$CONF"
reload_and_wait
[ "$($CTL log-level)" = debug ] || fail "the reload did not set log-level"
grep -q "reload: workers changed; it takes effect when blkbackd restarts" \
	"$LOG" || fail "no word that workers waits for a restart"
guest 2 4M
attach 2
blkfront 2 --ops 50 --verify >/dev/null
grep -q "vbd 2/51712: queue 0 on worker" "$LOG" ||
	fail "no debug lines after reloading log-level = debug"
assert_node "$(be_path 1)/sectors" 8192
grep -q "vbd 1/51712: image resized" "$LOG" && fail "the reload resized an image"

printf 'log-level = loud\n' >"$CONF"
reload_and_wait
grep -q "blkbackd.conf:1.*log-level = loud" "$LOG" ||
	fail "the bad line was not reported"
grep -q "reload: the configuration has errors" "$LOG" ||
	fail "no word that the running settings stay"
[ "$($CTL log-level)" = debug ] || fail "a bad file changed the log level"
if $CTL reload 2>"$WORK/err"; then
	fail "blkbackctl reload of a bad file succeeded"
fi
grep -q "the configuration has errors" "$WORK/err" ||
	fail "blkbackctl reload: $(cat "$WORK/err")"

# Its guest is gone: the size is re-read, and published at its next connect.
$CTL resize 1/51712 >"$WORK/resize.out" || fail "blkbackctl resize failed"
grep -q "^vbd 1/51712 (.*): 4 MiB -> 6 MiB .*; its guest sees it when it connects$" \
	"$WORK/resize.out" ||
	fail "resize of a disk not connected: $(cat "$WORK/resize.out")"
grep -q "vbd 1/51712: image resized from 8192 to 12288 sectors" "$LOG" ||
	fail "blkbackctl resize did not re-read the image"

# It says what it applied and what waits for a restart.
printf 'log-level = warning\nworkers = 4\n' >"$CONF"
$CTL reload >"$WORK/reload.out" || fail "blkbackctl reload failed"
[ "$($CTL log-level)" = warning ] || fail "blkbackctl reload did not apply"
grep -q "^applied: log-level$" "$WORK/reload.out" &&
	grep -q "^changed, take effect at the next restart: workers$" \
		"$WORK/reload.out" ||
	fail "blkbackctl reload printed: $(cat "$WORK/reload.out")"
printf 'log-level = warning\nworkers = 4\nerror-log-interval = 7\n' >"$CONF"
$CTL --json reload >"$WORK/reload.json" || fail "blkbackctl reload failed"
[ "$(json "$WORK/reload.json" "(d['applied'], d['restart_needed'])")" = \
	"(['error-log-interval'], ['workers'])" ] ||
	fail "blkbackctl --json reload: $(cat "$WORK/reload.json")"
printf 'log-level = warning\nworkers = 2\nerror-log-interval = 7\n' >"$CONF"
$CTL reload | grep -q "^nothing changed$" ||
	fail "a reload of the same file: $($CTL reload)"
assert_still_serving 3
exit 0

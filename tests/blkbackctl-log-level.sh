#!/bin/sh
# `blkbackctl log-level` changes what a running daemon logs, on the main
# thread and the workers alike, without a restart: at info a connecting
# guest leaves no debug line; after `log-level debug` the next one does;
# after `log-level err` not even its info lines are logged. Without an
# argument it shows the level in force; a level that does not exist is an
# error that lists the ones that do, and changes nothing.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon --log-level info
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
LOG=$WORK/blkbackd.log

# serve DOMID [quiet]: a guest connects, does some I/O and goes; unless
# quiet, its final counters (an info line) are logged.
serve() {
	guest "$1" 4M
	attach "$1"
	blkfront "$1" --ops 100 --verify >/dev/null
	if [ "${2:-}" = quiet ]; then
		sleep 1
	else
		wait_file_line "$LOG" "vbd $1/51712: read" 10 ||
			fail "dom $1's final counters were not logged"
	fi
}

wait_file_line "$LOG" "serving" 10 || fail "the daemon did not start"
[ "$($CTL log-level)" = info ] || fail "log-level shows '$($CTL log-level)'"
serve 1
grep -q "vbd 1/51712: queue 0 on worker" "$LOG" &&
	fail "a debug line was logged at level info"

[ "$($CTL log-level debug)" = debug ] || fail "log-level debug did not answer"
serve 2
grep -q "vbd 2/51712: queue 0 on worker" "$LOG" ||
	fail "no debug line after log-level debug"

if $CTL log-level loud 2>"$WORK/err"; then
	fail "log-level loud succeeded"
fi
grep -q "unknown log level 'loud'.*'debug'" "$WORK/err" ||
	fail "log-level loud: $(cat "$WORK/err")"
[ "$($CTL log-level)" = debug ] || fail "a bad level changed the level"

$CTL log-level err >/dev/null || fail "log-level err failed"
serve 3 quiet
grep -q "vbd 3/51712" "$LOG" && fail "info lines were logged at level err"
assert_daemon_alive
exit 0

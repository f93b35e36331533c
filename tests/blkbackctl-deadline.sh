#!/bin/sh
# blkbackctl gives up on what does not answer, within its bound, with
# exit status 1 and a message saying what to check: with xenstored
# stopped (SIGSTOP), a list (the domain names it adds), a lookup of a
# domain's name and an attach; with the daemon stopped, list and stats
# (BLKBACKCTL_TIMEOUT_MS, so that this takes seconds, not the default 30),
# and a detach --timeout 1 (its timeout plus one answer's bound). Each
# also must not give up before its bound. Both come back (SIGCONT) and
# the daemon serves on; nothing is left stopped.
. "$top_srcdir/tests/lib.sh"
requires timeout
xensim_setup
start_daemon
BLKBACKCTL=$top_builddir/tools/blkbackctl/blkbackctl
SOCK=$WORK/state/control
XSD_PID=$(cat "$WORK/host/xenstored.pid") || hard_error "no xenstored.pid"
# A stopped process would never see the EXIT trap's SIGTERM, and its
# wait would hang the suite: whatever ends this test continues both
# before lib.sh's cleanup, which gets the test's exit status.
continue_then_cleanup() {
	cc_rc=$?
	# shellcheck disable=SC2086 # no daemon pid after stop_daemon
	kill -CONT "$XSD_PID" $DAEMON_PID 2>/dev/null
	(exit "$cc_rc")
	cleanup
}
trap continue_then_cleanup EXIT
# One answer's bound (as the messages say it), and the slack a loaded
# machine may add to it.
BOUND_MS=2000
BOUND="2 s"
SLACK_MS=2000

# ends_in MIN_MS MAX_MS REGEX ARGS...: blkbackctl ARGS exits 1 after
# MIN_MS to MAX_MS, saying REGEX. One that hangs is killed after 20 s.
ends_in() {
	ei_min=$1 ei_max=$2 ei_regex=$3
	shift 3
	ei_t0=$(now_ms)
	BLKBACKCTL_TIMEOUT_MS=$BOUND_MS timeout -s KILL 20 "$BLKBACKCTL" \
		--socket "$SOCK" "$@" >"$WORK/ctl.out" 2>&1
	ei_rc=$?
	ei_ms=$(($(now_ms) - ei_t0))
	note "blkbackctl $*: exit $ei_rc after $ei_ms ms: $(cat "$WORK/ctl.out")"
	[ "$ei_rc" -eq 1 ] ||
		fail_later "blkbackctl $*: exit status $ei_rc, not 1"
	if [ "$ei_ms" -lt "$ei_min" ] || [ "$ei_ms" -gt "$ei_max" ]; then
		fail_later "blkbackctl $*: ended after $ei_ms ms, not within $ei_min to $ei_max"
	fi
	grep -q -- "$ei_regex" "$WORK/ctl.out" ||
		fail_later "blkbackctl $*: did not say '$ei_regex'"
}

guest 3 32M
NAME3=$(xs_read /local/domain/3/name) || fail "domain 3 has no name node"
"$BLKBACKCTL" attach 3 "$WORK/d3.img" xvdb >"$WORK/attach.out" 2>&1 ||
	fail "attach failed: $(cat "$WORK/attach.out")"
BLKBACKCTL_TIMEOUT_MS=$BOUND_MS "$BLKBACKCTL" --socket "$SOCK" list \
	>"$WORK/list.out" 2>&1 || fail "list failed: $(cat "$WORK/list.out")"
grep -q "$NAME3" "$WORK/list.out" || fail "list does not name $NAME3"

kill -STOP "$XSD_PID"
ends_in "$BOUND_MS" $((BOUND_MS + SLACK_MS)) \
	"xenstore did not answer reading domain 3's name within $BOUND; is xenstored running, or stuck?" \
	list
ends_in "$BOUND_MS" $((BOUND_MS + SLACK_MS)) \
	"xenstore did not answer looking up the domain named '$NAME3' within $BOUND" \
	stats "$NAME3/xvdb"
# attach: its --timeout (1 s) and one answer's bound, for the whole.
ends_in $((1000 + BOUND_MS)) $((1000 + BOUND_MS + SLACK_MS)) \
	"xenstore did not answer .* within 3 s" \
	attach --timeout 1 3 "$WORK/d3.img" xvdc
kill -CONT "$XSD_PID"

kill -STOP "$DAEMON_PID"
ends_in "$BOUND_MS" $((BOUND_MS + SLACK_MS)) \
	"blkbackd did not answer on $SOCK within $BOUND; is blkbackd running, or stuck? systemctl status blkbackd; journalctl -u blkbackd" \
	list
ends_in "$BOUND_MS" $((BOUND_MS + SLACK_MS)) \
	"blkbackd did not answer on $SOCK within $BOUND" stats
ends_in "$BOUND_MS" $((BOUND_MS + SLACK_MS)) \
	"blkbackd did not answer on $SOCK within $BOUND" stats 3/xvdb
# detach waits 1 s for the stopped daemon, then removes the nodes (or,
# should xenstore not answer meanwhile, gives up at 3 s).
ends_in 1000 $((1000 + BOUND_MS + SLACK_MS)) \
	"did not close vbd 3/51728 within 1 s\|xenstore did not answer" \
	detach --timeout 1 3 xvdb
kill -CONT "$DAEMON_PID"

# Both back: the daemon answers again, and serves a new guest.
BLKBACKCTL_TIMEOUT_MS=$BOUND_MS "$BLKBACKCTL" --socket "$SOCK" list \
	>"$WORK/list.out" 2>&1 ||
	fail_later "list after SIGCONT failed: $(cat "$WORK/list.out")"
assert_still_serving 4
stop_daemon
finish

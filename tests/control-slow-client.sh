#!/bin/sh
# A control client that sends its request one byte every 0.8 s. The daemon
# gives a request line 1 s: the client is answered an error and closed,
# and meanwhile every other client, guest and signal is served at once.
# A line longer than 575 bytes is refused as a bad request.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-control.sh"
requires python3
control_setup 8

$CLIENT slow "$SOCK" list 0.8 >"$WORK/slow.out" 2>&1 &
SLOW_PID=$!
track_pid $SLOW_PID
control_new_guest
wait $SLOW_PID
grep -q "^dropped after [0-9]* bytes: .*no complete request line" \
	"$WORK/slow.out" ||
	fail_later "the slow client was not dropped: $(cat "$WORK/slow.out")"
grep -q "sent no complete request within 1000 ms" "$WORK/blkbackd.log" ||
	fail_later "no log line names the slow client"
# The refusal arrives whole and the socket ends cleanly: the daemon reads
# away the bytes it did not take before it closes (a Unix socket
# closed with bytes unread resets its peer, who would lose the answer).
long=$(printf '%03000d' 0)
$CLIENT ask "$SOCK" "stats $long" >"$WORK/long.out" 2>&1
grep -q '"error":"a request line is at most 575 bytes","bad_request":true' \
	"$WORK/long.out" ||
	fail_later "a 3006-byte request line: $(cat "$WORK/long.out")"
! grep -q "^control-client:" "$WORK/long.out" ||
	fail_later "the refused client's socket did not end cleanly:" \
		"$(cat "$WORK/long.out")"
control_verdict
finish "a client sending a byte every 0.8 s was dropped; $VERDICT"

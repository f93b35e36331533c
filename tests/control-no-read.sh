#!/bin/sh
# A control client that asks for every disk's stats and never reads the
# reply, made larger than the socket's buffer by many disks. The daemon
# writes what the socket takes and keeps the rest; the client is closed
# 5 s after its reply was ready, and meanwhile every other client, guest
# and signal is served at once.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-control.sh"
requires python3
BUF=$(cat /proc/sys/net/core/wmem_default 2>/dev/null) || BUF=212992
# --stage-timing: each disk's stats then carry its stage times too.
NO_PROBE=1 control_setup 20 --stage-timing

# 320 disks, on domains 30-49, xvda-xvdp each, that no guest connects: their
# stats are what makes the reply large.
for dom in $(seq 30 49); do
	"$TOOLSTACK" create "$dom" >>"$WORK/toolstack.log" 2>&1 ||
		fail "create dom $dom failed"
	for v in a b c d e f g h i j k l m n o p; do
		truncate -s 1M "$WORK/d$dom$v.img"
		attach "$dom" "xvd$v" "$WORK/d$dom$v.img"
	done
done
$CLIENT ask "$SOCK" stats >"$WORK/stats.json"
SIZE=$(wc -c <"$WORK/stats.json")
[ "$SIZE" -gt $((BUF + BUF / 2)) ] ||
	hard_error "the stats reply ($SIZE bytes) is not larger than the" \
		"socket buffer ($BUF bytes) by half"

stall_probe_start
$CLIENT noread "$SOCK" stats 8 >"$WORK/noread.out" 2>&1 &
NOREAD_PID=$!
track_pid $NOREAD_PID
sleep 1
control_new_guest
wait $NOREAD_PID
# Closed at its deadline: what it finally reads is less than the reply.
grep -q "complete=0" "$WORK/noread.out" ||
	fail_later "the client that never read was not closed:" \
		"$(cat "$WORK/noread.out")"
grep -q "did not read its reply .* within 5000 ms" "$WORK/blkbackd.log" ||
	fail_later "no log line names the client that did not read"
control_verdict
finish "a client that never read a $SIZE-byte reply was closed; $VERDICT"

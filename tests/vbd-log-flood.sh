#!/bin/sh
# A guest flapping its frontend (connect, one request, close, again, as
# fast as it can) can neither flood the journal nor keep the main loop
# busy: its connects are paced (20 at once, then 2 a second: the next
# waits), the daemon's messages about that disk are held to a burst of 50
# and 2 a second after (debug messages aside, the counts of those held
# back included), and the next message let through says how many were
# held back. Meanwhile another guest's verified I/O never fails and the
# main loop never stalls over 100 ms.
. "$top_srcdir/tests/lib.sh"
xensim_setup
SECONDS_FLAPPING=15
BURST=50
PER_S=2
CONNECT_BURST=20
CONNECT_PER_S=2
start_daemon

guest 1 4M
guest 2 16M
attach 1
attach 2
good_guest_start 2
stall_probe_start

start=$(date +%s)
cycles=0
while [ $(($(date +%s) - start)) -lt $SECONDS_FLAPPING ]; do
	"$BLKFRONT" --domid 1 --ops 1 >"$WORK/front-1.out" 2>&1 || {
		cat "$WORK/front-1.out" >&2
		fail "the flapping guest's run $cycles failed"
	}
	cycles=$((cycles + 1))
done
elapsed=$(($(date +%s) - start))

stall_probe_stop 100
good_guest_stop 1

# messages_of_1: the lines about dom 1's disk above debug level.
messages_of_1() {
	grep -c "^blkbackd: \(err\|warning\|notice\|info\): vbd 1/51712: " \
		"$WORK/blkbackd.log"
}
held_of_1() {
	grep -c "vbd 1/51712: [0-9]* messages held back" "$WORK/blkbackd.log"
}
lines=$(messages_of_1)
held=$(held_of_1)
note "$cycles connect/disconnect cycles in $elapsed s: $lines lines about" \
	"the disk, $held of them counts of lines held back; worst main-loop" \
	"wait ${STALL_WORST_MS} ms"
paced=$((CONNECT_BURST + CONNECT_PER_S * (elapsed + 1)))
[ "$cycles" -le "$paced" ] ||
	fail "$cycles connects in $elapsed s, more than $paced: not paced"
# Let through: the burst and what the rate adds (from the attach on), the
# counts of those held back included.
let_through=$((BURST + PER_S * (elapsed + 5)))
# Each cycle logs 4 lines: connected, disconnected and 2 of counters.
[ $((cycles * 4)) -gt "$let_through" ] ||
	skip "only $cycles cycles in $elapsed s: too few to flood"
[ "$lines" -le "$let_through" ] ||
	fail "$lines messages about the flapping disk in $elapsed s, more" \
		"than $let_through"

# Once it calms down, the next message says how many were held back.
sleep 1
blkfront 1 --ops 10 --verify >/dev/null
grep -q "vbd 1/51712: [1-9][0-9]* messages held back" "$WORK/blkbackd.log" ||
	fail "no line says how many messages were held back"
# The other guest's messages were its own: none of them held back.
grep -q "vbd 2/51712: [0-9]* messages held back" "$WORK/blkbackd.log" &&
	fail "messages about the well-behaved guest were held back"
assert_still_serving 3
exit 0

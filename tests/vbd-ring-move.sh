#!/bin/sh
# Three busy guests on two workers: the daemon moves rings between the
# workers (balance.h) while the guests' verified I/O runs. Every guest
# verifies, the disk's counters never go back while its ring moves, the
# final counters match what each guest moved, and a guest that detaches
# while the others' rings move leaves the daemon serving them. With
# --rebalance-ms 0 nothing moves.
. "$top_srcdir/tests/lib.sh"
requires python3
xensim_setup
# One queue a guest, so that three rings cannot divide evenly; moves
# every 100 ms, so that a few seconds see many.
start_daemon --workers 2 --max-queues 1 --rebalance-ms 100
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

fronts=
for d in 1 2 3; do
	guest $d 64M
	attach $d
done
for d in 1 2; do
	blkfront_bg $d --seconds 6 --depth 8 --verify
	fronts="$fronts $BG_PID"
done
# Guest 3 stops and detaches early, likely while a ring is moving.
blkfront_bg 3 --seconds 2 --depth 8 --verify
front3=$BG_PID
for d in 1 2 3; do
	wait_node "$(be_path $d)/state" 4 15 || fail "guest $d did not connect"
done

# A disk's requests, sampled while its ring moves, must only grow (for
# 3 s: once the guest is done, its disk has no ring and counts nothing).
last=0
samples=0
end=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt $end ]; do
	$CTL --json stats 1/51712 >"$WORK/s.json" || fail "blkbackctl stats failed"
	now=$(json "$WORK/s.json" "sum(d['devices'][0][k]['requests'] for k in ('read', 'write'))")
	[ "$now" -ge "$last" ] ||
		fail "guest 1's requests went back from $last to $now"
	last=$now
	samples=$((samples + 1))
done
note "guest 1's requests grew to $last over $samples samples"
[ "$last" -gt 0 ] || fail "no counters for guest 1"

blkfront_wait 3 "$front3" "guest 3's workload failed"
detach 3
# shellcheck disable=SC2086 # a list of pids
wait_fronts "a guest's workload failed while rings moved" $fronts
assert_verified 1 2 3
moves=$(grep -c "queue 0 moves from worker" "$WORK/blkbackd.log")
note "$moves ring moves"
[ "$moves" -ge 3 ] || fail "only $moves ring moves with three busy rings on two workers"

# The guests are done, so nothing moves any more: each remaining disk
# counts the moves the log shows for it, and their pauses.
$CTL --json stats >"$WORK/s.json" || fail "blkbackctl stats failed"
for d in 1 2; do
	# The disk's moves, as a Python expression over the JSON.
	moves="[x for x in d['devices'] if x['domid'] == $d][0]['moves']"
	logged=$(grep -c "vbd $d/51712[: ].*moves from worker" "$WORK/blkbackd.log")
	counted=$(json "$WORK/s.json" "$moves['count']")
	paused=$(json "$WORK/s.json" "$moves['paused_us']")
	note "guest $d: $counted moves, paused $paused us in all ($(json "$WORK/s.json" "'%(closing_us)d closing: %(draining_us)d draining, %(releasing_us)d releasing' % $moves"))"
	[ "$counted" -eq "$logged" ] ||
		fail "guest $d: stats count $counted moves, the log $logged"
	[ "$counted" -eq 0 ] || [ "$paused" -gt 0 ] ||
		fail "guest $d: $counted moves took no time"
	# The workers share the grant handle: every ring moved mapped.
	kept=$(json "$WORK/s.json" "$moves['kept']")
	[ "$kept" -eq "$counted" ] ||
		fail "guest $d: only $kept of its $counted moves kept the ring mapped"
	[ "$counted" -eq 0 ] || $CTL stats $d/51712 | grep -q "^  ring moves $counted ($kept kept mapped), paused .* closing: .* draining, .* releasing)$" ||
		fail "guest $d: no ring moves in blkbackctl stats: $($CTL stats $d/51712)"
	# The old worker's draining and releasing are parts of the closing.
	json "$WORK/s.json" "(lambda m: m['draining_us'] + m['releasing_us'] <= m['closing_us'] and (m['count'] == 0 or m['releasing_us'] > 0))($moves)" | grep -qx True ||
		fail "guest $d: draining and releasing are not parts of closing: $(json "$WORK/s.json" "$moves")"
done
$CTL metrics >"$WORK/metrics" || fail "blkbackctl metrics failed"
grep -q '^blkbackd_ring_moves_total{domid="1",domain="xensim-guest1",devid="51712",vdev="xvda"} [0-9]' \
	"$WORK/metrics" || fail "no ring moves in the metrics: $(grep moves "$WORK/metrics")"

# Each guest's final counters, moves included, are what the guest moved.
for d in 1 2; do
	detach $d
	wait_file_line "$WORK/blkbackd.log" "vbd $d/51712: read" 10 ||
		fail "no final counters for guest $d"
	python3 - "$WORK/blkbackd.log" "$WORK/front-$d.out" "$d" <<'PY' ||
import re, sys
log = open(sys.argv[1]).read()
front = open(sys.argv[2]).read()
rd, wr = (int(x) for x in re.search(
    r"vbd %s/51712: read \d+ \((\d+) sectors.*write \d+ \((\d+) sectors"
    % sys.argv[3], log).groups())
gw, gr = (float(x) for x in re.search(
    r"wrote ([\d.]+) MiB read ([\d.]+) MiB", front).groups())
print("guest %s: daemon read %.2f MiB, wrote %.2f MiB; guest read %.1f, "
      "wrote %.1f" % (sys.argv[3], rd / 2048, wr / 2048, gr, gw))
sys.exit(0 if abs(rd / 2048 - gr) < 0.06 and abs(wr / 2048 - gw) < 0.06
         else 1)
PY
		fail "guest $d: the final counters lost what moved rings did"
done
assert_daemon_alive
stop_daemon

# Never, when told so.
: >"$WORK/blkbackd.log"
start_daemon --workers 2 --max-queues 1 --rebalance-ms 0
fronts=
for d in 1 2 3; do
	attach $d
	blkfront_bg $d --seconds 2 --depth 8 --verify
	fronts="$fronts $BG_PID"
done
for pid in $fronts; do
	wait "$pid" || fail "a guest's workload failed without moves"
done
! grep -q "moves from worker" "$WORK/blkbackd.log" ||
	fail "a ring moved with --rebalance-ms 0"
assert_daemon_alive
exit 0

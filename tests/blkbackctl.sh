#!/bin/sh
# blkbackctl reaches the daemon through its control socket: `list` shows a
# device waiting for its guest, then the connected guest's device with its
# image and negotiated rings, `stats` counts its requests as they happen
# (the counts grow, and match the operations the guest reports), and a
# device that does not exist is an error.
. "$top_srcdir/tests/lib.sh"
requires python3
xensim_setup
start_daemon --stage-timing
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

guest 1 64M
attach 1
# Before its guest connects a device has no sector size yet: listing it
# must neither divide by it nor crash the daemon.
wait_node "$(be_path 1)/state" 2 15 || fail "guest 1 not at InitWait"
$CTL list >"$WORK/list0.txt" || fail "blkbackctl list failed"
grep -q "waiting.*$WORK/d1.img" "$WORK/list0.txt" ||
	fail "list: the waiting device is not shown: $(cat "$WORK/list0.txt")"
assert_daemon_alive
# The guest must outlive every check of its connected device below: with
# 8 s, a loaded CI host once reached the last one after the guest had
# closed its rings, and the table had no stage times left to show.
"$BLKFRONT" --domid 1 --seconds 15 --depth 8 --verify --queues 2 \
	>"$WORK/front-1.out" 2>&1 &
front=$!
track_pid $front
wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"
sleep 1


$CTL --json list >"$WORK/list.json" || fail "blkbackctl list failed"
[ "$(json "$WORK/list.json" "d['devices'][0]['state']")" = connected ] ||
	fail "list: device not connected: $(cat "$WORK/list.json")"
[ "$(json "$WORK/list.json" "d['devices'][0]['image']")" = "$WORK/d1.img" ] ||
	fail "list: wrong image: $(cat "$WORK/list.json")"
[ "$(json "$WORK/list.json" "d['devices'][0]['queues']")" = 2 ] ||
	fail "list: expected 2 queues: $(cat "$WORK/list.json")"
$CTL list | grep -q "connected.*$WORK/d1.img" ||
	fail "list: the table does not show the device"

$CTL --json stats 1/51712 >"$WORK/s1.json" || fail "blkbackctl stats failed"
sleep 1
$CTL --json stats 1/51712 >"$WORK/s2.json" || fail "blkbackctl stats failed"
r1=$(json "$WORK/s1.json" "d['devices'][0]['read']['requests']")
r2=$(json "$WORK/s2.json" "d['devices'][0]['read']['requests']")
w2=$(json "$WORK/s2.json" "d['devices'][0]['write']['requests']")
[ "$r1" -gt 0 ] && [ "$r2" -gt "$r1" ] && [ "$w2" -gt 0 ] ||
	fail "stats do not count the guest's I/O (reads $r1 then $r2, writes $w2)"
[ "$(json "$WORK/s2.json" "d['devices'][0]['stages_us']['io']['count']")" -gt 0 ] ||
	fail "stats: no stage times with --stage-timing"
$CTL stats | grep -q "stage io" || fail "stats: the table has no stage times"

if $CTL stats 9/9 2>"$WORK/err"; then
	fail "stats of a missing device succeeded"
fi
grep -q "no such device" "$WORK/err" || fail "stats 9/9: $(cat "$WORK/err")"

wait "$front" || fail "the guest failed"
expect_verified "$WORK/front-1.out" "the guest"
# Once the guest is gone its final counts are in the log; the sectors read
# and written must be what the guest itself counted.
wait_file_line "$WORK/blkbackd.log" "vbd 1/51712: read" 10 ||
	fail "no final counters logged"
python3 - "$WORK/blkbackd.log" "$WORK/front-1.out" <<'PY' ||
import re, sys
log = open(sys.argv[1]).read()
front = open(sys.argv[2]).read()
rd, wr = (int(x) for x in re.search(
    r"vbd 1/51712: read \d+ \((\d+) sectors.*write \d+ \((\d+) sectors",
    log).groups())
gw, gr = (float(x) for x in re.search(
    r"wrote ([\d.]+) MiB read ([\d.]+) MiB", front).groups())
ok = abs(rd / 2048 - gr) < 0.06 and abs(wr / 2048 - gw) < 0.06
print("daemon read %.2f MiB, wrote %.2f MiB; guest read %.1f, wrote %.1f"
      % (rd / 2048, wr / 2048, gr, gw))
sys.exit(0 if ok else 1)
PY
	fail "the daemon's counts differ from the guest's"
assert_daemon_alive
exit 0

#!/bin/sh
# Without --stage-timing the metrics stay small: at most 30 series per
# disk (two disks, counted by their domid label), no stage histogram, and
# yet time per operation: blkbackd_request_seconds_total grows with each
# guest's reads and writes, here measured with the tick-coarse clock, as
# where CLOCK_MONOTONIC would cost a system call (the clock source of a
# PV dom0, faked through BLKBACKD_SYSFS), which adds no system call: with
# strace, not one clock_gettime(2) call while the guests work (and
# io_uring_enter(2) calls, to show that it saw the workers). Every
# series names its guest.
. "$top_srcdir/tests/lib.sh"
requires_prometheus_parser
xensim_setup
mkdir -p "$WORK/sys/devices/system/clocksource/clocksource0" ||
	hard_error "mkdir failed"
echo xen >"$WORK/sys/devices/system/clocksource/clocksource0/current_clocksource"
BLKBACKD_SYSFS=$WORK/sys
export BLKBACKD_SYSFS
start_daemon
unset BLKBACKD_SYSFS
grep -q "request times: the tick-coarse clock (clock source xen)" \
	"$WORK/blkbackd.log" || fail "the daemon did not say which clock"
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

for d in 1 2; do
	guest "$d" 32M
	attach "$d"
done
# Counters are per connection: scraped while the guests are at work.
blkfront_bg 1 --seconds 6 --depth 8 --verify
p1=$BG_PID
blkfront_bg 2 --seconds 6 --depth 4 --verify
p2=$BG_PID
for d in 1 2; do
	wait_node "$(be_path "$d")/state" 4 15 || fail "guest $d did not connect"
done
sleep 1
if command -v strace >/dev/null; then
	strace -f -qq -e trace=clock_gettime,io_uring_enter -p "$DAEMON_PID" \
		-o "$WORK/strace.out" &
	ST_PID=$!
	track_pid $ST_PID
fi
sleep 2
if [ -n "${ST_PID:-}" ]; then
	kill -INT "$ST_PID"
	wait "$ST_PID" 2>/dev/null
	# The workers' own calls show that strace saw them.
	grep -q 'io_uring_enter(' "$WORK/strace.out" ||
		fail "strace saw no io_uring_enter(2) of the workers"
	! grep -q 'clock_gettime(' "$WORK/strace.out" ||
		fail "the daemon called clock_gettime(2): $(head -n 3 "$WORK/strace.out")"
	note "strace: no clock_gettime(2) system call while the guests worked"
fi
$CTL metrics >"$WORK/m.prom" || fail "blkbackctl metrics failed"
blkfront_wait 1 "$p1"
blkfront_wait 2 "$p2"

"$PY" - "$WORK/m.prom" <<'PY' || fail "the metrics are wrong"
import sys
from prometheus_client.parser import text_string_to_metric_families

per_disk = {}
fams = set()
secs = {}
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    fams.add(fam.name)
    for s in fam.samples:
        if "domid" not in s.labels:
            continue
        d = s.labels["domid"]
        per_disk[d] = per_disk.get(d, 0) + 1
        if s.labels.get("domain") != "xensim-guest" + d:
            sys.exit("series %s of domain %s has domain=%r"
                     % (s.name, d, s.labels.get("domain")))
        if s.name == "blkbackd_request_seconds_total":
            secs[(d, s.labels["op"])] = s.value
print("series per disk:", per_disk)
if sorted(per_disk) != ["1", "2"]:
    sys.exit("disks in the metrics: %s" % sorted(per_disk))
for d, n in per_disk.items():
    if n > 30:
        sys.exit("%d series for disk %s, more than 30" % (n, d))
if "blkbackd_stage_seconds" in fams:
    sys.exit("stage histograms without --stage-timing")
for d in ("1", "2"):
    for op in ("read", "write"):
        if not secs.get((d, op), 0) > 0:
            sys.exit("no time measured for %s on disk %s" % (op, d))
PY
assert_daemon_alive
exit 0

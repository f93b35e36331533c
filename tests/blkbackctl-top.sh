#!/bin/sh
# `blkbackctl top -b -n 2` while a guest reads and writes: two tables whose
# columns parse; in the first, every rate and latency is "-" (one sample
# measures no interval), in the second the guest's read and write rates
# and latencies are positive and plausible, in flight and queued are
# counts; an idle disk of another guest shows 0 requests/s and "-" for its
# latency. --json says the same as JSON lines, null where not measured.
# Options of top are refused with other commands (exit 2).
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

guest 1 32M
attach 1
guest 2 8M
attach 2
# Guest 2 connects and does nothing until its stdin ends.
sleep 30 | "$BLKFRONT" --domid 2 --hold >"$WORK/front-2.out" 2>&1 &
track_pid $!
wait_file_line "$WORK/front-2.out" CONNECTED 15 || fail "guest 2 did not connect"
blkfront_bg 1 --seconds 8 --depth 8 --verify
wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"
sleep 1

$CTL top -b -n 2 -d 2 >"$WORK/top.txt" || fail "blkbackctl top -b failed"
$CTL --json top -b -n 2 -d 1 >"$WORK/top.json" ||
	fail "blkbackctl --json top failed"
blkfront_wait 1 "$BG_PID"
cat "$WORK/top.txt"

python3 - "$WORK/top.txt" "$WORK/top.json" <<'PY' || fail "top is wrong"
import json, re, sys

tables, cur = [], None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("blkbackctl top:"):
        cur = []
        tables.append(cur)
    elif line.startswith("DOMAIN"):
        head = line.split()
    elif line.strip() and cur is not None:
        # DOMAIN is "ID NAME": two words.
        cells = line.split()
        cur.append(dict(zip(["domid"] + head, cells)))
if len(tables) != 2:
    sys.exit("%d tables, not 2" % len(tables))
rates = ("RD/s", "WR/s", "RD_MiB/s", "WR_MiB/s", "RD_ms", "WR_ms")
for row in tables[0]:
    if any(row[c] != "-" for c in rates):
        sys.exit("the first sample shows rates: %s" % row)
rows = {r["domid"]: r for r in tables[1]}
g1 = rows["1"]
if g1["DOMAIN"] != "xensim-guest1" or g1["DISK"] != "xvda":
    sys.exit("guest 1's row: %s" % g1)
for c in rates:
    v = float(g1[c])
    if not v > 0:
        sys.exit("guest 1: %s is %s" % (c, g1[c]))
# 8 requests at a time in 4 KiB blocks: no more than 1 GiB/s, and no
# request slower on average than the interval.
if float(g1["RD_MiB/s"]) + float(g1["WR_MiB/s"]) > 1024:
    sys.exit("impossible throughput: %s" % g1)
if max(float(g1["RD_ms"]), float(g1["WR_ms"])) > 2000:
    sys.exit("impossible latency: %s" % g1)
for c in ("INFLIGHT", "QUEUED"):
    if not 0 <= int(g1[c]) <= 32 * 16 * 64:
        sys.exit("guest 1: %s is %s" % (c, g1[c]))
g2 = rows["2"]
if g2["RD/s"] != "0.0" or g2["RD_ms"] != "-":
    sys.exit("the idle guest 2: %s" % g2)

lines = [json.loads(l) for l in open(sys.argv[2])]
if len(lines) != 2 or lines[0]["interval_s"] is not None:
    sys.exit("JSON lines: %s" % lines)
d0 = {d["domid"]: d for d in lines[0]["disks"]}
d1 = {d["domid"]: d for d in lines[1]["disks"]}
if d0[1]["read_requests_per_s"] is not None:
    sys.exit("a rate from one sample: %s" % d0[1])
if not d1[1]["read_requests_per_s"] > 0 or not d1[1]["write_latency_ms"] > 0:
    sys.exit("guest 1 in JSON: %s" % d1[1])
if d1[1]["domain"] != "xensim-guest1" or not 0.5 < lines[1]["interval_s"] < 5:
    sys.exit("JSON: %s" % lines[1])
print("guest 1:", g1)
PY

$CTL top -b -n 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "top -n 0 did not exit 2"
$CTL list -n 2 >/dev/null 2>&1
[ $? -eq 2 ] || fail "list -n 2 did not exit 2"
assert_daemon_alive
exit 0

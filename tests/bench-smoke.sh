#!/bin/sh
# blkback-bench smoke test: a short run of every job through every arm this
# machine can run, then checks that the table, CSV, JSON and SVG are
# well-formed and their numbers sane (not fast: timings are not asserted),
# that repeats are interleaved in rotated order after a warm-up and report
# each median's spread, that every run starts with its images out of the
# page cache, that --min-time repeats the work until a job has run that
# long, that idle guests attach and are measured, that a missing
# daemon is reported as a skipped arm with exit status 1, that bad usage
# exits 2, and that an interrupted run leaves no processes, loop devices,
# Ceph daemons or files behind.
. "$top_srcdir/tests/lib.sh"

BENCH=$top_builddir/tools/bench/blkback-bench
[ -x "$BENCH" ] || fail "blkback-bench not built at $BENCH"
requires_xenstored
requires python3
scratch_dir

# The loop arms need root and /dev/loop-control; without them they are
# left out here (their skip path is what the missing-daemon case tests).
ARMS=raw,blkbackd
if [ -w /dev/loop-control ] && losetup -f >/dev/null 2>&1; then
	ARMS=raw,loop,loop-dio,blkbackd
else
	note "no usable loop devices: running only $ARMS"
fi
# The NBD arm: blkbackd with every image behind its own nbdkit.
command -v nbdkit >/dev/null 2>&1 || skip "no nbdkit (install nbdkit)"
ARMS=$ARMS,nbd
# The RBD arm: every image in a one-node Ceph cluster the benchmark starts;
# only in the main run (it takes some ten seconds to start).
ceph_missing=
for t in ceph-mon ceph-osd ceph rbd monmaptool ceph-authtool; do
	command -v "$t" >/dev/null 2>&1 || ceph_missing="$ceph_missing $t"
done
[ -z "$ceph_missing" ] ||
	skip "no$ceph_missing (install ceph-mon ceph-osd ceph-common)"
MAIN_ARMS=$ARMS,rbd,floor
# The daemon's system calls are counted with perf: required here.
command -v perf >/dev/null 2>&1 || skip "no perf (install linux-perf)"
JOBS=randread,randwrite,seqwrite,seqread,build,qd1read
GUESTS=1,3
SIZE=$((2 * 1024 * 1024))

"$BENCH" --guests 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--guests 0 must be a usage error (exit 2)"
"$BENCH" --arms bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "--arms bogus must be a usage error (exit 2)"
"$BENCH" --idle-guests 10 --arms raw >/dev/null 2>&1
[ $? -eq 2 ] || fail "--idle-guests without the blkbackd arm must exit 2"

note "running $JOBS on $MAIN_ARMS for $GUESTS guests"
"$BENCH" --guests "$GUESTS" --jobs "$JOBS" --arms "$MAIN_ARMS" --size 2M \
	--min-time 0 \
	--dir "$WORK" --out "$WORK/r" \
	>"$WORK/table.out" 2>"$WORK/run.err" ||
	fail "blkback-bench exited $? on a run that should succeed"

for f in r.csv r.json r.svg; do
	[ -s "$WORK/$f" ] || fail "$f was not written"
done
ls -d "$WORK"/blkback-bench.* >/dev/null 2>&1 &&
	fail "the work directory was not removed"
grep -q 'target blkbackd / raw aggregate at N=3' "$WORK/table.out" ||
	fail "the table has no targets line"
grep -Eq '(PASS|MISS)$' "$WORK/table.out" || fail "no PASS/MISS in the table"
grep -q '^Host hand-off' "$WORK/table.out" ||
	fail "the table does not show the host's hand-off cost"

python3 - "$WORK" "$JOBS" "$MAIN_ARMS" "$GUESTS" "$SIZE" <<'PY' || fail "outputs"
import csv, json, math, os, sys, xml.etree.ElementTree as ET

work, jobs, arms, guests, size = sys.argv[1:]
jobs, arms = jobs.split(","), arms.split(",")
guests, size = [int(g) for g in guests.split(",")], int(size)
bad = []

def check(cond, what):
    if not cond:
        bad.append(what)

doc = json.load(open(f"{work}/r.json"))
check(doc["tool"] == "blkback-bench" and doc["format"] == 2, "header")
check(doc["config"]["guests"] == guests, "config.guests")
check(doc["config"]["arms"] == arms and doc["config"]["jobs"] == jobs,
      "config arms/jobs")
# The host's hand-off cost, measured before the jobs: a round trip on one
# CPU always, across two where the test may use two.
h = doc["host_handoff"]
check(h["same_cpu_round_trip_us"] is not None and
      0 < h["same_cpu_round_trip_us"] < 1e5, f"host_handoff {h}")
check((h["cross_cpu_round_trip_us"] is not None) == (len(h["cpus"]) == 2),
      f"host_handoff cpus {h}")
check(h["cross_cpu_round_trip_us"] is None or
      h["cross_cpu_round_trip_us"] > 0, f"host_handoff {h}")
# The images' block device, whose counters give device_us_per_io.
st = os.stat(work)
has_disk = os.major(st.st_dev) != 0 and os.access(
    f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat",
    os.R_OK)
res = doc["results"]
check(len(res) == len(jobs) * len(arms) * len(guests), "result count")
seen = set()
for r in res:
    key = (r["job"], r["arm"], r["guests"])
    seen.add(key)
    where = "/".join(map(str, key))
    check(r["status"] == "ok", f"{where}: status {r['status']} {r['note']}")
    if r["status"] != "ok":
        continue
    n, wall = r["guests"], r["wall_seconds"]
    check(r["repeats"] == 1, f"{where}: repeats")
    check(len(r["guest_seconds"]) == n, f"{where}: guest_seconds length")
    check(all(0 < s <= wall * 1.05 + 0.05 for s in r["guest_seconds"]),
          f"{where}: guest time outside (0, wall]")
    check(r["bytes"] == n * size, f"{where}: bytes {r['bytes']}")
    check(r["fairness"] >= 1.0, f"{where}: fairness < 1")
    mbps = r["bytes"] / 1e6 / wall
    check(math.isclose(r["aggregate_mbps"], mbps, rel_tol=0.01),
          f"{where}: MB/s {r['aggregate_mbps']} vs bytes/wall {mbps}")
    check(r["aggregate_iops"] > 0 and r["ops"] > 0, f"{where}: iops")
    if r["job"] in ("randread", "randwrite"):
        check(r["ops"] == n * size // 4096, f"{where}: ops {r['ops']}")
    check(0 < r["latency_p50_us"] <= r["latency_p99_us"] <= wall * 1.1e6,
          f"{where}: latency p50 {r['latency_p50_us']} p99 "
          f"{r['latency_p99_us']}")
    raw = next(x for x in res if x["arm"] == "raw" and
               x["job"] == r["job"] and x["guests"] == n)
    added = r["latency_p50_added_over_raw_us"]
    if r["arm"] in ("raw", "floor"):
        check(added is None, f"{where}: {r['arm']} adds no latency to raw")
    else:
        # Each number has six significant digits in the JSON, so each
        # is off by up to 5e-6 of itself: allow for all three. Below
        # zero (faster than raw) it is no latency: not measured.
        want = r["latency_p50_us"] - raw["latency_p50_us"]
        tol = 0.2 + 1e-5 * (r["latency_p50_us"] + raw["latency_p50_us"])
        check(added is None and want < tol or
              added is not None and added >= 0 and
              math.isclose(added, want, abs_tol=tol + 1e-5 * added),
              f"{where}: added latency {added} is not p50 - raw's p50")
    check(r["image_cache_at_start_mib"] == 0,
          f"{where}: {r['image_cache_at_start_mib']} MiB cached at start")
    # /proc/stat counts ticks: what they cannot resolve over runs this
    # short is not measured (null), never 0 or below.
    for key in ("host_busy_pct", "host_others_pct"):
        check(r[key] is None or r[key] > 0, f"{where}: {key} {r[key]}")
    check(r["host_steal_pct"] >= 0, f"{where}: host steal")
    for key, pair in r["spread"].items():
        check(pair is None and r[key] is None or
              pair is not None and pair[0] == pair[1] == r[key],
              f"{where}: one repeat, yet {key} spreads {pair}")
    # Every request of raw and blkbackd reaches the device (O_DIRECT on
    # evicted images); a request takes more than 0 and less than the run,
    # give or take the counters' whole milliseconds: the difference of two
    # of them is up to 1 ms off, shared by at least one request (in CI a
    # raw 2 MiB seqread read 1000 us/io, longer than its run). Other arms'
    # servers may send it next to nothing (the rbd OSD): their figure is
    # then null, never 0.
    dev = r["device_us_per_io"]
    dev_max = wall * 1e6 + 1000
    if not has_disk or r["arm"] == "floor":
        check(dev is None, f"{where}: device time {dev} without a device")
    elif r["arm"] in ("raw", "blkbackd"):
        check(dev is not None and 0 < dev <= dev_max,
              f"{where}: device time {dev}")
    else:
        check(dev is None or 0 < dev <= dev_max,
              f"{where}: device time {dev}")
    # The daemon's CPU clock counts nanoseconds: it used some for every
    # request. The loop arms' figure stands on the host's ticks: null
    # where they cannot resolve it, never 0 for work done.
    cpu = r["backend_cpu_us_per_io"]
    if r["arm"] == "raw":
        check(cpu is None and r["cpu_method"] == "none", f"{where}: cpu")
    elif r["arm"] in ("blkbackd", "nbd", "rbd", "floor"):
        check(cpu is not None and cpu > 0 and
              r["cpu_method"] == "daemon-proc-pid-stat", f"{where}: cpu")
    else:
        check((cpu is None or cpu > 0) and
              r["cpu_method"] == "host-busy-minus-guests", f"{where}: cpu")
    # The daemon's own counts per request: every request costs it system
    # calls (at least a notification or a submission per batch), and the
    # sleeps are counted, zero or more; no daemon, no figures.
    calls, sleeps = r["syscalls_per_io"], r["voluntary_switches_per_io"]
    if r["cpu_method"] == "daemon-proc-pid-stat":
        check(calls is not None and 0 < calls < 1000,
              f"{where}: system calls per request {calls}")
        check(sleeps is not None and 0 <= sleeps < 1000,
              f"{where}: sleeps per request {sleeps}")
    else:
        check(calls is None and sleeps is None,
              f"{where}: counts {calls} {sleeps} without a daemon")
    # What serving real I/O adds over raw and the floor, for the arms
    # that do I/O through the daemon.
    over = r["latency_p50_added_over_raw_and_floor_us"]
    if r["arm"] in ("blkbackd", "nbd", "rbd"):
        # Below zero it is noise, not a latency: then not measured.
        fl = next(x for x in res if x["arm"] == "floor" and
                  x["job"] == r["job"] and x["guests"] == n)
        want = -1 if added is None else added - fl["latency_p50_us"]
        check(over is None and want < 0.3 or
              over is not None and over >= 0 and
              math.isclose(over, want,
                           abs_tol=0.3 + 1e-5 * (abs(added) +
                                                 fl["latency_p50_us"])),
              f"{where}: {over} is not p50 - raw's - the floor's")
    else:
        check(over is None, f"{where}: {over} added over raw and floor")
check(len(seen) == len(res), "duplicate results")
names = {t["name"] for t in doc["targets"]}
check(names == {"blkbackd_vs_raw", "blkbackd_vs_loop", "blkbackd_fairness",
                "blkbackd_scaling",
                "blkbackd_p50_added_over_raw_and_floor_us",
                "nbd_vs_file", "rbd_vs_file"},
      f"target names {names}")
check(len(doc["targets"]) == 6 * len(jobs) + 1, "targets per job")
for t in doc["targets"]:
    if t["name"] in ("nbd_vs_file", "rbd_vs_file"):
        check(t["threshold"] is None and t["pass"] is None and
              t["value"] is not None and t["value"] > 0,
              f"the NBD and RBD ratios are for information: {t}")
lat = [t for t in doc["targets"]
       if t["name"] == "blkbackd_p50_added_over_raw_and_floor_us"]
bb1 = next(x for x in res if x["job"] == "qd1read" and
           x["arm"] == "blkbackd" and x["guests"] == guests[0])
check(len(lat) == 1 and lat[0]["job"] == "qd1read" and
      lat[0]["value"] == bb1["latency_p50_added_over_raw_and_floor_us"] and
      lat[0]["comparison"] == "<=" and lat[0]["threshold"] == 2,
      f"the qd1read latency target {lat}")
for t in doc["targets"]:
    if t["value"] is not None and t["threshold"] is not None:
        ok = t["value"] >= t["threshold"] if t["comparison"] == ">=" \
            else t["value"] <= t["threshold"]
        check(t["pass"] == ok, f"target {t['job']}/{t['name']} pass flag")

rows = list(csv.DictReader(open(f"{work}/r.csv")))
check(len(rows) == len(res), "CSV row count")
for row in rows:
    # One repeat: the median is its minimum (or both not measured).
    added = row["latency_p50_added_over_raw_us"]
    check(added == "" if row["arm"] in ("raw", "floor")
          else added == row["latency_p50_added_over_raw_us_min"],
          "CSV added latency and its spread")
    gs = row["guest_seconds"].split(";")
    check(len(gs) == int(row["guests"]), "CSV guest_seconds")
    check(row["status"] == "ok" and float(row["aggregate_mbps"]) > 0,
          "CSV numbers")

svg = ET.parse(f"{work}/r.svg").getroot()
check(svg.tag.endswith("svg"), "SVG root")
paths = [e for e in svg.iter() if e.tag.endswith("path")]
check(len(paths) == 2 * len(jobs) * len(arms), f"SVG has {len(paths)} lines")

for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY

note "--min-time: the work again until the job has run that long"
"$BENCH" --min-time 0.5 --guests 2 --jobs randread,qd1read --arms raw,floor \
	--size 1M --warmup 0 --dir "$WORK" --json "$WORK/t.json" \
	>/dev/null 2>"$WORK/min-time.err" || fail "the --min-time run failed"
python3 - "$WORK/t.json" <<'PY' || fail "--min-time"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
if doc["config"]["min_time_seconds"] != 0.5:
    bad.append(f"config {doc['config']}")
for r in doc["results"]:
    where = f"{r['job']}/{r['arm']}"
    if r["status"] != "ok":
        bad.append(f"{where}: {r['status']} {r['note']}")
        continue
    # Each guest went on past its 1 MiB until half a second had passed,
    # in whole rounds of it.
    if min(r["guest_seconds"]) < 0.5:
        bad.append(f"{where}: a guest ran {min(r['guest_seconds'])} s")
    if r["bytes"] % (1 << 20) or r["bytes"] <= 2 << 20:
        bad.append(f"{where}: {r['bytes']} bytes")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY

note "--repeat 3: warm-up, rotated arm order, medians with their spread"
"$BENCH" --guests 2 --jobs randread --arms raw,blkbackd --size 1M --repeat 3 \
	--min-time 0 \
	--dir "$WORK" --json "$WORK/m.json" --csv "$WORK/m.csv" \
	>"$WORK/m.table" 2>"$WORK/repeat.err" || fail "the --repeat run failed"
grep -q '^\[warm-up\] randread  raw ' "$WORK/repeat.err" ||
	fail "no unmeasured warm-up run before the repeats"
order=$(sed -n 's/^\[\([0-9]\)\/6\] randread  \([a-z]*\) .*/\1\2/p' \
	"$WORK/repeat.err" | tr '\n' ' ')
[ "$order" = "1raw 2blkbackd 3blkbackd 4raw 5raw 6blkbackd " ] ||
	fail "arms not interleaved in rotated order: $order"
[ "$(grep -c 'min-max ' "$WORK/m.table")" -ge 2 ] ||
	fail "the table shows no spread next to the medians"
python3 - "$WORK/m.json" "$WORK/m.csv" <<'PY' || fail "--repeat in JSON"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
assert doc["config"]["warmup"] == 1, doc["config"]
for r in doc["results"]:
    assert r["status"] == "ok" and r["repeats"] == 3, r
    assert len(r["guest_seconds"]) == 2 and min(r["guest_seconds"]) > 0
    for key, pair in r["spread"].items():
        if pair is None:
            assert r[key] is None, (key, r[key])
            continue
        lo, hi = pair
        assert lo <= r[key] <= hi, (r["arm"], key, lo, r[key], hi)
    assert r["spread"]["aggregate_mbps"][0] > 0
t = [t for t in doc["targets"] if t["name"] == "blkbackd_vs_raw"][0]
assert t["min"] <= t["value"] <= t["max"], t
for row in csv.DictReader(open(sys.argv[2])):
    assert float(row["aggregate_mbps_min"]) <= float(row["aggregate_mbps"]) \
        <= float(row["aggregate_mbps_max"]), row
PY

note "--idle-guests 20: attached to the daemon and measured"
"$BENCH" --idle-guests 8,20 --jobs none --dir "$WORK" --json "$WORK/idle.json" \
	>"$WORK/idle.table" 2>"$WORK/idle.err" || fail "the idle-guest run failed"
grep -q 'target attach of 20 idle guests' "$WORK/idle.table" ||
	fail "no attach target in the table"
python3 - "$WORK/idle.json" <<'PY' || fail "--idle-guests in JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["config"]["idle_guests"] == [8, 20], doc["config"]
idle = doc["idle_guests"]
assert [g["guests"] for g in idle] == [8, 20], idle
for g in idle:
    assert g["status"] == "ok", g
    assert 0 < g["plug_seconds"] < g["attach_seconds"], g
    assert 0 < g["connect_seconds"] < g["attach_seconds"], g
    # All but the last are detached; the last goes with the host.
    assert (g["detach_seconds"] is None) == (g is idle[-1]), g
    assert g is idle[-1] or g["detach_seconds"] > 0, g
    d, before = g["daemon"], g["daemon_before"]
    # Each idle disk costs the daemon at least its open image.
    assert d["fds"] >= before["fds"] + g["guests"], (d, before)
    assert d["rss_mib"] > 0 and d["threads"] >= 1, d
    assert d["fds"] < d["nofile_limit"], d
    s = g["frontend_server"]
    assert s["fds"] >= g["guests"] and s["rss_mib"] > 0, s
    assert g["attach_pass"] == (g["attach_seconds"] <= 30), g
    assert g["daemon_rss_pass"] == (d["rss_mib"] <= 200), g
PY

note "an arm that cannot run is skipped, reported, and makes the exit 1"
"$BENCH" --min-time 0 --guests 1 --jobs randread --arms raw,blkbackd --size 1M \
	--blkbackd "$WORK/no-such-daemon" --dir "$WORK" --json "$WORK/s.json" \
	>"$WORK/skip.out" 2>"$WORK/skip.err"
[ $? -eq 1 ] || fail "a skipped arm must make the exit status 1"
grep -q "arm blkbackd skipped: no daemon at" "$WORK/skip.err" ||
	fail "no clear message for the skipped arm"
python3 - "$WORK/s.json" <<'PY' || fail "skipped arm in JSON"
import json, sys
r = {x["arm"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert r["raw"]["status"] == "ok", r["raw"]
assert r["blkbackd"]["status"] == "skipped", r["blkbackd"]
assert "no daemon" in r["blkbackd"]["note"]
assert r["blkbackd"]["aggregate_mbps"] is None
PY

note "an interrupted run cleans up after itself"
"$BENCH" --min-time 0 --guests 3 --jobs randread --arms "$ARMS" --size 256M \
	--dir "$WORK" --json "$WORK/i.json" >/dev/null 2>"$WORK/int.err" &
pid=$!
tries=600
# With loop arms, interrupt while guests have the loop devices open: the
# kernel lets go of a killed guest's io_uring (and so of the device) a
# little after the guest is reaped, and the benchmark must wait for that.
running() {
	case $ARMS in
	*loop*) losetup -a 2>/dev/null | grep -q "$WORK" ;;
	*) grep -q 'N=3' "$WORK/int.err" 2>/dev/null ;;
	esac
}
until [ -e "$WORK"/blkback-bench.*/host/xenstored.pid ] && running; do
	kill -0 "$pid" 2>/dev/null || fail "the run ended before it was interrupted"
	tries=$((tries - 1))
	[ "$tries" -gt 0 ] || { kill -KILL "$pid"; fail "run never started"; }
	sleep 0.1
done
xs_pid=$(cat "$WORK"/blkback-bench.*/host/xenstored.pid)
kill -INT "$pid"
wait "$pid"
st=$?
[ "$st" -ne 0 ] || fail "an interrupted run must not exit 0"
grep -q interrupted "$WORK/int.err" || fail "no message on interruption"
ls -d "$WORK"/blkback-bench.* >/dev/null 2>&1 &&
	fail "interrupted: the work directory is still there"
# Gone, or a zombie waiting for init (its parent script has exited).
pid_alive "$xs_pid" && fail "interrupted: xenstored $xs_pid lives on"
if command -v losetup >/dev/null && losetup -a 2>/dev/null | grep -q "$WORK"; then
	fail "interrupted: loop devices left: $(losetup -a | grep "$WORK")"
fi

note "a run interrupted while its Ceph cluster starts stops the cluster"
"$BENCH" --min-time 0 --guests 1 --jobs randread --arms blkbackd,rbd --size 1M \
	--dir "$WORK" --json "$WORK/c.json" >/dev/null 2>"$WORK/ceph.err" &
pid=$!
# pid_in FILE: the pid FILE holds, once it holds one (a daemon writes it
# after it started).
pid_in() {
	pi=$(cat "$1" 2>/dev/null)
	case $pi in '' | *[!0-9]*) return 1 ;; esac
	echo "$pi"
}
tries=600
until mon_pid=$(pid_in "$WORK"/blkback-bench.*/ceph/run/mon.a.pid) &&
	osd_pid=$(pid_in "$WORK"/blkback-bench.*/ceph/run/osd.0.pid); do
	kill -0 "$pid" 2>/dev/null || fail "the run ended before its OSD started: $(cat "$WORK/ceph.err")"
	tries=$((tries - 1))
	[ "$tries" -gt 0 ] || { kill -KILL "$pid"; fail "the OSD never started"; }
	sleep 0.1
done
kill -INT "$pid"
wait "$pid" && fail "an interrupted run must not exit 0"
ls -d "$WORK"/blkback-bench.* >/dev/null 2>&1 &&
	fail "interrupted in Ceph: the work directory is still there"
pid_alive "$mon_pid" && fail "interrupted: ceph-mon $mon_pid lives on"
pid_alive "$osd_pid" && fail "interrupted: ceph-osd $osd_pid lives on"
note "ok"

#!/bin/sh
# blkback-bench smoke test: a short run of every job through every arm this
# machine can run, then checks that the table, CSV, JSON and SVG are
# well-formed and their numbers sane (not fast: timings are not asserted),
# that a missing daemon is reported as a skipped arm with exit status 1,
# that bad usage exits 2, and that an interrupted run leaves no processes,
# loop devices or files behind.
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
JOBS=randread,randwrite,seqwrite,seqread,build
GUESTS=1,3
SIZE=$((2 * 1024 * 1024))

"$BENCH" --guests 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--guests 0 must be a usage error (exit 2)"
"$BENCH" --arms bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "--arms bogus must be a usage error (exit 2)"

note "running $JOBS on $ARMS for $GUESTS guests"
"$BENCH" --guests "$GUESTS" --jobs "$JOBS" --arms "$ARMS" --size 2M \
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

python3 - "$WORK" "$JOBS" "$ARMS" "$GUESTS" "$SIZE" <<'PY' || fail "outputs"
import csv, json, math, sys, xml.etree.ElementTree as ET

work, jobs, arms, guests, size = sys.argv[1:]
jobs, arms = jobs.split(","), arms.split(",")
guests, size = [int(g) for g in guests.split(",")], int(size)
bad = []

def check(cond, what):
    if not cond:
        bad.append(what)

doc = json.load(open(f"{work}/r.json"))
check(doc["tool"] == "blkback-bench" and doc["format"] == 1, "header")
check(doc["config"]["guests"] == guests, "config.guests")
check(doc["config"]["arms"] == arms and doc["config"]["jobs"] == jobs,
      "config arms/jobs")
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
    cpu = r["backend_cpu_us_per_io"]
    if r["arm"] == "raw":
        check(cpu is None and r["cpu_method"] == "none", f"{where}: cpu")
    elif r["arm"] == "blkbackd":
        check(cpu is not None and cpu >= 0 and
              r["cpu_method"] == "daemon-proc-pid-stat", f"{where}: cpu")
    else:
        check(cpu is not None and cpu >= 0 and
              r["cpu_method"] == "host-busy-minus-guests", f"{where}: cpu")
check(len(seen) == len(res), "duplicate results")
names = {t["name"] for t in doc["targets"]}
check(names == {"blkbackd_vs_raw", "blkbackd_vs_loop", "blkbackd_fairness",
                "blkbackd_scaling"}, f"target names {names}")
check(len(doc["targets"]) == 4 * len(jobs), "targets per job")
for t in doc["targets"]:
    if t["value"] is not None:
        ok = t["value"] >= t["threshold"] if t["comparison"] == ">=" \
            else t["value"] <= t["threshold"]
        check(t["pass"] == ok, f"target {t['job']}/{t['name']} pass flag")

rows = list(csv.DictReader(open(f"{work}/r.csv")))
check(len(rows) == len(res), "CSV row count")
for row in rows:
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

note "--repeat 3 reports medians of three runs"
"$BENCH" --guests 2 --jobs randread --arms raw --size 1M --repeat 3 \
	--dir "$WORK" --json "$WORK/m.json" >/dev/null 2>"$WORK/repeat.err" ||
	fail "the --repeat run failed"
python3 - "$WORK/m.json" <<'PY' || fail "--repeat in JSON"
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert len(r) == 1 and r[0]["status"] == "ok" and r[0]["repeats"] == 3, r
assert len(r[0]["guest_seconds"]) == 2 and min(r[0]["guest_seconds"]) > 0
PY

note "an arm that cannot run is skipped, reported, and makes the exit 1"
"$BENCH" --guests 1 --jobs randread --arms raw,blkbackd --size 1M \
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
"$BENCH" --guests 3 --jobs randread --arms "$ARMS" --size 256M \
	--dir "$WORK" --json "$WORK/i.json" >/dev/null 2>"$WORK/int.err" &
pid=$!
tries=600
until [ -e "$WORK"/blkback-bench.*/host/xenstored.pid ] &&
	grep -q 'N=3' "$WORK/int.err" 2>/dev/null; do
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
note "ok"

#!/bin/sh
# blkback-bench prints no number that cannot be true. A short run, as
# `make demo` does but small, off a terminal: its per-run lines, its table
# and its plot are read as an operator would, and checked for a negative
# percentage, latency or time, a job time that reads 0, a CPU cost of 0
# next to I/O done, a '\r' in what a log keeps, MiB next to MB on a line,
# and axis ticks that are not round or a plot without its title and run;
# then that --dir is created when missing, and named when it cannot be.
. "$top_srcdir/tests/lib.sh"

BENCH=$top_builddir/tools/bench/blkback-bench
[ -x "$BENCH" ] || fail "blkback-bench not built at $BENCH"
requires_xenstored
scratch_dir

ARMS=raw,blkbackd,floor
if [ -w /dev/loop-control ] && losetup -f >/dev/null 2>&1; then
	ARMS=raw,loop,blkbackd,floor
else
	note "no usable loop devices: running only $ARMS"
fi
DIR=$WORK/not/yet/there
FAILED=0

note "a short run on $ARMS into the missing --dir $DIR"
"$BENCH" --guests 1,2 --jobs randread,seqwrite,qd1read --arms "$ARMS" \
	--size 1M --repeat 2 --warmup 0 --idle-guests 4 --dir "$DIR" \
	--out "$WORK/r" >"$WORK/table.out" 2>"$WORK/run.err" ||
	fail "blkback-bench exited $? on a run that should succeed"
[ -d "$DIR" ] || fail "--dir $DIR was not created"
ls -d "$DIR"/blkback-bench.* >/dev/null 2>&1 &&
	fail "the work directory in --dir was not removed"

# Off a terminal, progress is whole lines: no carriage return anywhere.
if grep -q "$(printf '\r')" "$WORK/table.out" "$WORK/run.err"; then
	fail_later "a carriage return in output that is not a terminal"
fi

# A negative number: a minus sign that starts a number (after a space,
# '(', '=' or ':'), or the upper end of a range that is negative ("3--5").
# The guest-time ranges ("0.0031-0.0040") and min-max words do not match.
negative='(^|[[:space:](=:,])-[0-9.]|[0-9]--[0-9.]'
if grep -En "$negative" "$WORK/table.out" "$WORK/run.err"; then
	fail_later "a negative number in the output (above)"
fi

# The per-run lines: each guest's time is more than zero as printed.
runs=$(grep -c '^\[[0-9]*/[0-9]*\] ' "$WORK/run.err")
[ "$runs" -gt 0 ] || fail "no per-run lines in the output"
if grep -E '^\[[0-9]+/[0-9]+\] ' "$WORK/run.err" |
	grep -E ' guests (0(\.0*)?-|[0-9.]+-0(\.0*)? s)'; then
	fail_later "a guest time that reads 0 (above)"
fi

# The table's rows: N, arm, guest s (min-max), max/min, MB/s, IOPS, p50,
# p50 +raw, p99, dev us/io, cpu us/io. No zero time or CPU next to I/O.
awk -v arms="$ARMS" '
	BEGIN { split(arms, a, ","); for (i in a) arm[a[i]] = 1 }
	$1 ~ /^[0-9]+$/ && ($2 in arm) && NF == 11 {
		rows++
		split($3, t, "-")
		if (!(t[1] + 0 > 0) || !(t[2] + 0 > 0))
			{ print "zero guest time: " $0; bad++ }
		cpu = $11; sub(/\*$/, "", cpu)
		if ($6 + 0 > 0 && cpu != "n/a" && !(cpu + 0 > 0))
			{ print "cpu us/io " cpu " at " $6 " IOPS: " $0; bad++ }
		for (i = 7; i <= 10; i++)
			if ($i != "n/a" && !($i + 0 >= 0))
				{ print "column " i " reads " $i ": " $0; bad++ }
		if ($7 == "n/a" || $9 == "n/a" || !($7 + 0 > 0))
			{ print "no p50 or p99 for I/O done: " $0; bad++ }
	}
	END {
		if (!rows) { print "no table rows"; bad++ }
		exit bad > 0
	}' "$WORK/table.out" || fail_later "the table's numbers (above)"

# One unit family: MB (10^6 bytes) for every amount measured.
if grep -E 'MiB' "$WORK/table.out" "$WORK/run.err" | grep -E 'MB'; then
	fail_later "MiB and MB on one line (above)"
fi
if grep -E '^\[' "$WORK/run.err" | grep -E 'MiB'; then
	fail_later "a per-run line counts in MiB (above)"
fi

# The plot: a title, the run's parameters, and round y-axis ticks
# (0, then steps of 1, 2 or 5 x 10^k, plain decimals) in each panel.
svg=$WORK/r.svg
[ -s "$svg" ] || fail "no plot written"
grep -q "class='h'>blkback-bench: " "$svg" || fail_later "the plot has no title"
grep -q -- "--guests 1,2 --jobs randread,seqwrite,qd1read --arms $ARMS" \
	"$svg" || fail_later "the plot does not say the guests, jobs and arms"
grep -q -- "--size 1M --image-size 1M --min-time 0 --repeat 2 --warmup 0" \
	"$svg" || fail_later "the plot does not say the run's parameters"
sed -n "s/.*class='yl'>\([^<]*\)<.*/\1/p" "$svg" | awk '
	# The unit label ends a panel; its ticks came before it.
	!/^[0-9.]+$/ {
		if ($0 != "s" && $0 != "MB/s")
			{ print "a tick label " $0; bad++ }
		if (n < 4) { print "a panel with " n " ticks"; bad++ }
		n = 0; next
	}
	{
		v[n++] = $0
		if (n == 1 && $0 + 0 != 0) { print "an axis from " $0; bad++ }
		if (n == 2) {
			step = $0 + 0
			m = step
			while (m >= 10) m /= 10
			while (m < 1) m *= 10
			if (m - int(m + 0.5) > 1e-6 || int(m + 0.5) - m > 1e-6 ||
			    (int(m + 0.5) != 1 && int(m + 0.5) != 2 &&
			     int(m + 0.5) != 5))
				{ print "a step of " $0; bad++ }
		}
		if (n > 2) {
			d = ($0 - v[n - 2]) - step
			if (d > step * 1e-6 || -d > step * 1e-6)
				{ print "uneven ticks at " $0; bad++ }
		}
		panels += n == 1
	}
	END {
		if (!panels) { print "no axis ticks"; bad++ }
		exit bad > 0
	}' || fail_later "the plot's axis ticks (above)"

# The JSON: no negative percentage, latency or time, no zero CPU, time or
# latency for work done; not measured is null.
python3 - "$WORK/r.json" <<'PY' || fail_later "the JSON's numbers"
import json, sys

doc = json.load(open(sys.argv[1]))
bad = []
for r in doc["results"]:
    where = f"{r['job']}/{r['arm']}/{r['guests']}"
    if r["status"] != "ok":
        bad.append(f"{where}: {r['status']} {r['note']}")
        continue
    for key, v in r.items():
        if not (key.endswith("_pct") or key.endswith("_us") or
                key.endswith("_per_io") or key.endswith("_seconds")):
            continue
        for x in v if isinstance(v, list) else [v]:
            if x is not None and x < 0:
                bad.append(f"{where}: {key} {x}")
    positive = ["wall_seconds", "latency_p50_us", "latency_p99_us",
                "backend_cpu_us_per_io", "guest_cpu_us_per_io"]
    for key in positive:
        if r[key] is not None and not r[key] > 0:
            bad.append(f"{where}: {key} {r[key]} for {r['ops']} requests")
    if min(r["guest_seconds"]) <= 0:
        bad.append(f"{where}: guest_seconds {r['guest_seconds']}")
    if r["cpu_method"] == "daemon-proc-pid-stat" and \
            r["backend_cpu_us_per_io"] is None:
        bad.append(f"{where}: the daemon's CPU not measured")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY

note "a --dir that cannot be created is named, and the run does not start"
: >"$WORK/a-file"
"$BENCH" --guests 1 --jobs randread --arms raw --size 1M \
	--dir "$WORK/a-file/sub" --json "$WORK/x.json" \
	>/dev/null 2>"$WORK/dir.err"
st=$?
[ "$st" -eq 1 ] || fail_later "an impossible --dir exited $st, not 1"
grep -q "cannot create --dir $WORK/a-file/sub: $WORK/a-file/sub: " \
	"$WORK/dir.err" ||
	fail_later "no message naming the --dir: $(cat "$WORK/dir.err")"
[ ! -e "$WORK/x.json" ] || fail_later "a run started without its --dir"
finish "ok"

#!/bin/sh
# When the host fails a guest's I/O, the operator sees it: the image is
# truncated under the daemon, so the guest's reads past the new end come
# back short (-EIO). The first failure is logged at once, naming the
# domain and vdev; the ones that follow within the rate-limit interval are
# not logged one by one but in one summary line with their count; and
# `blkbackctl stats` counts them by operation and errno, in the table and
# in --json. The counts in the log add up to the counter.
. "$top_srcdir/tests/lib.sh"
requires python3
xensim_setup
interval=3
start_daemon --error-log-interval $interval
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
LINE="vbd 1/51712 (xvda): read failed: Input/output error"

guest 1 8M
attach 1
wait_node "$(be_path 1)/state" 2 15 || fail "the backend did not reach InitWait"
# The daemon has sized the image; from now on most of it is gone.
truncate -s 4096 "$WORK/d1.img" || hard_error "truncate failed"

runs=4
for i in $(seq $runs); do
	if "$BLKFRONT" --domid 1 --ops 200 --depth 8 --preexisting \
		>"$WORK/front-1.$i.out" 2>&1; then
		fail "run $i: the guest read past the image's end without an error"
	fi
	grep -q "^fact check=workload case=error-answer op=READ .* status=ERROR$" \
		"$WORK/front-1.$i.out" ||
		fail "run $i: the guest failed otherwise: $(cat "$WORK/front-1.$i.out")"
done

$CTL --json stats 1/51712 >"$WORK/s.json" || fail "blkbackctl stats failed"
count=$(python3 - "$WORK/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
errs = d.get("host_errors", [])
print(sum(e["count"] for e in errs
          if e["op"] == "read" and e["errno"] == "EIO"))
PY
) || fail "no host_errors in stats: $(cat "$WORK/s.json")"
[ "$count" -ge $runs ] ||
	fail "stats count $count read EIO errors for $runs failed runs: $(cat "$WORK/s.json")"
$CTL stats 1/51712 >"$WORK/s.txt" || fail "blkbackctl stats failed"
grep -q "host errors: read EIO (Input/output error) $count" "$WORK/s.txt" ||
	fail "the stats table does not show the errors: $(cat "$WORK/s.txt")"

first=$(grep -c -- "$LINE\$" "$WORK/blkbackd.log")
[ "$first" -eq 1 ] ||
	fail "the first error was logged $first times, wanted once"
# The rest arrive as one summary when the interval has passed.
wait_file_line "$WORK/blkbackd.log" "$LINE (x[0-9]* in [0-9]* s)" \
	$((interval + 3)) || fail "no summary line for the suppressed errors"
logged=$(python3 - "$WORK/blkbackd.log" "$LINE" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
line = re.escape(sys.argv[2])
n = len(re.findall(line + "$", log, re.M))
n += sum(int(x) for x in re.findall(line + r" \(x(\d+) in \d+ s\)$", log,
                                    re.M))
print(n)
PY
)
[ "$logged" -eq "$count" ] ||
	fail "the log accounts for $logged errors, the counter for $count"
assert_daemon_alive
exit 0

#!/bin/sh
# `blkbackctl metrics` speaks the Prometheus text format: the output is read
# with the Prometheus project's own Python parser, which rejects what the
# format does not allow. The per-disk series carry domid, the guest's name
# (domain), devid and vdev, the request, byte and time counters grow with
# the guest's I/O, the stage histograms (--stage-timing) are cumulative
# and end at +Inf with their count, and
# --textfile writes the same to a file, leaving no temporary file behind;
# --json metrics the same samples as JSON.
. "$top_srcdir/tests/lib.sh"
requires_prometheus_parser
xensim_setup
start_daemon --stage-timing
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

guest 1 64M
attach 1
blkfront_bg 1 --seconds 6 --depth 8 --verify
wait_node "$(be_path 1)/state" 4 15 || fail "guest 1 did not connect"
sleep 1

$CTL metrics >"$WORK/m1.prom" || fail "blkbackctl metrics failed"
sleep 1
mkdir "$WORK/textfile" || hard_error "mkdir failed"
$CTL metrics --textfile "$WORK/textfile/blkbackd.prom" ||
	fail "blkbackctl metrics --textfile failed"
[ "$(ls "$WORK/textfile")" = blkbackd.prom ] ||
	fail "the text file's directory holds: $(ls "$WORK/textfile")"

"$PY" - "$WORK/m1.prom" "$WORK/textfile/blkbackd.prom" <<'PY' ||
import sys
from prometheus_client.parser import text_string_to_metric_families

def parse(path):
    samples = {}
    types = {}
    for fam in text_string_to_metric_families(open(path).read()):
        types[fam.name] = fam.type
        for s in fam.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return types, samples

def value(samples, name, **labels):
    key = (name, tuple(sorted(dict(domid="1", domain="xensim-guest1",
                                   devid="51712", vdev="xvda",
                                   **labels).items())))
    if key not in samples:
        sys.exit("no sample %s %s" % key)
    return samples[key]

t1, s1 = parse(sys.argv[1])
t2, s2 = parse(sys.argv[2])
want = {"blkbackd_devices": "gauge", "blkbackd_requests": "counter",
        "blkbackd_bytes": "counter", "blkbackd_request_seconds": "counter",
        "blkbackd_failed_requests": "counter",
        "blkbackd_host_io_errors": "counter",
        "blkbackd_rejected_requests": "counter",
        "blkbackd_requests_queued": "gauge",
        "blkbackd_buffer_waits": "counter",
        "blkbackd_merged_requests": "counter",
        "blkbackd_requests_in_flight": "gauge",
        "blkbackd_mapped_grants": "gauge",
        "blkbackd_grant_map_errors": "counter",
        "blkbackd_stage_seconds": "histogram"}
for name, typ in want.items():
    if t2.get(name) != typ:
        sys.exit("family %s is %s, wanted %s" % (name, t2.get(name), typ))
if s2[("blkbackd_devices", ())] != 1:
    sys.exit("blkbackd_devices is not 1")
# A ring holds 32 requests per page, at most 16 pages and 64 queues.
if not 0 <= value(s2, "blkbackd_requests_in_flight") <= 32 * 16 * 64:
    sys.exit("requests in flight out of range")
# The guest uses persistent grants: its data pages are mapped, at most
# the per-ring cache (1056) for each of at most 64 queues.
if not 0 < value(s2, "blkbackd_mapped_grants") <= 64 * 1056:
    sys.exit("mapped grants out of range: %s"
             % value(s2, "blkbackd_mapped_grants"))
if value(s2, "blkbackd_grant_map_errors_total") != 0:
    sys.exit("grant mapping errors counted for a healthy guest")
for op in ("read", "write"):
    for fam in ("blkbackd_requests_total", "blkbackd_bytes_total",
                "blkbackd_request_seconds_total"):
        a = value(s1, fam, op=op)
        b = value(s2, fam, op=op)
        if not 0 < a < b:
            sys.exit("%s{op=%s} did not grow: %s then %s" % (fam, op, a, b))
    if value(s2, "blkbackd_failed_requests_total", op=op) != 0:
        sys.exit("errors counted for a healthy guest")
    # The guest moves 4 KiB blocks: whole ones.
    nbytes = value(s2, "blkbackd_bytes_total", op=op)
    if nbytes % 512 or nbytes < 512 * value(s2, "blkbackd_requests_total",
                                             op=op):
        sys.exit("%s bytes for %s requests" % (nbytes, op))
    # Each request spent some time in the daemon, and less than the
    # seconds the guest ran for all of them together (8 at a time).
    secs = value(s2, "blkbackd_request_seconds_total", op=op)
    if not 0 < secs < 8 * 8:
        sys.exit("%s seconds of %s" % (secs, op))
if not 0 <= value(s2, "blkbackd_requests_queued") <= 32 * 16 * 64:
    sys.exit("requests queued out of range")
for stage in ("prepare", "io", "finish", "publish"):
    buckets = sorted((float(dict(k[1])["le"]), v) for k, v in s2.items()
                     if k[0] == "blkbackd_stage_seconds_bucket"
                     and dict(k[1])["stage"] == stage)
    counts = [v for _, v in buckets]
    if counts != sorted(counts) or buckets[-1][0] != float("inf"):
        sys.exit("stage %s: buckets not cumulative to +Inf: %s"
                 % (stage, buckets))
    n = value(s2, "blkbackd_stage_seconds_count", stage=stage)
    if not n > 0 or counts[-1] != n:
        sys.exit("stage %s: +Inf bucket %s, count %s" % (stage, counts[-1], n))
    if not value(s2, "blkbackd_stage_seconds_sum", stage=stage) > 0:
        sys.exit("stage %s: no time summed" % stage)
print("requests read %d -> %d" % (value(s1, "blkbackd_requests_total", op="read"),
                                  value(s2, "blkbackd_requests_total", op="read")))
PY
	fail "the metrics are wrong"

# A text file the collector cannot get is an error, and nothing is left.
if $CTL metrics --textfile "$WORK/missing/blkbackd.prom" 2>"$WORK/tf.err"; then
	fail "metrics --textfile into a missing directory succeeded"
fi
grep -q "cannot write" "$WORK/tf.err" || fail "no error: $(cat "$WORK/tf.err")"

blkfront_wait 1 "$BG_PID"

# --json metrics says the same as the text, sample for sample (the guest
# is gone: nothing moves between the two).
$CTL metrics >"$WORK/m3.prom" || fail "blkbackctl metrics failed"
$CTL --json metrics >"$WORK/m3.json" || fail "blkbackctl --json metrics failed"
"$PY" - "$WORK/m3.prom" "$WORK/m3.json" <<'PY' ||
import json, sys
from prometheus_client.parser import text_string_to_metric_families

text = set()
types = {}
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    types[fam.name] = fam.type
    for s in fam.samples:
        text.add((s.name, tuple(sorted(s.labels.items())), float(s.value)))
js = set()
families = json.load(open(sys.argv[2]))["families"]
for fam in families:
    name = fam["name"]
    if types.get(name, types.get(name[:-len("_total")])) != fam["type"]:
        sys.exit("family %s: type %s in JSON" % (name, fam["type"]))
    for s in fam["samples"]:
        js.add((s["name"], tuple(sorted(s["labels"].items())),
                float(s["value"])))
if not text or text != js:
    sys.exit("only in the text: %s; only in the JSON: %s"
             % (sorted(text - js)[:5], sorted(js - text)[:5]))
if len(families) != len(types):
    sys.exit("%d families in JSON, %d in the text" % (len(families), len(types)))
print("%d samples alike in %d families" % (len(js), len(families)))
PY
	fail "--json metrics differs from the text"
assert_daemon_alive
exit 0

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Split a depth-1 run's latency between blkbackd's stages and the rest.

    stage-split.py BEFORE.json AFTER.json DOMID DEVID OP GUEST RAW

BEFORE and AFTER are `blkbackctl --json stats` taken around one run of
`e2e-check qd1` in the guest (OP is read or write); GUEST and RAW are that
run's QD1 line and the same run's in dom0 on the image file.  The stage
histograms are cumulative, so AFTER - BEFORE is the run alone: this checks
that its request count is the guest's and that no other operation slipped
in, then prints one E2E-STAGES line.  Exit 1 (with the reason) when the
difference is not the guest's run.
"""
import json
import sys

STAGES = ("prepare", "io", "finish", "publish")


def device(path, domid, devid):
    with open(path) as f:
        for d in json.load(f)["devices"]:
            if d["domid"] == domid and d["devid"] == devid:
                return d
    sys.exit(f"no device {domid}/{devid} in {path}")


def quantile(hist, q):
    """As blkbackd's p50: interpolated in the bucket holding the rank;
    bucket b spans [2^(b-1), 2^b) microseconds, bucket 0 [0, 1)."""
    n = sum(hist)
    if not n:
        return 0.0
    rank, seen = max(1, round(q * n)), 0
    for b, c in enumerate(hist):
        lo, hi = (2 ** (b - 1) if b else 0), 2 ** b
        if c and seen + c >= rank:
            return lo + (hi - lo) * (rank - seen) / c
        seen += c
    return float(2 ** (len(hist) - 1))


def fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def main():
    before, after, domid, devid, op, guest, raw = sys.argv[1:8]
    b = device(before, int(domid), int(devid))
    a = device(after, int(domid), int(devid))
    g, r = fields(guest), fields(raw)
    other = "write" if op == "read" else "read"
    n = a[op]["requests"] - b[op]["requests"]
    if n != int(g["ios"]):
        sys.exit(f"{op}: {n} requests between the snapshots, the guest "
                 f"made {g['ios']} (a snapshot missed the run's edges)")
    if a[other]["requests"] != b[other]["requests"]:
        sys.exit(f"{op}: {other} requests during the run")
    parts, p50_sum, mean_sum = [], 0.0, 0.0
    for st in STAGES:
        sa, sb = a["stages_us"][st], b["stages_us"][st]
        hist = [x - y for x, y in zip(sa["log2_us_histogram"],
                                      sb["log2_us_histogram"])]
        count = sa["count"] - sb["count"]
        if count != n:
            sys.exit(f"{op}: stage {st} timed {count} of {n} requests "
                     "(is --stage-timing on?)")
        mean = (sa["sum_us"] - sb["sum_us"]) / count
        p50, p99 = quantile(hist, 0.50), quantile(hist, 0.99)
        p50_sum += p50
        mean_sum += mean
        parts.append(f"{st} p50={p50:.0f} p99={p99:.0f} mean={mean:.0f}")
    gmean = float(g["mean_us"])
    print(f"E2E-STAGES {op} 4K depth 1, us: guest p50={float(g['p50_us']):.0f}"
          f" p99={float(g['p99_us']):.0f} mean={gmean:.0f}"
          f" ({n} requests) | in blkbackd: {'; '.join(parts)}"
          f" | blkbackd total mean={mean_sum:.0f} (sum of p50s {p50_sum:.0f})"
          f" | outside blkbackd (event channels, guest) mean="
          f"{gmean - mean_sum:.0f} ({100 * (gmean - mean_sum) / gmean:.0f} %)"
          f" | raw O_DIRECT in dom0 p50={float(r['p50_us']):.0f}"
          f" p99={float(r['p99_us']):.0f} mean={float(r['mean_us']):.0f}")


if __name__ == "__main__":
    main()

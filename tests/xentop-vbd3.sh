#!/bin/sh
# A backend/vbd3 disk's counters where libxenstat 4.19 and later (Debian
# 13's xentop) reads them: the backend's kthread-pid node names the
# daemon, and /dev/shm/td3-PID/vbd-DOMID-DEVID holds tapdisk3's struct
# vbd3_stats, version 1, 96 bytes, whose read and write requests and
# sectors move with the guest's I/O (read twice, 2 s apart, while it
# runs) and agree with the daemon's own counters. A backend/vbd disk gets
# none (libxenstat reads xen-blkback's sysfs for those). The file goes
# when its disk is detached, the directory when the daemon stops. What a
# SIGKILLed daemon left (the directory of a process gone, holding only
# statistics files) goes when the next one starts; a live process's stays,
# and so does a directory holding anything else.
# (The layout is documented in blkbackd/vbd-xenstat.c from libxenstat's
# own source; tests/e2e's part xen420 runs the real xentop.)
. "$top_srcdir/tests/lib.sh"
xensim_setup

# The pids of two processes that are gone: the directories of a killed
# daemon, one as it would leave it, one with something not of its making.
sh -c 'exit 0' &
gone1=$!
sh -c 'exit 0' &
gone2=$!
wait
stale=/dev/shm/td3-$gone1 odd=/dev/shm/td3-$gone2 live=/dev/shm/td3-$$
mkdir -m 755 "$stale" "$odd" "$live"
: >"$stale/vbd-3-51712"
: >"$odd/vbd-3-51712"
: >"$odd/notes"
: >"$live/vbd-4-51712"
start_daemon --serve both
swept=$([ -e "$stale" ] && echo "$stale was kept;")
swept=$swept$([ -e "$odd/notes" ] || echo "$odd was emptied;")
swept=$swept$([ -e "$live/vbd-4-51712" ] || echo "$live was emptied;")
rm -rf "$stale" "$odd" "$live"
[ -z "$swept" ] || fail "stale statistics at start-up: $swept"
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
SHM=/dev/shm/td3-$DAEMON_PID

guest 1 8M
attach 1
guest 2 32M
attach 2 xvda "$WORK/d2.img" --backendtype tap
be3=/local/domain/0/backend/vbd3/2/51712
blkfront_bg 1 --ops 200 >/dev/null
wait "$BG_PID" || fail "guest 1's I/O failed"
blkfront_bg 2 --seconds 8 --depth 4 --bs 4096 --verify
wait_node "$be3/state" 4 15 || fail "guest 2 did not connect"
assert_node "$be3/kthread-pid" "$DAEMON_PID"
xs_read "$(be_path 1)/kthread-pid" >/dev/null &&
	fail "a backend/vbd disk got a kthread-pid node"
[ -f "$SHM/vbd-2-51712" ] || fail "no $SHM/vbd-2-51712"
[ "$(ls "$SHM")" = vbd-2-51712 ] || fail "$SHM holds: $(ls "$SHM")"
sleep 1
cp "$SHM/vbd-2-51712" "$WORK/s1" || fail "cannot read the statistics"
sleep 2
cp "$SHM/vbd-2-51712" "$WORK/s2" || fail "cannot read the statistics"
$CTL --json stats 2/51712 >"$WORK/stats.json" || fail "blkbackctl stats failed"
blkfront_wait 2 "$BG_PID"

python3 - "$WORK/s1" "$WORK/s2" "$WORK/stats.json" <<'PY' ||
import json, struct, sys

# struct vbd3_stats of libxenstat 4.20 (xenstat_priv.h): version, pad,
# then 11 unsigned 64-bit counters.
FIELDS = ("oo", "rd_sub", "rd_done", "rd_sect", "rd_ticks", "wr_sub",
          "wr_done", "wr_sect", "wr_ticks", "io_errors", "flags")
def read(path):
    data = open(path, "rb").read()
    if len(data) != 96:
        sys.exit("%s: %d bytes, not 96" % (path, len(data)))
    version, pad, *rest = struct.unpack("=II11Q", data)
    if version != 1 or pad != 0:
        sys.exit("version %d, pad %d" % (version, pad))
    return dict(zip(FIELDS, rest))
a, b = read(sys.argv[1]), read(sys.argv[2])
print("before", a, "\nafter ", b)
for f in ("rd_sub", "rd_sect", "wr_sub", "wr_sect"):
    if not 0 < a[f] < b[f]:
        sys.exit("%s did not move: %d then %d" % (f, a[f], b[f]))
# 4 KiB requests: 8 sectors each.
if b["io_errors"] or b["rd_sect"] != 8 * b["rd_sub"]:
    sys.exit("implausible: %s" % b)
# The daemon's counters, read after the file: as far or further.
d = json.load(open(sys.argv[3]))["devices"][0]
if not (b["rd_sub"] <= d["read"]["requests"] and
        b["wr_sect"] <= d["write"]["bytes"] // 512):
    sys.exit("the file is ahead of the daemon: %s vs %s" % (b, d))
PY
	fail "the vbd3 statistics are wrong"

detach 2 xvda --backendtype tap
n=50
while [ -e "$SHM/vbd-2-51712" ] && [ "$n" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
[ -e "$SHM/vbd-2-51712" ] && fail "the statistics outlived the disk"
stop_daemon
[ -e "$SHM" ] && fail "$SHM outlived the daemon"
exit 0

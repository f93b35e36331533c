#!/bin/sh
# A guest writing to an image whose file system is full: the writes fail
# with ENOSPC on the host, the guest gets errors, and the operator gets one
# log line naming the domain, vdev and errno, and the count in
# `blkbackctl stats`. The full file system is a 1 MiB tmpfs, which only
# root may mount: elsewhere this test is skipped.
. "$top_srcdir/tests/lib.sh"
requires python3
[ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
xensim_setup
mkdir "$WORK/full" || hard_error "mkdir failed"
mount -t tmpfs -o size=1m blkbackd-test "$WORK/full" 2>"$WORK/mount.err" ||
	skip "cannot mount a tmpfs here: $(cat "$WORK/mount.err")"
# Unmounted once the daemon has let go of the image, before lib.sh's
# cleanup removes the scratch directory; the test's status is kept.
unmount_then_cleanup() {
	status=$?
	stop_daemon
	umount "$WORK/full" || note "could not unmount $WORK/full"
	sh -c "exit $status"
	cleanup
}
trap unmount_then_cleanup EXIT
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

"$TOOLSTACK" create 1 --mem-mb 16 >>"$WORK/toolstack.log" 2>&1 ||
	fail "create dom 1 failed"
truncate -s 8M "$WORK/full/d1.img" || hard_error "cannot make the image"
attach 1 xvda "$WORK/full/d1.img"
if "$BLKFRONT" --domid 1 --ops 2000 --depth 8 --sequential --fill \
	>"$WORK/front-1.out" 2>&1; then
	fail "8 MiB were written to a 1 MiB file system without an error"
fi
grep -q "^fact check=workload case=error-answer op=WRITE .* status=ERROR$" \
	"$WORK/front-1.out" ||
	fail "the guest failed otherwise: $(cat "$WORK/front-1.out")"
wait_file_line "$WORK/blkbackd.log" \
	"vbd 1/51712 (xvda): write failed: No space left on device\$" 5 ||
	fail "no log line for the failed writes"
$CTL --json stats 1/51712 >"$WORK/s.json" || fail "blkbackctl stats failed"
python3 - "$WORK/s.json" <<'PY' || fail "stats: $(cat "$WORK/s.json")"
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
n = sum(e["count"] for e in d["host_errors"]
        if e["op"] == "write" and e["errno"] == "ENOSPC")
sys.exit(0 if n > 0 else 1)
PY
assert_daemon_alive
exit 0

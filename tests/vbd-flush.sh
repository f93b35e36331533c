#!/bin/sh
# With --cache writeback, a WRITE's response leaves dirty page-cache pages
# in the image and the FLUSH response comes only after they are written
# back: measured with cachestat(2) between the steps. The guest reports
# the answers it got (facts); the test states they must all be OKAY.
. "$top_srcdir/tests/lib.sh"

[ -x "$CACHESTAT" ] || fail "tests/it-cachestat not built"
probe=$(mktemp) || fail "mktemp"
"$CACHESTAT" "$probe" >/dev/null 2>&1
rc=$?
rm -f "$probe"
[ "$rc" -eq 77 ] && skip "cachestat(2) is not available on this kernel"
[ "$rc" -eq 0 ] || fail "it-cachestat does not work here (exit $rc)"

xensim_setup
start_daemon --cache writeback

guest 1 16M
attach 1
blkfront 1 --check flush >/dev/null
expect_check "$WORK/front-1.out" flush "flush" cat <<EOF
disk feature-flush-cache=1
$(probe_facts 64)
flush status=OKAY
EOF

hold_start 1 --check flush-pause --seed 5
wait_file_line "$WORK/front-1.out" WRITTEN 30 ||
	fail "guest did not finish writing"
before=$("$CACHESTAT" "$WORK/d1.img") || fail "cachestat failed"
note "after WRITE responses: $before"
dirty=$(echo "$before" | sed -n 's/.*dirty=\([0-9]*\).*/\1/p')
[ "${dirty:-0}" -gt 0 ] ||
	fail "no dirty pages after writes in writeback mode ($before)"
echo go >&3
wait_file_line "$WORK/front-1.out" FLUSHED 30 || fail "flush did not complete"
after=$("$CACHESTAT" "$WORK/d1.img") || fail "cachestat failed"
note "after FLUSH response: $after"
case $after in
*dirty=0\ writeback=0*) ;;
*) fail "dirty or writeback pages remain after FLUSH ($after)" ;;
esac
echo go >&3
exec 3>&-
wait "$HOLD_PID" || fail "guest failed"
# 8 MiB written and the flush between the measurements, all OKAY.
expect_check "$WORK/front-1.out" flush-pause "flush-pause" cat <<EOF
write sectors=16384 requests=\([0-9]*\) okay=\1
flush status=OKAY
EOF
assert_daemon_alive
exit 0

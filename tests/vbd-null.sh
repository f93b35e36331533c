#!/bin/sh
# The null image, null:SIZE: a disk of SIZE bytes that stores nothing.
# The guest sees its size, reads zeroes where it wrote a pattern, and its
# flushes and a busy unverified workload with flushes succeed without
# an image file; a malformed size is refused at attach with the form it
# must have.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

"$TOOLSTACK" create 1 --mem-mb 16 >>"$WORK/toolstack.log" 2>&1 ||
	fail "create dom 1 failed"
attach 1 xvda null:64M
blkfront 1 --check null >/dev/null
expect_check "$WORK/front-1.out" null null:64M cat <<EOF
write status=OKAY
flush status=OKAY
read status=OKAY
read-data bytes=8192 nonzero=0
EOF
connected_line 1 | grep -q " $((64 * 2048)) sectors," ||
	fail "a null:64M disk: $(connected_line 1)"
blkfront 1 --ops 2000 --depth 16 --flush-every 16 >/dev/null
detach 1

"$TOOLSTACK" create 2 --mem-mb 16 >>"$WORK/toolstack.log" 2>&1 ||
	fail "create dom 2 failed"
attach_must_fail 2 null:12x xvda "a null image is null:SIZE"
attach_must_fail 2 null:0 xvdb "a null image is null:SIZE"
assert_daemon_alive
exit 0

#!/bin/sh
# Requests crossing or beyond the end of the image get BLKIF_RSP_ERROR (the
# image is not extended), and the ring keeps serving afterwards.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

size=$((3 * 1024 * 1024 + 512))
guest 1 "$size"
attach 1
for abi in x86_64 x86_32; do
	blkfront 1 --abi $abi --check past-end --ops 200 --verify >/dev/null
	expect_check "$WORK/front-1.out" past-end "$abi" past_end_facts \
		$((size / 512))
done
got=$(stat -c %s "$WORK/d1.img")
[ "$got" -eq "$size" ] || fail "image grew from $size to $got bytes"
assert_daemon_alive
exit 0

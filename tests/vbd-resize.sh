#!/bin/sh
# Online resize: requests past the end fail; the host grows the image
# with truncate and runs `blkbackctl resize DOMID/DEVID` (for the first
# guest; a bare `blkbackctl resize`, every image, for the second); the
# daemon rewrites `sectors` and re-writes state 4; the frontend's watch on
# the backend state fires, it reads the new size and reads and writes the
# new tail; blkbackctl says old -> new. Also with 2 queues, where every
# ring must learn the new size. The guest reports what it was answered and
# the size it saw (facts); the test states what they must be.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon --workers 2
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

for q in 1 2; do
	guest $q 4M
	attach $q
	hold_start $q --queues $q --check resize --seed 9
	hold_wait RESIZE-READY 60
	assert_node "$(be_path $q)/sectors" 8192
	truncate -s 6M "$WORK/d$q.img" || fail "cannot grow the image"
	if [ $q = 1 ]; then
		$CTL resize $q/51712 >"$WORK/resize.out" ||
			fail "blkbackctl resize $q/51712 failed"
	else
		$CTL resize >"$WORK/resize.out" || fail "blkbackctl resize failed"
	fi
	# It says what changed: old -> new.
	grep -q "^vbd $q/51712 (xvda of .*): 4 MiB -> 6 MiB (12288 sectors of 512 bytes)\$" \
		"$WORK/resize.out" || fail "resize printed: $(cat "$WORK/resize.out")"
	echo go >&3
	hold_wait "case=resized" 30
	hold_end
	# Past the old end refused; the new size seen (result 0: within 10 s
	# of the go-ahead); the new tail served, past it refused.
	expect_check "$WORK/front-$q.out" resize "$q queues" cat <<EOF
disk sectors=8192
read-past-old-end status=ERROR
write-past-old-end status=ERROR
resized old=8192 now=12288 result=0
old-end-write status=OKAY
old-end-read status=OKAY
old-end-data sector=8192 sectors=8 mismatched=0 outside=0
new-last-write status=OKAY
new-last-read status=OKAY
new-last-data sector=12287 sectors=1 mismatched=0 outside=0
read-past-new-end status=ERROR
EOF
	assert_node "$(be_path $q)/sectors" 12288
	# And a fresh connection sees the new size and uses all of it.
	blkfront $q --queues $q --fill --ops 200 --verify >/dev/null
	grep -q "12288 sectors" "$WORK/front-$q.out" ||
		fail "a new connection does not see the new size"
	detach $q
done
if $CTL resize 9/51712 2>"$WORK/err"; then
	fail "resizing a device that does not exist succeeded"
fi
grep -q "no such device" "$WORK/err" || fail "resize 9/51712: $(cat "$WORK/err")"
assert_daemon_alive
exit 0

#!/bin/sh
# Indirect segments (BLKIF_OP_INDIRECT). With the default offer of 256
# segments the frontend sends 1 MiB requests of 256 segments, verified
# byte for byte in the guest and in the image; with
# --max-indirect-segments 1024 it sends 4 MiB requests of 1024 segments
# (two indirect pages); with 0 the node is absent and the frontend falls
# back to 11-segment requests, as does a frontend that declines indirect.
. "$top_srcdir/tests/lib.sh"
xensim_setup

size=64M
sectors=$((64 * 2048))
write_pattern "$WORK/expected" "$sectors" 21

# indirect_facts SEGMENTS OFFER: the check indirect with SEGMENTS per
# request (the offer OFFER, or half the guest's data pages if fewer):
# written whole at sector 4096 and read back, written in partial segments
# just after and read back as whole pages, a 12-segment request at 3, and
# the whole write read again 11 pages at a time: all OKAY, every sector
# the pattern, no byte written outside a segment.
# shellcheck disable=SC2317 # run by expect_check
indirect_facts() {
	n=$1
	total=0
	i=0
	while [ $i -lt "$n" ]; do
		first=$((i % 8))
		total=$((total + 8 - (i * 3) % (8 - first) - first))
		i=$((i + 1))
	done
	echo "disk max-segments=$2 backend-offers=$2 used=$n"
	for step in "whole 4096 $((n * 8))" \
		"partial $((4096 + n * 8 + 7)) $((total / 8 * 8))" \
		"twelve 3 96"; do
		# shellcheck disable=SC2086 # word splitting is the point
		set -- $step
		echo "$1-write status=OKAY"
		echo "$1-read status=OKAY"
		echo "$1-data sector=$2 sectors=$3 mismatched=0 outside=0"
	done
	reads=$((n / 4 / 11))
	echo "eleven-page-reads requests=$reads okay=$reads mismatched=0"
}

# 1. The default offer: 256 segments.
start_daemon
guest 1 "$size" 64
attach 1
assert_node "$(be_path 1)/feature-max-indirect-segments" 256
blkfront 1 --check indirect --fill --sequential --bs 1048576 --depth 4 \
	--ops 64 --verify --seed 21 >/dev/null
expect_check "$WORK/front-1.out" indirect "256 segments" indirect_facts 256 256
connected_line 1 | grep -q "256 segments per request (indirect)" ||
	fail "frontend did not negotiate 256 segments: $(connected_line 1)"
grep -q "(bs 1048576, .* [1-9][0-9]* indirect requests" \
	"$WORK/front-1.out" || fail "no 1 MiB indirect requests"
expect_verified "$WORK/front-1.out" "1 MiB indirect requests"
cmp "$WORK/expected" "$WORK/d1.img" ||
	fail "image written with indirect requests differs from the pattern"
detach 1

# A frontend that declines indirect segments still works (11 segments).
attach 1
blkfront 1 --indirect 0 --bs 1048576 --depth 4 --ops 64 --verify \
	--preexisting --seed 21 >/dev/null
grep -q "(bs 45056, .* 0 indirect requests" \
	"$WORK/front-1.out" || fail "declining frontend did not fall back"
expect_verified "$WORK/front-1.out" "the declining frontend"
detach 1
assert_daemon_alive

# 2. 1024 segments: 4 MiB requests over two indirect pages.
restart_daemon --max-indirect-segments 1024
guest 2 "$size" 64
attach 2
assert_node "$(be_path 2)/feature-max-indirect-segments" 1024
blkfront 2 --queues 1 --data-pages 4200 --check indirect --fill \
	--sequential --bs 4194304 --depth 4 --ops 16 --verify \
	--seed 21 >/dev/null
expect_check "$WORK/front-2.out" indirect "1024 segments" \
	indirect_facts 1024 1024
connected_line 2 | grep -q "1024 segments per request" ||
	fail "frontend did not negotiate 1024 segments: $(connected_line 2)"
grep -q "(bs 4194304, .* [1-9][0-9]* indirect requests" \
	"$WORK/front-2.out" || fail "no 4 MiB indirect requests"
expect_verified "$WORK/front-2.out" "4 MiB indirect requests"
cmp "$WORK/expected" "$WORK/d2.img" ||
	fail "image written with 4 MiB requests differs from the pattern"
detach 2
assert_daemon_alive

# 3. No indirect offered: no node, the frontend falls back.
restart_daemon --max-indirect-segments 0
guest 3 "$size" 64
attach 3
xs_read "$(be_path 3)/feature-max-indirect-segments" >/dev/null &&
	fail "feature-max-indirect-segments present with --max-indirect-segments 0"
blkfront 3 --bs 1048576 --depth 4 --ops 200 --fill --verify \
	--seed 21 >/dev/null
connected_line 3 | grep -q "11 segments per request," ||
	fail "frontend did not fall back: $(connected_line 3)"
grep -q "(bs 45056, .* 0 indirect requests" \
	"$WORK/front-3.out" || fail "the fallback run used indirect requests"
expect_verified "$WORK/front-3.out" "the fallback run"
cmp "$WORK/expected" "$WORK/d3.img" ||
	fail "image written without indirect differs from the pattern"
# The check finds no indirect segments negotiated, and says so.
blkfront 3 --check indirect >/dev/null
expect_check "$WORK/front-3.out" indirect "no offer" \
	echo "disk max-segments=11 backend-offers=0 used=0"
detach 3
assert_daemon_alive
exit 0

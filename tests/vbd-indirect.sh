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

# 1. The default offer: 256 segments.
start_daemon
guest 1 "$size" 64
attach 1
assert_node "$(be_path 1)/feature-max-indirect-segments" 256
blkfront 1 --check indirect --fill --sequential --bs 1048576 --depth 4 \
	--ops 64 --verify --seed 21 >/dev/null
connected_line 1 | grep -q "256 segments per request (indirect)" ||
	fail "frontend did not negotiate 256 segments: $(connected_line 1)"
grep -q "verified OK (bs 1048576, .* [1-9][0-9]* indirect requests" \
	"$WORK/front-1.out" || fail "no verified 1 MiB indirect requests"
cmp "$WORK/expected" "$WORK/d1.img" ||
	fail "image written with indirect requests differs from the pattern"
detach 1

# A frontend that declines indirect segments still works (11 segments).
attach 1
blkfront 1 --indirect 0 --bs 1048576 --depth 4 --ops 64 --verify \
	--preexisting --seed 21 >/dev/null
grep -q "verified OK (bs 45056, .* 0 indirect requests" \
	"$WORK/front-1.out" || fail "declining frontend did not fall back"
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
connected_line 2 | grep -q "1024 segments per request" ||
	fail "frontend did not negotiate 1024 segments: $(connected_line 2)"
grep -q "verified OK (bs 4194304, .* [1-9][0-9]* indirect requests" \
	"$WORK/front-2.out" || fail "no verified 4 MiB indirect requests"
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
grep -q "verified OK (bs 45056, .* 0 indirect requests" \
	"$WORK/front-3.out" || fail "fallback run not verified"
cmp "$WORK/expected" "$WORK/d3.img" ||
	fail "image written without indirect differs from the pattern"
if "$BLKFRONT" --domid 3 --check indirect >"$WORK/noind.out" 2>&1; then
	fail "indirect check passed without indirect segments"
fi
grep -q "no indirect segments negotiated" "$WORK/noind.out" ||
	fail "unexpected failure: $(cat "$WORK/noind.out")"
detach 3
assert_daemon_alive
exit 0

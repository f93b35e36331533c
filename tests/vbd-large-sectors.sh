#!/bin/sh
# Large sectors: a 4K-native block device (a loop device made with
# --sector-size 4096) served to a frontend that wrote
# feature-large-sector-size=1 has sector-size=4096; all sector numbers are
# then in 4096-byte units, and data written through it is verified in the
# guest and on the device byte for byte.
. "$top_srcdir/tests/lib.sh"

requires losetup blockdev
[ "$(id -u)" -eq 0 ] || skip "losetup needs root"
xensim_setup
LOOP=
# Detach the loop device first, then the usual cleanup with our status.
trap 'rc=$?; [ -n "$LOOP" ] && losetup -d "$LOOP"; (exit $rc); cleanup' EXIT
truncate -s 16M "$WORK/4kn.img" || fail "cannot make image"
LOOP=$(losetup -f --show --sector-size 4096 "$WORK/4kn.img" 2>"$WORK/losetup.err") ||
	skip "losetup --sector-size 4096 does not work here: $(cat "$WORK/losetup.err")"
[ "$(blockdev --getss "$LOOP")" = 4096 ] ||
	skip "$LOOP does not have 4096-byte logical sectors"
start_daemon

guest 1 1M
attach 1 xvda "$LOOP"
blkfront 1 --fill --bs 65536 --depth 8 --ops 500 --verify --partial \
	--seed 44 >/dev/null
grep -q "sector-size 4096, 4096 sectors" "$WORK/front-1.out" ||
	fail "frontend with large sectors: $(connected_line 1)"
assert_node "$(be_path 1)/sector-size" 4096
pss=$(xs_read "$(be_path 1)/physical-sector-size")
[ $((pss % 4096)) -eq 0 ] || fail "physical-sector-size $pss"
expect_verified "$WORK/front-1.out" "4096-byte sectors"
write_pattern "$WORK/expected" $((16 * 2048)) 44
cmp "$WORK/expected" "$LOOP" || fail "the device differs from the pattern"
detach 1

# A frontend without large sectors sees 512-byte sectors on the same disk.
attach 1 xvda "$LOOP"
blkfront 1 --large-sectors no --ops 100 --bs 4096 --verify --preexisting \
	--seed 44 >/dev/null
grep -q "sector-size 512," "$WORK/front-1.out" ||
	fail "frontend without large sectors: $(connected_line 1)"
detach 1
assert_daemon_alive
exit 0

#!/bin/sh
# Copying a block device for a live move (libblk/image-copy.h;
# tests/test-image-copy.c's `blockdev` mode): a loop device with data in
# three places, copied into a new file byte for byte with its zeros left
# holes, and the moved-to mark refused (a device node keeps no user
# attribute).
. "$top_srcdir/tests/lib.sh"

requires losetup dd
[ "$(id -u)" -eq 0 ] || skip "losetup needs root"
scratch_dir
LOOP=
# Detach the loop device first, then the usual cleanup with our status.
trap 'rc=$?; [ -n "$LOOP" ] && losetup -d "$LOOP"; (exit $rc); cleanup' EXIT

# test-image-copy.c's IMAGE_BYTES, with data where make_source() puts it.
mib=1048576
truncate -s $((9 * mib + 3 * 512)) "$WORK/disk" || hard_error "truncate failed"
put() { # OFFSET BYTES
	dd if=/dev/urandom of="$WORK/disk" bs=512 seek=$(($1 / 512)) \
		count=$(($2 / 512)) conv=notrunc status=none ||
		hard_error "dd failed"
}
put 0 65536
put $((4 * mib - 8192)) 16384
put $((9 * mib)) 1536
LOOP=$(losetup -f --show "$WORK/disk" 2>"$WORK/losetup.err") ||
	skip "no loop device here: $(cat "$WORK/losetup.err")"

"$top_builddir/tests/test-image-copy" blockdev "$LOOP" ||
	fail "test-image-copy blockdev failed"
exit 0

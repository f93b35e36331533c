#!/bin/sh
# Read-only and CD-ROM disks: with mode=r the backend publishes info with
# VDISK_READONLY (4), offers no discard, fails writes (plain, flush with
# data, barrier) and serves reads of what the image holds; the image is
# untouched. device-type=cdrom adds VDISK_CDROM (1) and is read-only too.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

sectors=$((4 * 2048))
guest 1 4M
write_pattern "$WORK/d1.img" "$sectors" 31
cp "$WORK/d1.img" "$WORK/expected"
"$TOOLSTACK" attach 1 "$WORK/d1.img" xvda --mode r $SCRIPT_OPT \
	>>"$WORK/toolstack.log" 2>&1 || fail "read-only attach failed"
xs_read "$(be_path 1)/feature-discard" | grep -q 1 &&
	fail "discard offered on a read-only disk"
blkfront 1 --check readonly --preexisting --seed 31 --ops 300 >/dev/null
expect_check "$WORK/front-1.out" readonly "mode=r" readonly_facts 4 \
	"$(be_path 1)"
grep -q "info 4$" "$WORK/front-1.out" ||
	fail "read-only disk: $(connected_line 1)"
assert_node "$(be_path 1)/info" 4
cmp "$WORK/expected" "$WORK/d1.img" || fail "a read-only image changed"
detach 1

guest 2 4M
cp "$WORK/expected" "$WORK/d2.img"
"$TOOLSTACK" attach 2 "$WORK/d2.img" xvda --device-type cdrom $SCRIPT_OPT \
	>>"$WORK/toolstack.log" 2>&1 || fail "cdrom attach failed"
blkfront 2 --check readonly --preexisting --seed 31 --ops 300 >/dev/null
expect_check "$WORK/front-2.out" readonly "cdrom" readonly_facts 5 \
	"$(be_path 2)"
info=$(xs_read "$(be_path 2)/info")
[ $((info & 1)) -eq 1 ] && [ $((info & 4)) -eq 4 ] ||
	fail "cdrom has info '$info', wanted VDISK_CDROM|VDISK_READONLY"
cmp "$WORK/expected" "$WORK/d2.img" || fail "a cdrom image changed"
detach 2
assert_daemon_alive
exit 0

#!/bin/sh
# A disk blkbackd cannot serve gets a clear error naming the disk and the
# fix, where xl shows it: libxl waits for InitWait, runs the hotplug script
# and, when the script fails, prints its hotplug-error ("script: ...").
# So the device reaches InitWait with the reason in its error node, the
# script hands it on, the toolstack's attach fails at once (not after
# libxl's 10 s timeout) with that message, and the device then closes.
# The daemon logs it by device and keeps serving everyone else.
# Covered: a missing image, permission denied, one image attached writable
# to two guests (refused by the image lock), a directory, an empty file;
# and, without a hotplug script, the error node and Closing alone.
. "$top_srcdir/tests/lib.sh"
xensim_setup
[ -x "$HOTPLUG" ] || skip "no hotplug script at $HOTPLUG"
start_daemon

# attach_refused DOMID IMAGE REGEX: the attach fails within 5 s, printing
# the script's error, which names the disk and matches REGEX.
attach_refused() {
	be=$(be_path "$1")
	t0=$(now_ms)
	if "$TOOLSTACK" attach "$1" "$2" xvda >"$WORK/attach-$1.out" 2>&1; then
		fail "dom $1: the attach of $2 succeeded"
	fi
	ms=$(($(now_ms) - t0))
	after_attach
	out=$(cat "$WORK/attach-$1.out")
	echo "$out" |
		grep -q "script: blkbackd: xvda of domain $1 (vbd $1/51712): .*$3" ||
		fail "dom $1: the toolstack printed '$out'"
	[ "$ms" -lt 5000 ] || fail "dom $1: the attach took $ms ms to fail"
	assert_node "$be/hotplug-status" error
	err=$(xs_read "$be/hotplug-error") || fail "dom $1: no hotplug-error"
	echo "$err" | grep -q -- "$3" ||
		fail "dom $1: hotplug-error '$err' does not match '$3'"
	wait_node "$be/state" 5 5 ||
		fail "dom $1: the device did not close after the script reported"
	grep -q "vbd $1/51712: .*$3" "$WORK/blkbackd.log" ||
		fail "dom $1: the daemon did not log the error by device"
	note "dom $1: refused in $ms ms: $out"
}
after_attach() { :; }

# Attached, guest 1's image is open and locked until the device goes.
guest 1 8M
attach 1
blkfront 1 --ops 50 --verify >/dev/null

guest 2 8M
attach_refused 2 "$WORK/missing.img" "No such file.*check the target="

# Permission denied: root opens anything it may write, but not an
# immutable file; others are denied a read-only one.
guest 3 8M
cp "$WORK/d3.img" "$WORK/locked.img"
denied=1
if [ "$(id -u)" != 0 ]; then
	chmod 0444 "$WORK/locked.img"
elif chattr +i "$WORK/locked.img" 2>"$WORK/chattr.err"; then
	after_attach() { chattr -i "$WORK/locked.img"; }
else
	denied=
	note "permission case NOT run: chattr +i fails on $WORK" \
		"($(cat "$WORK/chattr.err")); set TMPDIR to ext4, xfs or btrfs"
fi
[ -n "$denied" ] &&
	attach_refused 3 "$WORK/locked.img" "not permitted\|denied.*read-write access"
after_attach() { :; }

guest 4 8M
attach_refused 4 "$WORK/d1.img" "another device or program"

guest 5 8M
mkdir "$WORK/dir.img"
attach_refused 5 "$WORK/dir.img" "regular file or a block device"

guest 6 8M
: >"$WORK/empty.img"
attach_refused 6 "$WORK/empty.img" "is empty.*truncate -s SIZE"

# Without a hotplug script nobody would pass the reason on: the device
# goes to Closing with it in the error node (the toolstack times out).
guest 7 8M
"$TOOLSTACK" attach 7 "$WORK/missing.img" xvda --no-script \
	>>"$WORK/toolstack.log" 2>&1 &
track_pid $!
wait_node "$(be_path 7)/state" 5 10 ||
	fail "dom 7: the backend did not go to Closing"
err=$(xs_read "$(be_path 7)/error") || fail "dom 7: no error node"
echo "$err" | grep -q "xvda of domain 7 .*check the target=" ||
	fail "dom 7: error node '$err'"

assert_daemon_alive
# Guest 1 was served throughout, and a new guest is served.
blkfront 1 --ops 50 --verify >/dev/null
guest 8 8M
attach 8
blkfront 8 --ops 100 --verify >/dev/null
exit 0

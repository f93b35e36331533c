#!/bin/sh
# Bad images get a clear error naming the device and the fix: the backend
# writes it to its `error` node and goes to Closing, the daemon logs it,
# and it keeps serving everyone else. Covered: a missing image, a
# directory, and one image attached writable to two guests (the second is
# refused by the image lock, so two guests never write one file).
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

# attach_expecting_error DOMID IMAGE REGEX: the attach must fail with an
# error node matching REGEX, logged under the device's name.
attach_expecting_error() {
	"$TOOLSTACK" attach "$1" "$2" xvda $SCRIPT_OPT \
		>>"$WORK/toolstack.log" 2>&1 &
	BG_PIDS="$BG_PIDS $!"
	wait_node "$(be_path "$1")/state" 5 10 ||
		fail "dom $1: backend did not go to Closing for $2"
	err=$(xs_read "$(be_path "$1")/error") ||
		fail "dom $1: no error node for $2"
	echo "$err" | grep -q -- "$3" ||
		fail "dom $1: error node '$err' does not match '$3'"
	grep -q "vbd $1/51712: .*$3" "$WORK/blkbackd.log" ||
		fail "dom $1: the daemon did not log the error by device"
}

# Attached, guest 1's image is open and locked until the device goes.
guest 1 8M
attach 1
blkfront 1 --ops 50 --verify >/dev/null

guest 2 8M
attach_expecting_error 2 "$WORK/missing.img" "check the target="

guest 3 8M
mkdir "$WORK/dir.img"
attach_expecting_error 3 "$WORK/dir.img" "regular file or a block device"

guest 4 8M
attach_expecting_error 4 "$WORK/d1.img" "another device or program"

assert_daemon_alive
# Guest 1 was served throughout.
guest 5 8M
attach 5
blkfront 5 --ops 100 --verify >/dev/null
exit 0

#!/bin/sh
# An ordinary detach (the guest closed, the toolstack unplugs, runs the
# hotplug script's remove and deletes the device's trees) must not put an
# error in the daemon's log. It did, for a few detaches in a hundred: the
# daemon forgets the device ("released") when it is unplugged, a later
# event on its still-present backend directory (the hotplug script's)
# makes it a "new device" again, and when the toolstack's removal landed
# between reading its state and reading its `frontend` node, the daemon
# logged "err: ... the backend's frontend node is missing or malformed"
# for a disk that was merely going away (4 of 150 before the fix).
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

ROUNDS=${ROUNDS:-100}
guest 1 32M
attach 1
blkfront_bg 1 --seconds 600 --depth 8 --verify
dom=10
while [ "$dom" -lt $((10 + ROUNDS)) ]; do
	guest "$dom" 4M
	attach "$dom"
	blkfront "$dom" --ops 20 --verify >/dev/null
	detach "$dom"
	"$TOOLSTACK" destroy "$dom" >>"$WORK/toolstack.log" 2>&1 ||
		fail "destroy dom $dom failed"
	rm -f "$WORK/d$dom.img" "$WORK/front-$dom.out"
	dom=$((dom + 1))
done
assert_daemon_alive
n=$(grep -c "^blkbackd: err:" "$WORK/blkbackd.log")
[ "$n" -eq 0 ] ||
	fail "$n of $ROUNDS ordinary detaches logged an error:" \
		"$(grep -m3 -B2 "^blkbackd: err:" "$WORK/blkbackd.log")"
exit 0

#!/bin/sh
# A failed device recovers as xen-blkback's does: once its frontend has
# gone Closed the backend goes Closed, and a frontend that starts over
# (Initialising again: kexec, kdump, a driver reload) gets InitWait and a
# working disk, with no detach and no new attach. Failures covered: a
# frontend asking for more than was offered (ring order, queues), twice in
# a row; and an image missing at attach, which goes Closed after its
# frontend but stays refused while the toolstack holds it failed.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon --max-queues 4

# refused DOMID ARGS...: a frontend the backend refuses; the device ends
# Closed with its error node.
refused() {
	d=$1
	shift
	if "$BLKFRONT" --domid "$d" "$@" --ops 10 >"$WORK/bad-$d.out" 2>&1; then
		fail "dom $d: a frontend with $* was served"
	fi
	grep -q "connect failed" "$WORK/bad-$d.out" ||
		fail "dom $d: unexpected failure: $(cat "$WORK/bad-$d.out")"
	xs_read "$(be_path "$d")/error" >/dev/null ||
		fail "dom $d: no error node after $*"
	wait_node "$(be_path "$d")/state" 6 5 ||
		fail "dom $d: backend in state $(xs_read "$(be_path "$d")/state"), not Closed, after its frontend closed"
}

# recovered DOMID: the frontend starts over and gets a working disk; the
# old error is gone.
recovered() {
	blkfront "$1" --ops 200 --verify >/dev/null
	expect_verified "$WORK/front-$1.out" "dom $1 after recovery"
	xs_read "$(be_path "$1")/error" >/dev/null &&
		fail "dom $1: a stale error node after recovery"
	return 0
}

guest 1 8M
attach 1
refused 1 --ring-order 5
recovered 1
refused 1 --queues 5
refused 1 --ring-order 5
recovered 1
detach 1

# An image missing at attach: the device closes, and goes Closed once its
# frontend has (the guest's driver saw it close). The toolstack was told
# the attach failed (hotplug-status=error), so a frontend that starts over
# is refused again, even with the image there now; a new attach serves it.
guest 2 8M
# shellcheck disable=SC2086 # SCRIPT_OPT is empty or one word
"$TOOLSTACK" attach 2 "$WORK/late.img" xvda $SCRIPT_OPT \
	>>"$WORK/toolstack.log" 2>&1 &
track_pid $!
wait_node "$(be_path 2)/state" 5 10 ||
	fail "dom 2: the missing image did not close the device"
xenstore-write "$(fe_path 2)/state" 6
wait_node "$(be_path 2)/state" 6 5 ||
	fail "dom 2: backend did not go Closed after its frontend"
truncate -s 8M "$WORK/late.img"
if [ -z "$SCRIPT_OPT" ]; then
	refused 2
	xs_read "$(be_path 2)/error" | grep -q "hotplug script failed" ||
		fail "dom 2: refused for another reason than the script's error"
fi
detach 2
attach 2 xvda "$WORK/late.img"
recovered 2

assert_daemon_alive
exit 0

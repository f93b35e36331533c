#!/bin/sh
# blkbackctl attach and detach give a guest that no xl manages a disk and
# take it away: attach writes both xenstore trees as libxl does (keys,
# states, permissions), waits for blkbackd to offer the disk, and the
# guest then does verified I/O on it; detach closes it, removes both
# trees, and leaves the daemon holding nothing of it, also under a
# connected guest. The mistakes an operator can make, and a daemon that
# does not answer, end in a message and leave no nodes (a detach that
# times out removes them all the same, as xl does).
. "$top_srcdir/tests/lib.sh"
requires xenstore-ls
xensim_setup
start_daemon
BLKBACKCTL=$top_builddir/tools/blkbackctl/blkbackctl
be=$(be_path 3 51728)
fe=$(fe_path 3 51728)

# must_fail REGEX ARGS...: blkbackctl ARGS fails, saying REGEX.
must_fail() {
	mf_regex=$1
	shift
	"$BLKBACKCTL" "$@" >"$WORK/ctl.out" 2>&1 &&
		fail "blkbackctl $* succeeded: $(cat "$WORK/ctl.out")"
	grep -q -- "$mf_regex" "$WORK/ctl.out" ||
		fail "blkbackctl $*: said '$(cat "$WORK/ctl.out")'"
}
# holds_image IMG: the daemon has IMG open.
holds_image() {
	for hi_fd in "/proc/$DAEMON_PID/fd/"*; do
		[ "$(readlink "$hi_fd")" = "$1" ] && return 0
	done
	return 1
}
# assert_gone WHAT: both trees are gone, and within 5 s so is the
# daemon's descriptor of the image.
assert_gone() {
	xs_read "$be/state" >/dev/null && fail "$1 left $be"
	xs_read "$fe/state" >/dev/null && fail "$1 left $fe"
	ag_n=50
	while holds_image "$WORK/d3.img" && [ $ag_n -gt 0 ]; do
		sleep 0.1
		ag_n=$((ag_n - 1))
	done
	holds_image "$WORK/d3.img" && fail "after $1 the daemon still holds d3.img"
	return 0
}
# perms PATH: the node's permissions as xenstore-ls -p shows them
perms() { xenstore-ls -p "$(dirname "$1")" | sed -n "s/^$(basename "$1") = .*(\(.*\))\$/\1/p"; }

guest 3 32M
# A relative image path reaches the daemon made absolute.
(cd "$WORK" && "$BLKBACKCTL" attach 3 d3.img xvdb) >"$WORK/attach.out" 2>&1 ||
	fail "attach failed: $(cat "$WORK/attach.out")"
note "$(cat "$WORK/attach.out")"
assert_node "$be/state" 2
assert_node "$be/params" "$WORK/d3.img"
assert_node "$be/frontend" "$fe"
assert_node "$be/frontend-id" 3
assert_node "$be/mode" w
assert_node "$be/online" 1
assert_node "$be/dev" xvdb
assert_node "$fe/backend" "$be"
assert_node "$fe/backend-id" 0
assert_node "$fe/virtual-device" 51728
assert_node "$fe/state" 1
# No toolstack runs a hotplug script for it: there must be no script node,
# or blkbackd would wait for its hotplug-status for ever.
xs_read "$be/script" >/dev/null && fail "attach wrote a script node"
# libxl's permissions: each end owns its tree and may read the other's.
[ "$(perms "$be")" = "n0,r3" ] || fail "backend permissions: $(perms "$be")"
[ "$(perms "$fe")" = "n3,r0" ] || fail "frontend permissions: $(perms "$fe")"

blkfront 3 --vdev xvdb --ops 500 --verify >/dev/null
expect_verified "$WORK/front-3.out" "dom 3 on the attached disk"

must_fail "already has a device xvdb" attach 3 "$WORK/d3.img" xvdb
must_fail "there is no domain 9" attach 9 "$WORK/d3.img"
must_fail "not a virtual device name" attach 3 "$WORK/d3.img" floppy
must_fail "cannot open image $WORK/missing.img" attach 3 "$WORK/missing.img" xvdc
xenbus_gone=$(be_path 3 51744)
xs_read "$xenbus_gone/state" >/dev/null &&
	fail "a refused attach left its nodes behind"

# The check below sees the image while the device is attached.
holds_image "$WORK/d3.img" || fail "cannot see the daemon holding d3.img"
"$BLKBACKCTL" detach 3 xvdb >"$WORK/detach.out" 2>&1 ||
	fail "detach failed: $(cat "$WORK/detach.out")"
assert_gone "detach"
must_fail "has no device xvdb" detach 3 xvdb

# Read-only, and attached again after the detach: the guest reads the
# image back and cannot write it.
write_pattern "$WORK/d3.img" 65536 31
"$BLKBACKCTL" attach --readonly 3 "$WORK/d3.img" xvdb >/dev/null 2>&1 ||
	fail "read-only attach failed"
assert_node "$be/mode" r
blkfront 3 --vdev xvdb --check readonly --preexisting --seed 31 --ops 300 \
	>/dev/null
expect_check "$WORK/front-3.out" readonly "attach --readonly" \
	readonly_facts 4 "$be"
"$BLKBACKCTL" detach 3 xvdb || fail "second detach failed"

# Detached under a connected guest: the guest lets go, then the trees go.
"$BLKBACKCTL" attach 3 "$WORK/d3.img" xvdb >/dev/null 2>&1 ||
	fail "third attach failed"
hold_start 3 --vdev xvdb --hold
hold_wait CONNECTED 15
"$BLKBACKCTL" detach 3 xvdb >"$WORK/detach.out" 2>&1 ||
	fail "detach under a connected guest failed: $(cat "$WORK/detach.out")"
xs_read "$be/state" >/dev/null && fail "detach left $be"
# The simulated guest may find the trees gone before it saw state 6 (as
# under xl, which removes them at once): only what the host holds counts.
exec 3>&-
wait "$HOLD_PID"
wait_released 3 5 || fail "grants/ports still held after detach: $(stat_of 3)"

# A daemon that does not answer: attach gives up in time and cleans up.
kill -STOP "$DAEMON_PID"
must_fail "blkbackd did not take vbd 3/51728 within 1 s" \
	attach --timeout 1 3 "$WORK/d3.img" xvdb
kill -CONT "$DAEMON_PID"
xs_read "$be/state" >/dev/null && fail "a timed-out attach left $be"
# And detach removes the trees after its timeout, as xl does; the daemon,
# back, lets the image go.
"$BLKBACKCTL" attach 3 "$WORK/d3.img" xvdb >/dev/null 2>&1 ||
	fail "attach after the timeout failed"
kill -STOP "$DAEMON_PID"
must_fail "blkbackd did not close vbd 3/51728 within 1 s.*removed anyway" \
	detach --timeout 1 3 xvdb
kill -CONT "$DAEMON_PID"
assert_gone "a timed-out detach"
assert_daemon_alive
finish

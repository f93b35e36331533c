#!/bin/sh
# Unplug as xl does (online=0, state=5): the backend reaches 6 within 10 s,
# releases the guest's grants and port, and leaves its xenstore nodes for
# the toolstack to remove. Both with the guest connected and after the
# guest already closed its end; and a disk unplugged before its guest
# started stays closed when its directory changes again.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

# 1. Guest connected while the toolstack unplugs the disk.
guest 1 4M
attach 1
be=$(be_path 1)
hold_start 1 --hold
wait_file_line "$WORK/front-1.out" CONNECTED 15 || fail "guest did not connect"
start=$(date +%s)
detach 1 xvda --keep-nodes
[ $(($(date +%s) - start)) -le 11 ] || fail "detach took more than 10 s"
assert_node "$be/state" 6
wait "$HOLD_PID" || fail "guest did not close cleanly when the backend closed"
sleep 1
# The daemon never deletes its own nodes.
assert_node "$be/state" 6
assert_node "$be/online" 0
xs_read "$be/params" >/dev/null || fail "backend nodes vanished"
wait_released 1 5 || fail "grants/ports still held after detach: $(stat_of 1)"
xenstore-rm "$be" "$(fe_path 1)" || fail "cannot remove nodes"

# 2. Guest ran and closed first (backend at 6 with online=1), then unplug;
#    a full detach also removes both trees.
guest 2 4M
attach 2
blkfront 2 --ops 100 --verify >/dev/null
assert_node "$(be_path 2)/state" 6
detach 2
xs_read "$(be_path 2)/state" >/dev/null && fail "backend tree not removed"
xs_read "$(fe_path 2)/state" >/dev/null && fail "frontend tree not removed"
wait_released 2 5 || fail "grants/ports still held: $(stat_of 2)"

# 3. The same domain can be given a disk again and it works.
attach 2
blkfront 2 --ops 100 --verify >/dev/null
detach 2

# 4. A disk whose guest never started (frontend left at Initialising) is
#    unplugged, and something then writes under its backend directory, as
#    the hotplug script's remove does: the daemon sees the directory anew,
#    but a device that is offline and closed is being removed, never
#    offered again (it was: back to InitWait, and xl's detach timed out).
guest 3 4M
attach 3
detach 3 xvda --keep-nodes
assert_node "$(be_path 3)/state" 6
xenstore-write "$(be_path 3)/hotplug-status" "" || fail "cannot write"
sleep 1
assert_node "$(be_path 3)/state" 6
xenstore-rm "$(be_path 3)" "$(fe_path 3)" || fail "cannot remove nodes"
assert_daemon_alive
exit 0

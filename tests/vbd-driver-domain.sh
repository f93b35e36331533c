#!/bin/sh
# blkbackd in a storage driver domain (domain 5 here), as libxl 4.17 drives
# one: dom0's toolstack writes the backend under /local/domain/5, waits for
# InitWait and runs no script ("assuming driver domains"); `xl devd` in the
# driver domain runs it (this test plays xl devd). The daemon must not
# connect the guest before devd's script has reported, and a disk it cannot
# serve goes to Closing with its reason in the error node, since dom0's xl
# would run no script to pass it on.
. "$top_srcdir/tests/lib.sh"
xensim_setup
[ -x "$HOTPLUG" ] || skip "no hotplug script at $HOTPLUG"
DD=5
"$TOOLSTACK" create $DD >>"$WORK/toolstack.log" 2>&1 ||
	fail "create the driver domain failed"
XENSIM_DOMID=$DD
export XENSIM_DOMID
start_daemon --domid $DD
unset XENSIM_DOMID

dd_be() { echo "/local/domain/$DD/backend/vbd/$1/51712"; }

# xl devd: run the script in the driver domain, where XENBUS_PATH resolves
# to its own backend directory (given absolute here, as dom0's tools run
# the simulation).
devd_add() {
	XENBUS_PATH=$(dd_be "$1") "$HOTPLUG" add >>"$WORK/devd.log" 2>&1 ||
		fail "dom $1: the hotplug script failed in the driver domain"
}

guest 1 8M
"$TOOLSTACK" attach 1 "$WORK/d1.img" xvda --backend-domid $DD \
	--script "$HOTPLUG" >>"$WORK/toolstack.log" 2>&1 ||
	fail "dom $1: attach to the driver domain failed"
xs_read "$(dd_be 1)/hotplug-status" >/dev/null &&
	fail "dom0's toolstack ran the script for a driver domain"
"$BLKFRONT" --domid 1 --ops 200 --verify >"$WORK/front-1.out" 2>&1 &
front=$!
track_pid $front
n=15
while [ "$n" -gt 0 ]; do
	st=$(xs_read "$(dd_be 1)/state")
	[ "$st" = 2 ] ||
		fail "dom 1: backend in state $st before xl devd ran the script"
	sleep 0.1
	n=$((n - 1))
done
assert_node "$(fe_path 1)/state" 3
devd_add 1
wait "$front" || {
	cat "$WORK/front-1.out" >&2
	fail "dom 1: the guest failed"
}
expect_verified "$WORK/front-1.out" "dom 1"

# A missing image: Closing with the reason, not InitWait (dom0's xl would
# wait in vain for a script to report it). The attach itself times out.
guest 2 8M
"$TOOLSTACK" attach 2 "$WORK/missing.img" xvda --backend-domid $DD \
	--script "$HOTPLUG" >>"$WORK/toolstack.log" 2>&1 &
track_pid $!
wait_node "$(dd_be 2)/state" 5 5 ||
	fail "dom 2: backend in state $(xs_read "$(dd_be 2)/state"), not Closing"
err=$(xs_read "$(dd_be 2)/error") || fail "dom 2: no error node"
echo "$err" | grep -q "xvda of domain 2 .*No such file.*check the target=" ||
	fail "dom 2: error node '$err'"

assert_daemon_alive
exit 0

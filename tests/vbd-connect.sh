#!/bin/sh
# After a guest connects, the backend and frontend nodes follow the blkif
# contract (docs/architecture.md): state 4, sectors = image size / 512, info,
# sector-size=512, physical-sector-size, feature-flush-cache=1, and the
# hotplug script has reported in.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

size=$((48 * 1024 * 1024 + 4096))
guest 1 "$size"
attach 1
be=$(be_path 1)
fe=$(fe_path 1)
assert_node "$be/state" 2
assert_node "$be/feature-flush-cache" 1
if [ -z "$SCRIPT_OPT" ]; then
	assert_node "$be/hotplug-status" connected
fi

# A one-page ring and one queue: the keys of the original protocol.
hold_start 1 --hold --abi x86_64 --ring-order 0 --queues 1
wait_file_line "$WORK/front-1.out" CONNECTED 15 ||
	fail "guest did not connect"

assert_node "$be/state" 4
assert_node "$fe/state" 4
assert_node "$be/sectors" $((size / 512))
assert_node "$be/sector-size" 512
assert_node "$be/info" 0
pss=$(xs_read "$be/physical-sector-size") || fail "no physical-sector-size"
[ $((pss % 512)) -eq 0 ] && [ "$pss" -ge 512 ] ||
	fail "physical-sector-size $pss is not a multiple of 512"
for k in ring-ref event-channel protocol; do
	xs_read "$fe/$k" >/dev/null || fail "frontend lacks $k"
done
assert_node "$fe/protocol" x86_64-abi
# The toolstack's keys are untouched by the daemon.
assert_node "$be/params" "$WORK/d1.img"
assert_node "$be/online" 1
assert_node "$be/frontend-id" 1
case $(stat_of 1) in
*bound_ports=1*) ;;
*) fail "backend has not bound the guest's port: $(stat_of 1)" ;;
esac

exec 3>&-
wait "$HOLD_PID" || fail "guest failed to close cleanly"
assert_node "$be/state" 6

# A read-only disk says so in `info` (VDISK_READONLY).
guest 2 1M
"$TOOLSTACK" attach 2 "$WORK/d2.img" xvda --mode r $SCRIPT_OPT \
	>>"$WORK/toolstack.log" 2>&1 || fail "read-only attach failed"
hold_start 2 --hold
wait_file_line "$WORK/front-2.out" CONNECTED 15 ||
	fail "guest 2 did not connect"
info=$(xs_read "$(be_path 2)/info")
[ -n "$info" ] && [ $((info & 4)) -eq 4 ] ||
	fail "read-only disk has info '$info', wanted VDISK_READONLY (4) set"
exec 3>&-
wait "$HOLD_PID" || fail "guest 2 failed to close cleanly"
assert_daemon_alive
exit 0

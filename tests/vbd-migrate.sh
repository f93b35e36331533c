#!/bin/sh
# A migration's two ends in one host, as xl migrate to localhost makes
# them: the receiving domain's disk is set up while the sending domain
# still has it. A device of the same VM (/local/domain/N/vm) is offered
# at once and takes the image only when the sender's device lets it go,
# so the receiving guest finds the sender's data and there is never a
# second writer; a device of another VM is still refused.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

img=$WORK/d1.img
be1=$(be_path 1)
be2=$(be_path 2)

# The sender: its guest writes (seed 5's pattern, which the whole image
# holds already, so that the receiver can check every sector it reads),
# then keeps the disk connected.
guest 1 8M
write_pattern "$img" $((8 * 2048)) 5
xenstore-write /local/domain/1/vm /vm/5e1f0000-0000-4000-8000-000000000001
attach 1
blkfront 1 --ops 300 --verify --seed 5 >/dev/null
hold_start 1 --hold --abandon
hold_wait CONNECTED 10

# The receiver, same VM: offered although the image is held.
guest 2 4M
xenstore-write /local/domain/2/vm /vm/5e1f0000-0000-4000-8000-000000000001
attach 2 xvda "$img"
assert_node "$be2/state" 2
assert_node "$be2/hotplug-status" connected
wait_file_line "$WORK/blkbackd.log" "vbd 2/51712: .* is held by vbd 1/51712 of the same VM" 5 ||
	fail "the daemon did not say it waits for the sender's device"

# Another VM is refused, as ever.
guest 3 4M
xenstore-write /local/domain/3/vm /vm/5e1f0000-0000-4000-8000-000000000003
attach_must_fail 3 "$img" xvda "holds it writable"

# The receiving guest starts and waits: no second writer. (Not holding
# fd 3, the sender's stdin: its end must be the sender's alone.)
"$BLKFRONT" --domid 2 --preexisting --seed 5 --ops 300 --verify \
	--timeout-ms 30000 >"$WORK/front-2.out" 2>&1 3>&- &
front2=$!
BG_PIDS="$BG_PIDS $front2"
sleep 1.5
assert_node "$be2/state" 2
grep -q "connected:" "$WORK/front-2.out" &&
	fail "the receiver connected while the sender held the image"

# The sender's domain is destroyed, as xl does once the receiver runs.
exec 3>&-
wait "$HOLD_PID" 2>/dev/null
"$TOOLSTACK" destroy 1 --remove-backends >>"$WORK/toolstack.log" 2>&1 ||
	fail "destroy dom 1 failed"
blkfront_wait 2 "$front2" "the receiving guest failed after the hand-over"
grep -q "verified OK" "$WORK/front-2.out" ||
	fail "the receiving guest did not verify: $(cat "$WORK/front-2.out")"

# Its image taken only after the sender's release.
rel=$(grep -n "vbd 1/51712: released" "$WORK/blkbackd.log" | head -n 1 | cut -d: -f1)
took=$(grep -n "vbd 2/51712: took .* over" "$WORK/blkbackd.log" | head -n 1 | cut -d: -f1)
if [ -z "$rel" ] || [ -z "$took" ]; then
	fail "no release/take-over lines in the log"
fi
[ "$rel" -lt "$took" ] ||
	fail "the receiver took the image (line $took) before the sender released it (line $rel)"
xs_read "$be1/state" >/dev/null && fail "the sender's backend is still there"
detach 2
assert_daemon_alive
exit 0

#!/bin/sh
# A migration's two ends in one host, as xl migrate to localhost makes
# them: the receiving domain's disk is set up while the sending domain
# still has it. A device of the same VM (/local/domain/N/vm) is offered
# at once and takes the image only when the sender's device lets it go,
# so the receiving guest finds the sender's data and there is never a
# second writer; a device of another VM is still refused. The same for
# an NBD export (nbdkit), where no lock stands between the two ends.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-nbd.sh"
xensim_setup
requires nbdkit
start_daemon

# The sender S: its guest writes (seed 5's pattern, which the whole image
# FILE holds already, so that the receiver can check every sector it
# reads), then keeps the disk TARGET connected. The receiver R, of the
# same VM, is offered the disk although S holds it.
sender_and_receiver() { # S R TARGET FILE
	vm=/vm/5e1f0000-0000-4000-8000-00000000000$1
	guest "$1" 8M
	write_pattern "$4" $((8 * 2048)) 5
	xenstore-write "/local/domain/$1/vm" "$vm"
	attach "$1" xvda "$3"
	blkfront "$1" --ops 300 --verify --seed 5 >/dev/null
	hold_start "$1" --hold --abandon
	hold_wait CONNECTED 10
	guest "$2" 4M
	xenstore-write "/local/domain/$2/vm" "$vm"
	attach "$2" xvda "$3"
	assert_node "$(be_path "$2")/state" 2
	assert_node "$(be_path "$2")/hotplug-status" connected
	wait_file_line "$WORK/blkbackd.log" "vbd $2/51712: .* is held by vbd $1/51712 of the same VM" 5 ||
		fail "the daemon did not say vbd $2 waits for the sender's device"
}

# The receiving guest starts and waits: no second writer. Then the
# sender's domain is destroyed, as xl does once the receiver runs, and
# the receiver takes the disk over, after the sender's release.
handover() { # S R
	# Not holding fd 3, the sender's stdin: its end must be the sender's
	# alone.
	"$BLKFRONT" --domid "$2" --preexisting --seed 5 --ops 300 --verify \
		--timeout-ms 30000 >"$WORK/front-$2.out" 2>&1 3>&- &
	front=$!
	BG_PIDS="$BG_PIDS $front"
	sleep 1.5
	assert_node "$(be_path "$2")/state" 2
	grep -q "connected:" "$WORK/front-$2.out" &&
		fail "the receiver connected while the sender held the image"
	exec 3>&-
	wait "$HOLD_PID" 2>/dev/null
	"$TOOLSTACK" destroy "$1" --remove-backends >>"$WORK/toolstack.log" 2>&1 ||
		fail "destroy dom $1 failed"
	blkfront_wait "$2" "$front" "the receiving guest failed after the hand-over"
	grep -q "verified OK" "$WORK/front-$2.out" ||
		fail "the receiving guest did not verify: $(cat "$WORK/front-$2.out")"
	rel=$(grep -n "vbd $1/51712: released" "$WORK/blkbackd.log" | head -n 1 | cut -d: -f1)
	took=$(grep -n "vbd $2/51712: took .* over" "$WORK/blkbackd.log" | head -n 1 | cut -d: -f1)
	if [ -z "$rel" ] || [ -z "$took" ]; then
		fail "no release/take-over lines in the log"
	fi
	[ "$rel" -lt "$took" ] ||
		fail "the receiver took the image (line $took) before the sender released it (line $rel)"
	xs_read "$(be_path "$1")/state" >/dev/null && fail "the sender's backend is still there"
	detach "$2"
}

note "an image file"
img=$WORK/d1.img
sender_and_receiver 1 2 "$img" "$img"
# Another VM is refused, as ever.
guest 3 4M
xenstore-write /local/domain/3/vm /vm/5e1f0000-0000-4000-8000-000000000003
attach_must_fail 3 "$img" xvda "holds it writable"
handover 1 2

note "an NBD export"
truncate -s 8M "$WORK/n.img"
nbd_server n file "$WORK/n.img"
sender_and_receiver 4 5 "$(uri n)" "$WORK/n.img"
handover 4 5
assert_daemon_alive
exit 0

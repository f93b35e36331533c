# A migration's two ends in one host (xl migrate to localhost), sourced
# after tests/lib.sh by the tests that hand a disk over between them:
# tests/vbd-migrate.sh (an image file, an NBD export) and tests/vbd-rbd.sh
# (an RBD image's exclusive lock). docs/migration.md says what the daemon
# does.

# The sender S: its guest writes seed 5's pattern into the disk TARGET,
# whose 8 MiB hold it already (the caller wrote it), so that the receiver
# can check every sector it reads, then keeps the disk connected. The
# receiver R, of the same VM, is offered the disk although S holds it.
sender_and_receiver() { # S R TARGET
	vm=/vm/5e1f0000-0000-4000-8000-00000000000$1
	guest "$1" 8M
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

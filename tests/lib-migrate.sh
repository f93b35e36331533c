# A migration's two ends in one host (xl migrate to localhost), and in
# two hosts (two daemons), sourced after tests/lib.sh by the tests that
# hand a disk over between them: tests/vbd-migrate.sh (an image file, an
# NBD export) and tests/vbd-rbd.sh (an RBD image's exclusive lock).
# docs/migration.md says what the daemon does.

# The sender S, a guest of VM $vm, writes seed SEED's pattern into the
# disk TARGET, whose 8 MiB hold it already (the caller wrote it), so that
# a receiver can check every sector it reads, then keeps the disk
# connected.
sender_holds() { # S TARGET SEED
	vm=/vm/5e1f0000-0000-4000-8000-$(printf %012d "$1")
	guest "$1" 8M
	xenstore-write "/local/domain/$1/vm" "$vm"
	attach "$1" xvda "$2"
	blkfront "$1" --ops 300 --verify --seed "$3" >/dev/null
	hold_start "$1" --hold --abandon
	hold_wait CONNECTED 10
}

# The sender S writes seed 5's pattern; the receiver R, of the same VM,
# is offered the disk although S holds it.
sender_and_receiver() { # S R TARGET
	sender_holds "$1" "$3" 5
	guest "$2" 4M
	xenstore-write "/local/domain/$2/vm" "$vm"
	attach "$2" xvda "$3"
	assert_node "$(be_path "$2")/state" 2
	assert_node "$(be_path "$2")/hotplug-status" connected
	wait_file_line "$WORK/blkbackd.log" "vbd $2/51712: .* is held by vbd $1/51712 of the same VM" 5 ||
		fail "the daemon did not say vbd $2 waits for the sender's device"
}

# The receiving guest R reads seed SEED's pattern from its disk, whose
# backend is BE: it must wait WAIT seconds without connecting while the
# sender S holds the image (no second writer). Then S's domain is
# destroyed, as xl does once R runs, and R must take the disk over and
# verify what S wrote.
receive_after_release() { # S R SEED BE WAIT
	# Not holding fd 3, the sender's stdin: its end must be the sender's
	# alone.
	"$BLKFRONT" --domid "$2" --preexisting --seed "$3" --ops 300 --verify \
		--timeout-ms 30000 >"$WORK/front-$2.out" 2>&1 3>&- &
	front=$!
	track_pid $front
	sleep "$5"
	assert_node "$4/state" 2
	grep -q "connected:" "$WORK/front-$2.out" &&
		fail "the receiver connected while the sender held the image"
	exec 3>&-
	wait "$HOLD_PID" 2>/dev/null
	"$TOOLSTACK" destroy "$1" --remove-backends >>"$WORK/toolstack.log" 2>&1 ||
		fail "destroy dom $1 failed"
	blkfront_wait "$2" "$front" "the receiving guest failed after the hand-over"
	expect_verified "$WORK/front-$2.out" "the receiving guest"
}

# In one host: the receiver takes the disk over after the sender's
# release, in that order in the one daemon's log.
handover() { # S R
	receive_after_release "$1" "$2" 5 "$(be_path "$2")" 1.5
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

# ---- between two hosts

# The other host: a second daemon serving backend domain HB, with its own
# connection to the storage and no device of the sending VM, so that all
# it learns of the sender is what the image's lock and its holder's name
# say. Its log is blkbackd-b.log.
other_host_start() { # HB
	HB=$1
	"$TOOLSTACK" create "$HB" >>"$WORK/toolstack.log" 2>&1 ||
		fail "create the other host's backend domain failed"
	LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		XENSIM_DOMID=$HB "$BLKBACKD" --log-level debug --domid "$HB" \
		--state-dir "$WORK/state-b" 2>>"$WORK/blkbackd-b.log" &
	B_PID=$!
	track_pid $B_PID
}

other_host_alive() {
	kill -0 "$B_PID" 2>/dev/null || fail "the other host's daemon died"
}

hb_be() { echo "/local/domain/$HB/backend/vbd/$1/51712"; }

# The sender S (on this host's daemon) writes seed 6's pattern into
# TARGET, whose 8 MiB hold it already, and keeps the disk; on the other
# host a guest X of another VM is refused (its error matching REFUSED),
# the arriving guest R of S's VM is offered the disk, waits without
# connecting while S holds the image, and once S's domain is destroyed
# (as xl does once R runs) it takes the image and reads what S wrote.
# WAIT (1.5 s unless given) is how long R waits before S goes.
between_hosts() { # S R X TARGET REFUSED [WAIT]
	sender_holds "$1" "$4" 6
	guest "$3" 4M
	xenstore-write "/local/domain/$3/vm" /vm/5e1f0000-0000-4000-8000-0000000000aa
	"$TOOLSTACK" attach "$3" "$4" xvda --backend-domid "$HB" \
		>>"$WORK/toolstack.log" 2>&1 &
	track_pid $!
	wait_node "$(hb_be "$3")/state" 5 20 ||
		fail "the other host served another VM's writer: state $(xs_read "$(hb_be "$3")/state")"
	xs_read "$(hb_be "$3")/error" | grep -q "$5" ||
		fail "dom $3: error node '$(xs_read "$(hb_be "$3")/error")'"
	guest "$2" 4M
	xenstore-write "/local/domain/$2/vm" "$vm"
	"$TOOLSTACK" attach "$2" "$4" xvda --backend-domid "$HB" \
		>>"$WORK/toolstack.log" 2>&1 ||
		fail "the other host did not offer the disk to the arriving VM"
	assert_node "$(hb_be "$2")/state" 2
	# xl devd runs the hotplug script there, as in a driver domain.
	XENBUS_PATH=$(hb_be "$2") "$HOTPLUG" add >>"$WORK/devd.log" 2>&1 ||
		fail "the hotplug script failed on the other host"
	grep -q "vbd $2/51712: .* is locked by a disk of the same VM on another host" \
		"$WORK/blkbackd-b.log" ||
		fail "the other host's daemon did not say it waits for the image"
	receive_after_release "$1" "$2" 6 "$(hb_be "$2")" "${6:-1.5}"
	grep -q "vbd $1/51712: released" "$WORK/blkbackd.log" ||
		fail "the sending host did not release the image"
	grep -q "vbd $2/51712: took .* over" "$WORK/blkbackd-b.log" ||
		fail "the other host did not take the image over"
}

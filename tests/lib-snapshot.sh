# Helpers of the snapshot tests (sourced after lib.sh): file systems made
# by the test on loop devices, a guest writing numbered pages, and the
# snapshot requests.

# requires_loop_mount: skip unless this test may make and mount file
# systems on loop devices.
requires_loop_mount() {
	[ "$(id -u)" = 0 ] || skip "needs root: it mounts file systems on loop devices"
	requires losetup mount umount
	losetup -f >/dev/null 2>&1 || skip "no free loop device (losetup -f)"
}

# scratch_fs TYPE DIR SIZE [MKFS-OPTIONS...]: a new TYPE file system of
# SIZE on a loop device (over a sparse file), mounted at DIR and unmounted
# by the EXIT trap, which also frees the loop device (mount's autoclear).
scratch_fs() {
	sf_type=$1
	sf_dir=$2
	sf_size=$3
	shift 3
	requires "mkfs.$sf_type"
	truncate -s "$sf_size" "$sf_dir.fs" || hard_error "truncate $sf_dir.fs"
	"mkfs.$sf_type" -q "$@" "$sf_dir.fs" >"$sf_dir.mkfs" 2>&1 ||
		fail "mkfs.$sf_type $*: $(cat "$sf_dir.mkfs")"
	mkdir -p "$sf_dir" || hard_error "mkdir $sf_dir"
	mount -o loop "$sf_dir.fs" "$sf_dir" 2>"$sf_dir.mount" ||
		skip "cannot mount a $sf_type file system on a loop device:" \
			"$(cat "$sf_dir.mount")"
	SCRATCH_MOUNTS="$SCRATCH_MOUNTS $sf_dir"
}

# xfs_reflink DIR: an XFS file system that shares blocks (reflink=1) at
# DIR; skips where mkfs.xfs or the kernel cannot.
xfs_reflink() {
	requires mkfs.xfs
	scratch_fs xfs "$1" 512M -m reflink=1
}

# numbered_start DOMID: a guest writing numbered pages at depth 8 until
# numbered_stop (tools/xensim/workload-numbered.c), its log in
# front-DOMID.out.
numbered_start() {
	hold_start "$1" --check numbered-writes
	hold_wait WRITING 30
}

# numbered_stop: it stops, waits for its writes in flight, and must have
# seen every one answered OKAY.
numbered_stop() {
	hold_end
	grep -q "check numbered-writes done" "$WORK/front-$HOLD_DOMID.out" ||
		fail "the numbered writer failed: $(tail -n 3 "$WORK/front-$HOLD_DOMID.out")"
	ns_bad=$(grep '^A ' "$WORK/front-$HOLD_DOMID.out" | grep -cv ' OKAY$')
	[ "$ns_bad" = 0 ] ||
		fail "the guest saw $ns_bad writes answered with an error:" \
			"$(grep '^A ' "$WORK/front-$HOLD_DOMID.out" | grep -v ' OKAY$' | head -3)"
}

# read_back DOMID IMAGE: a new guest DOMID reads IMAGE's numbered pages
# through the daemon (front-DOMID.out), and goes.
read_back() {
	"$TOOLSTACK" create "$1" >>"$WORK/toolstack.log" 2>&1 ||
		fail "create dom $1"
	attach "$1" xvda "$2"
	blkfront "$1" --check numbered-read >/dev/null
	detach "$1"
}

# snapshot DISK DEST OUT: blkbackctl --json snapshot, its reply in OUT;
# the command's exit status.
snapshot() {
	$CTL --json snapshot "$1" "$2" >"$3" 2>"$3.err"
}

# pause_ms REPLY: the guest's pause the daemon reported.
pause_ms() { json "$1" 'd["pause_ms"]'; }

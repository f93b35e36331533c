#!/bin/sh
# An HVM guest boots from QEMU's emulated disk until its PV driver takes
# over, and QEMU opens the image libxl finds in physical-device-path (the
# one path libxl 4.17 gives QEMU for a disk with a hotplug script). So:
# blkbackd writes the image there; QEMU, started as libxl starts the device
# model (an emulated IDE disk, read-write), can open the offered image;
# once the guest unplugs the emulated disk (QEMU closes the image; here
# QEMU exits) the PV driver connects and is served; from then on QEMU
# cannot open the image, and a PV driver that connects while QEMU still
# has the image (a guest that did not unplug) is refused with the reason.
# The QEMU is the real one, as the device model is.
. "$top_srcdir/tests/lib.sh"
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	skip "no qemu-system-x86_64 (install qemu-system-x86)"
xensim_setup
[ -x "$HOTPLUG" ] || skip "no hotplug script at $HOTPLUG"
start_daemon

# emulated_disk DOMID IMAGE: the device model's emulated disk as libxl
# 4.17 starts it (libxl_dm.c: file=PATH,if=ide,...,cache=writeback), in a
# stopped machine; $qemu is its pid once it holds the image open.
emulated_disk() {
	qemu-system-x86_64 -machine pc -accel tcg -S -nodefaults \
		-display none -monitor none -serial none \
		-drive "file=$2,if=ide,index=0,media=disk,format=raw,cache=writeback" \
		>"$WORK/qemu-$1.out" 2>&1 &
	qemu=$!
	track_pid $qemu
	n=100
	while ! ls -l "/proc/$qemu/fd" 2>/dev/null | grep -q -- "-> $2\$"; do
		pid_alive "$qemu" ||
			fail "dom $1: QEMU could not open the image blkbackd" \
				"offers: $(cat "$WORK/qemu-$1.out")"
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "dom $1: QEMU did not open $2 in 10 s"
		sleep 0.1
	done
}

# unplug DOMID: the guest unplugs the emulated disk; QEMU closes the image.
unplug() {
	kill "$qemu"
	wait "$qemu" 2>/dev/null
}

note "guest 1: the emulated disk first, then the PV disk"
guest 1 16M
attach 1
img=$WORK/d1.img
assert_node "$(be_path 1)/physical-device-path" "$img"
emulated_disk 1 "$img"
assert_node "$(be_path 1)/state" 2
unplug
blkfront 1 --ops 200 --verify >/dev/null
expect_verified "$WORK/front-1.out" "dom 1 after the unplug"
note "guest 1 served after the unplug: $(connected_line 1)"

# Served writable: a QEMU that wants the image now is turned away by its
# own lock check, and says so.
qemu-system-x86_64 -machine pc -accel tcg -S -nodefaults -display none \
	-monitor none -serial none \
	-drive "file=$img,if=ide,index=0,media=disk,format=raw,cache=writeback" \
	>"$WORK/qemu-late.out" 2>&1 &
late=$!
track_pid $late
n=100
while pid_alive "$late" && [ "$n" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
pid_alive "$late" && fail "QEMU opened an image blkbackd serves writable"
grep -q 'lock' "$WORK/qemu-late.out" ||
	fail "QEMU failed, but not on the lock: $(cat "$WORK/qemu-late.out")"
note "a late QEMU is refused: $(head -n 1 "$WORK/qemu-late.out")"
blkfront 1 --ops 50 --verify >/dev/null

note "guest 2: the PV driver connects while QEMU still has the image"
guest 2 16M
attach 2
emulated_disk 2 "$WORK/d2.img"
blkfront_refused 2 --ops 10
err=$(xs_read "$(be_path 2)/error")
echo "$err" | grep -q "QEMU still has image $WORK/d2.img open for writing" ||
	fail "dom 2: error node '$err'"
grep -q "vbd 2/51712: QEMU still has image" "$WORK/blkbackd.log" ||
	fail "dom 2: the daemon did not log the refusal"
unplug

assert_daemon_alive
blkfront 1 --ops 50 --verify >/dev/null
exit 0

#!/bin/sh
# backendtype=tap disks (backend/vbd3, as libxl 4.19 and later plug them)
# served with `--serve vbd3`, beside the kernel's xen-blkback, which keeps
# backend/vbd for phy: disks: the daemon starts although xen-blkback is
# bound, serves the vbd3 disk verified data from its "aio:PATH" params,
# never touches a backend/vbd device, refuses a VHD image with the reason
# xl shows, and detaches cleanly. `--serve both` serves the two. The
# simulated toolstack writes what libxl 4.20 wrote under real Xen (the
# check-xen part xen420 dumps it), its /libxl copy of the device included.
. "$top_srcdir/tests/lib.sh"
xensim_setup

# xen-blkback bound, as in a dom0 that keeps it for its volumes.
mkdir -p "$WORK/sys/bus/xen-backend/drivers/vbd"
BLKBACKD_SYSFS=$WORK/sys
export BLKBACKD_SYSFS
start_daemon --serve vbd3
assert_daemon_alive
unset BLKBACKD_SYSFS

# A phy: disk of domain 1, the kernel's to serve: written as libxl does
# for a vbd, and left alone here.
guest 1 4M
kbe=$(be_path 1)
xenstore-write "$kbe/frontend" "$(fe_path 1)" "$kbe/params" /dev/vg/lv1 \
	"$kbe/mode" w "$kbe/type" phy "$kbe/online" 1 "$kbe/state" 1 ||
	fail "cannot write the kernel's device"

# A tap disk of domain 2, served here.
guest 2 8M
attach 2 xvda "$WORK/d2.img" --backendtype tap
be3=/local/domain/0/backend/vbd3/2/51712
assert_node "$be3/params" "aio:$WORK/d2.img"
assert_node "$be3/state" 2
assert_node "$be3/hotplug-status" connected
# libxl's own record of the disk: under device/vbd, pointing at vbd3.
lx=/libxl/2/device/vbd/51712
assert_node "$lx/backend" "$be3"
assert_node "$lx/params" "aio:$WORK/d2.img"
assert_node "$lx/type" vbd3
assert_node "$lx/state" 1
blkfront 2 --ops 400 --verify >/dev/null
expect_verified "$WORK/front-2.out" "the tap disk's guest"
grep -q "vbd3 2/51712" "$WORK/blkbackd.log" ||
	fail "the log does not name the device vbd3 2/51712"
detach 2 xvda --backendtype tap
xs_read "$be3/state" >/dev/null && fail "$be3 still there after detach"
xs_read "$lx/backend" >/dev/null && fail "$lx still there after detach"

# The kernel's device: as it was written, nothing added.
assert_node "$kbe/state" 1
xs_read "$kbe/feature-flush-cache" >/dev/null &&
	fail "the daemon offered features on backend/vbd under --serve vbd3"
grep -q "vbd 1/51712" "$WORK/blkbackd.log" &&
	fail "the daemon looked at backend/vbd under --serve vbd3"

# A VHD image: refused with the reason, at attach.
guest 3 4M
attach_must_fail 3 "$WORK/d3.img" xvda "is a VHD image" --backendtype tap \
	--format vhd
assert_daemon_alive
stop_daemon

# Both directories, one daemon (xen-blkback gone).
xenstore-rm "$kbe"
start_daemon --serve both
guest 4 4M
guest 5 4M
attach 4
attach 5 xvda "$WORK/d5.img" --backendtype tap
blkfront 4 --ops 200 --verify >/dev/null
blkfront 5 --ops 200 --verify >/dev/null
detach 4
detach 5 xvda --backendtype tap
assert_daemon_alive
exit 0

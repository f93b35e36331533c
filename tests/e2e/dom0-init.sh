#!/bin/sh
# PID 1 of the test's dom0 (exec'd by /sbin/e2e-init from the cached root,
# with /proc, /sys, /dev and the work disk on /work already mounted).
#
# There is no systemd here on purpose: under TCG it costs minutes.  This
# does what a Debian dom0's boot does for Xen (modules, xenfs, xenstored,
# xen-init-dom0, xenconsoled), runs the test, and powers the machine off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
R=/work/results
mkdir -p "$R" "$R/console" /run /var/log/xen /var/run/xen /var/lib/xen \
	/run/xenstored
mount -t tmpfs tmpfs /run
mkdir -p /run/xen /run/xenstored /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -o remount,rw /
hostname e2e-dom0

fatal() {
	echo "E2E-DOM0: FAIL $*"
	sync
	/bin/busybox poweroff -f
}

for m in xenfs xen-evtchn xen-gntdev xen-gntalloc xen-privcmd loop; do
	modprobe "$m" || echo "e2e: modprobe $m failed"
done
mountpoint -q /proc/xen || mount -t xenfs xenfs /proc/xen ||
	fatal "cannot mount xenfs"

XEN_BIN=$(ls -d /usr/lib/xen-[0-9]*/bin | sort -V | tail -n 1)
XENSTORED_ROOTDIR=/run/xenstored oxenstored --pid-file /run/xenstore.pid ||
	fatal "oxenstored did not start"
i=0
until xenstore-read /local >/dev/null 2>&1 || xenstore-ls / >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || fatal "xenstored is not answering"
	sleep 0.2
done
"$XEN_BIN/xen-init-dom0" || fatal "xen-init-dom0 failed"
"$XEN_BIN/xenconsoled" --pid-file /run/xenconsoled.pid --log=guest \
	--log-dir="$R/console" || fatal "xenconsoled did not start"

echo "E2E-DOM0: ready after $(cut -d' ' -f1 /proc/uptime) s of dom0 uptime"
# The Debian 13 boot (part xen420) brings a test of its own.
test=/work/e2e/dom0-test.sh
[ ! -x /work/e2e/dom0-test-xen420.sh ] || test=/work/e2e/dom0-test-xen420.sh
"$test" 2>&1 | tee "$R/dom0-test.log"
echo "E2E-DOM0: test script finished"
sync
umount /work 2>/dev/null || mount -o remount,ro /work
sync
/bin/busybox poweroff -f

#!/bin/sh
# PID 1 of the storage driver domain "blkbackd" of the real-Xen test
# (dom0-test.sh, part driverdomain), after the guest initramfs switched to
# its root: a copy of the dom0 root with blkbackd installed from the run's
# `make install` output.  It does what docs/driver-domain.md tells an
# operator to do inside the domain (Xen devices, the `block` script taken
# over, blkbackd as its unit starts it, `xl devd`), says E2E-DD-READY,
# waits for dom0 to ask for the checks (data/e2e-cmd = verify in its
# xenstore home, once the guest it served is gone), checks the images and
# that no loop device was made here, stops blkbackd and powers off.
# Verdicts are "RESULT PASS|FAIL NAME DETAIL" lines on its console.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
IMG=/srv/img
LOG=/var/log/blkbackd.log
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /run/xen /var/log/xen /var/lib/xen /dev/pts
mount -t devpts devpts /dev/pts
hostname blkbackd
failed=0

result() {
	echo "RESULT $*"
	[ "$1" != FAIL ] || failed=$((failed + 1))
}

# The end, with or without a failure: the daemon's log for dom0's record.
finish() {
	echo "E2E-DD-LOG ----- blkbackd log in the driver domain (tail)"
	tail -n 30 "$LOG" 2>/dev/null | sed 's/^/E2E-DD-LOG /'
	echo "E2E-DONE failed=$failed"
	sync
	/bin/busybox poweroff -f
}

for m in xenfs xen-evtchn xen-gntdev xen-privcmd; do
	modprobe "$m" || result FAIL "modprobe-$m"
done
mount -t xenfs xenfs /proc/xen || result FAIL mount-xenfs

# docs/driver-domain.md: in a domain dedicated to blkbackd, the package's
# script takes over Xen's `block`, so that disk lines without script=
# (backend=blkbackd,file:/IMG,xvda,w) make no loop device.
if dpkg-divert --local --rename --add /etc/xen/scripts/block &&
	ln -s blkbackd /etc/xen/scripts/block; then
	result PASS block-script-taken-over "$(ls -l /etc/xen/scripts/block | sed 's/.* -> //')"
else
	result FAIL block-script-taken-over
fi

# blkbackd with the ExecStart= of its installed unit, and what the unit
# sets up (there is no systemd here, as in the test's dom0).
unit=/lib/systemd/system/blkbackd.service
cmd=$(sed -n 's/^ExecStart=[-@+!:]*//p' "$unit" | head -n 1)
(
	ulimit -l unlimited
	ulimit -n 65536
	umask 0077
	mkdir -p -m 0700 /run/blkbackd
	export RUNTIME_DIRECTORY=/run/blkbackd
	exec setsid sh -c "exec $cmd" </dev/null >>"$LOG" 2>&1
) &
dpid=$!
i=0
until grep -q 'serving ' "$LOG" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 150 ] || ! kill -0 $dpid 2>/dev/null; then
		result FAIL dd-blkbackd-started "$(tail -n 5 "$LOG" | tr '\n' ' ')"
		finish
	fi
	sleep 0.2
done
result PASS dd-blkbackd-started "pid $dpid: $cmd"

# After blkbackd: it must watch its backend before devd runs scripts.
if xl devd --pidfile=/run/xldevd.pid; then
	result PASS dd-xl-devd
else
	result FAIL dd-xl-devd "xl devd exited $?"
	finish
fi
echo "E2E-DD-READY domain $(xenstore-read domid)"

i=0
until [ "$(xenstore-read data/e2e-cmd 2>/dev/null)" = verify ]; do
	i=$((i + 1))
	[ $i -lt 3600 ] || finish
	sleep 0.5
done

# The guest's patterns in the images, and dom0's first one untouched.
for img in a b; do
	f=$IMG/dd-$img.img
	if out=$(e2e-check verify "$f" 40M 16M 22 -d -b 1M 2>&1); then
		result PASS "dd-$img/guest-pattern-in-image"
	else
		result FAIL "dd-$img/guest-pattern-in-image" "$out"
	fi
	if out=$(e2e-check verify "$f" 32M 8M 21 -b 1M 2>&1); then
		result PASS "dd-$img/first-pattern-untouched"
	else
		result FAIL "dd-$img/first-pattern-untouched" "$out"
	fi
	echo "E2E-DD-SUM $img $(dd if="$f" bs=1M skip=40 count=16 2>/dev/null | sha256sum | cut -d' ' -f1)"
done

# No loop device was set up here: none is bound to a file.
loops=$(for f in /sys/block/loop*/loop/backing_file; do
	[ -f "$f" ] && echo "${f#/sys/block/}=$(cat "$f")"
done)
if [ -z "$loops" ]; then
	result PASS dd-no-loop-devices "loop module $(grep -q '^loop ' /proc/modules && echo loaded || echo not loaded)"
else
	result FAIL dd-no-loop-devices "$(echo "$loops" | tr '\n' ' ')"
fi

kill -TERM $dpid
i=0
while kill -0 $dpid 2>/dev/null && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.2
done
if kill -0 $dpid 2>/dev/null; then
	result FAIL dd-blkbackd-stops-on-sigterm "still running after 60 s"
else
	wait $dpid
	st=$?
	[ $st -eq 0 ] && result PASS dd-blkbackd-stops-on-sigterm ||
		result FAIL dd-blkbackd-stops-on-sigterm "exit status $st"
fi
errors=$(grep -E '^(blkbackd: err:|<[0-3]>)' "$LOG")
if [ -n "$errors" ]; then
	result FAIL dd-blkbackd-logged-no-errors "$(echo "$errors" | head -n 5 | tr '\n' ' ')"
else
	result PASS dd-blkbackd-logged-no-errors
fi
finish

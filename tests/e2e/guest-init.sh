#!/bin/busybox sh
# PID 1 of the PV guests of the real-Xen end-to-end test.  Its disk is
# served by blkbackd (or, for the comparison, by the kernel's xen-blkback)
# and driven by the real Linux xen-blkfront.  What to do comes from the
# kernel command line (xl's extra=):
#
#   e2e_role=full     the disk checks below, then wait to be shut down
#   e2e_role=writer   write to the disk without end (to be destroyed)
#   e2e_role=mix      the concurrent-guests comparison's job (`e2e-check
#                     mixjob`, seed e2e_mix_seed, e2e_mix_size bytes), run
#                     on dom0's commands (concurrency.sh)
#   e2e_role=switchroot  (the storage driver domain) mount the disk and
#                     run e2e_init=PATH there as PID 1
#   e2e_role=migwork  (the migration, the NBD part) verified writes without
#                     end, after reading the pattern e2e_verify=M:L:SEED
#                     (in MiB) if given
#   e2e_role=bench    (the NBD comparison) throughput and IOPS over the
#                     first e2e_bench_size bytes, nothing else
#   e2e_role=qd1      (the stage-timing pass) 4 KiB random reads, then
#                     writes, at depth 1 for e2e_qd1_secs seconds each
#   e2e_role=pattern  (the PVH and HVM guests) say which kind of guest this
#                     is, verify the pattern dom0 wrote (e2e_verify=M:L:SEED,
#                     in MiB), write and verify another (e2e_write=M:L:SEED)
#                     and print its checksum for dom0 to compare, on
#                     each disk of e2e_devs=xvda,xvdb (default xvda)
#   e2e_triple_fault=1  (pattern) triple-fault on purpose after the I/O
#                     (a test knob: the kernel needs reboot=t as well)
#   e2e_hotplug=xvdb  (full) wait for a hot-plugged disk, check it, wait
#                     for it to be unplugged
#   e2e_bench=1       (full) measure throughput and IOPS as well, and
#                     reads of the 64 MiB at 320M that dom0 filled and
#                     dropped from its cache
#   e2e_ro=xvdc       (full) a read-only disk dom0 filled with pattern seed 6
#   e2e_resize=1      (full) ask dom0 to grow the disk by 16 MiB while it
#                     runs, wait for the new size, use the new tail
#
# Every check prints one line "RESULT PASS|FAIL|SKIP NAME DETAIL" on the
# console, which dom0 reads from xenconsoled's log; "E2E-..." lines are
# progress markers dom0 waits for.
#
# Disk layout (the image is 384 MiB):
#   [0, 160M)    ext4
#   [160M, 176M) O_DIRECT pattern, seed 1        [176M, 177M) seed 4
#   [180M, 196M) buffered pattern, seed 2
#   [200M, 232M) large-request pattern, seed 3
#   [240M, 256M) last pattern written and flushed, seed 99
#   [256M, 384M) benchmark scratch
#   [384M, 400M) (e2e_resize) the tail added online, pattern seed 8
# dom0 verifies the patterns and the filesystem in the image afterwards.
/bin/busybox mkdir -p /proc /sys /dev /tmp /mnt /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/sbin:/usr/sbin:/bin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

arg() {
	for w in $(cat /proc/cmdline); do
		case "$w" in "$1"=*) echo "${w#*=}" ;; esac
	done
}

ROLE=$(arg e2e_role)
HOTPLUG=$(arg e2e_hotplug)
BENCH=$(arg e2e_bench)
RO=$(arg e2e_ro)
RESIZE=$(arg e2e_resize)
DEV=xvda
D=/dev/$DEV
FS_SIZE=160M
failed=0

result() {
	echo "RESULT $*"
	[ "$1" != FAIL ] || failed=$((failed + 1))
}

check() {
	name=$1
	shift
	echo "E2E-CHECK $name"
	if out=$("$@" 2>&1); then
		result PASS "$name"
	else
		result FAIL "$name" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

wait_for() { # TEST SECONDS
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -le $(($2 * 5)) ] || return 1
		sleep 0.2
	done
}

mounted() { grep -q " $1 " /proc/mounts; }

idle_forever() {
	while :; do sleep 60; done
}

# blkfront uses multi-page rings only when told to (its default order is 0).
for m in $(cat /lib/modules/order); do
	case $m in
	xen-blkfront.ko) insmod "/lib/modules/$m" max_ring_page_order=2 ;;
	*) insmod "/lib/modules/$m" ;;
	esac
done
# dom0's `xl shutdown` makes the kernel run this (orderly_poweroff); the
# power-off then closes every xenbus device cleanly (Closing -> Closed).
rm -f /sbin/poweroff # a busybox link: writing through it would clobber busybox
printf '#!/bin/busybox sh\nsync\nexec /bin/busybox poweroff -f\n' >/sbin/poweroff
chmod +x /sbin/poweroff

if ! wait_for "[ -b $D ]" 30; then
	result FAIL disk-appears "$D did not appear"
	echo "E2E-DONE failed=1"
	idle_forever
fi
echo "E2E-STARTED $(cat /sys/block/$DEV/size) sectors"

q=/sys/block/$DEV/queue
sysfs() { cat "$q/$1" 2>/dev/null || echo 0; }

if [ "$ROLE" = mix ]; then
	e2e-check mixjob $D "$(arg e2e_mix_seed)" "$(arg e2e_mix_size)"
	idle_forever
fi

# The storage driver domain (dom0-test.sh): its root file system is its
# disk; hand over to the init there (e2e_init=PATH).
if [ "$ROLE" = switchroot ]; then
	mkdir -p /newroot
	init=$(arg e2e_init)
	if mount -t ext4 $D /newroot; then
		umount /proc /sys /dev
		exec switch_root /newroot "$init"
	fi
	result FAIL switch-root "cannot mount $D"
	echo "E2E-DONE failed=1"
	idle_forever
fi

# The migration (dom0-test.sh): write a pass's pattern into one half of
# [0, 16M) and read it back, the next pass into the other half, without
# end; dom0 moves the domain meanwhile. A pass that fails stops the loop.
if [ "$ROLE" = migwork ]; then
	# The NBD part first reads what dom0 put into the qcow2 image; one
	# line for dom0 to judge.
	v=$(arg e2e_verify)
	if [ -n "$v" ]; then
		m=${v%%:*} rest=${v#*:}
		if out=$(e2e-check verify $D "${m}M" "${rest%%:*}M" "${rest#*:}" -d -b 1M 2>&1); then
			echo "E2E-PREREAD PASS [${m}M, +${rest%%:*}M) seed ${rest#*:}"
		else
			echo "E2E-PREREAD FAIL $(echo "$out" | head -n 2 | tr '\n' ' ')"
		fi
	fi
	p=0
	while :; do
		at=$((p % 2 * 8))M
		if e2e-check write $D "$at" 8M $((p + 100)) -d -b 64K &&
			e2e-check verify $D "$at" 8M $((p + 100)) -d -b 64K; then
			echo "E2E-MIGWORK pass $p ok"
		else
			echo "E2E-MIGWORK pass $p FAIL"
			idle_forever
		fi
		p=$((p + 1))
	done
fi

# The NBD comparison (nbd.sh): the disk's throughput and IOPS alone, the
# same run on blkbackd and on the kernel's nbd + xen-blkback.
if [ "$ROLE" = bench ]; then
	if out=$(e2e-check bench $D 0 "$(arg e2e_bench_size)" 5 2>&1); then
		echo "$out"
		result PASS bench
	else
		result FAIL bench "$(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
	echo "E2E-DONE failed=$failed"
	idle_forever
fi

# The stage-timing pass (dom0-test.sh): each run over the first 32 MiB,
# timed request by request; before each the guest stays idle for 5 s, so
# that dom0 can read the daemon's counters between the runs (it checks
# that their request counts are the guest's).
if [ "$ROLE" = qd1 ]; then
	for op in read write; do
		echo "E2E-QD1-IDLE $op"
		sleep 5
		echo "E2E-$(e2e-check qd1 $D 0 32M "$(arg e2e_qd1_secs)" $op 2>&1)"
	done
	echo "E2E-DONE failed=0"
	idle_forever
fi

# The PVH and HVM guests: the kind of guest as the kernel sees it (dom0
# checks it is the one it created), then the patterns.
mib_region() { # M:L:SEED -> "OFFSET LENGTH SEED", in bytes for e2e-check
	m=${1%%:*}
	rest=${1#*:}
	echo "$((m << 20)) $((${rest%%:*} << 20)) ${rest#*:}"
}
# One disk's patterns; checks of disks other than xvda are named after them.
pattern_disk() { # DEV
	p=
	[ "$1" = xvda ] || p="$1/"
	wait_for "[ -b /dev/$1 ]" 30 || result FAIL "${p}disk-appears" "/dev/$1"
	if [ -n "$(arg e2e_verify)" ]; then
		# shellcheck disable=SC2046 # three fields on purpose
		check "${p}dom0-pattern-read" e2e-check verify "/dev/$1" $(mib_region "$(arg e2e_verify)") -d -b 1M
	fi
	# shellcheck disable=SC2046
	set -- "$1" $(mib_region "$(arg e2e_write)")
	check "${p}guest-pattern-written" sh -c \
		"e2e-check write /dev/$1 $2 $3 $4 -d -b 256K &&
		 e2e-check verify /dev/$1 $2 $3 $4 -d -b 64K"
}
# e2e_devs=xvda,xvdb: the disks to use (default xvda); E2E-SUM is xvda's
# checksum, E2E-SUM-DEV another disk's.
pattern_role() {
	echo "E2E-GUEST-TYPE $(cat /sys/hypervisor/guest_type 2>/dev/null || echo unknown)"
	devs=$(arg e2e_devs | tr , ' ')
	for dev in ${devs:-xvda}; do
		pattern_disk "$dev"
	done
	# A test knob (dom0-test.sh, BLKBACKD_E2E_INJECT=triple-fault): fail
	# as this emulation now and then does, after the I/O; the kernel was
	# booted with reboot=t, which reboots by a triple fault.
	if [ "$(arg e2e_triple_fault)" = 1 ]; then
		echo "E2E-TRIPLE-FAULT on purpose"
		reboot -f
	fi
	echo 3 >/proc/sys/vm/drop_caches
	# shellcheck disable=SC2046
	set -- $(mib_region "$(arg e2e_write)")
	for dev in ${devs:-xvda}; do
		suffix=
		[ "$dev" = xvda ] || suffix="-$dev"
		echo "E2E-SUM$suffix $(dd if=/dev/$dev bs=1M skip=$(($1 >> 20)) count=$(($2 >> 20)) 2>/dev/null | sha256sum | cut -d' ' -f1)"
	done
	echo "E2E-DONE failed=$failed"
	idle_forever
}
[ "$ROLE" != pattern ] || pattern_role

if [ "$ROLE" = writer ]; then
	echo "E2E-WRITING"
	e2e-check writeloop $D 0 64M
	echo "E2E-WRITER-STOPPED $?"
	idle_forever
fi

echo "E2E-INFO max_segments=$(sysfs max_segments)" \
	"max_hw_sectors_kb=$(sysfs max_hw_sectors_kb)" \
	"discard_max_bytes=$(sysfs discard_max_bytes)" \
	"logical_block_size=$(sysfs logical_block_size)"

# Disk size as seen by the guest: what blkbackd published in "sectors".
sectors=$(cat /sys/block/$DEV/size)
if [ "$sectors" -eq $((384 * 2048)) ]; then
	result PASS size "$sectors sectors"
else
	result FAIL size "$sectors sectors, expected $((384 * 2048))"
fi

# O_DIRECT: whole pages, then sector-sized requests from buffers that do
# not start on a page (segments with first_sect > 0), then odd sizes.
odirect() {
	e2e-check write $D 160M 16M 1 -d -b 64K &&
		e2e-check verify $D 160M 16M 1 -d -b 1M &&
		e2e-check verify $D 160M 16M 1 -d -b 4K &&
		e2e-check write $D 176M 1M 4 -d -b 512 -s 512 &&
		e2e-check verify $D 176M 1M 4 -d -b 3584 -s 1024 &&
		e2e-check write $D 176M 1M 4 -d -b 45056 -s 3584 &&
		e2e-check verify $D 176M 1M 4 -d -b 64K
}
check odirect-pattern odirect

# Buffered: through the guest page cache, flushed, re-read after dropping it.
buffered() {
	e2e-check write $D 180M 16M 2 -b 1M &&
		echo 3 >/proc/sys/vm/drop_caches &&
		e2e-check verify $D 180M 16M 2 -b 64K &&
		e2e-check verify $D 180M 16M 2 -d -b 128K
}
check buffered-pattern buffered

# Large requests need indirect segments: without them a request carries at
# most 11 segments (44 KiB) and blkfront limits the queue to that.
large_requests() {
	echo "$(sysfs max_hw_sectors_kb)" >"$q/max_sectors_kb"
	# shellcheck disable=SC2046 # split into fields on purpose
	set -- $(cat /sys/block/$DEV/stat)
	ios0=$5 sec0=$7
	e2e-check write $D 200M 32M 3 -d -b 1M || return 1
	# shellcheck disable=SC2046
	set -- $(cat /sys/block/$DEV/stat)
	ios=$(($5 - ios0)) sec=$(($7 - sec0))
	e2e-check verify $D 200M 32M 3 -d -b 1M || return 1
	# Average request above 44 KiB (88 sectors): the big ones got through.
	[ "$ios" -gt 0 ] && [ $((sec / ios)) -gt 88 ] || {
		echo "average write request $((sec / ios)) sectors"
		return 1
	}
	echo "average write request $((sec / ios)) sectors"
}
if [ "$(sysfs max_segments)" -gt 11 ]; then
	if out=$(large_requests 2>&1); then
		result PASS indirect-large-requests "$out"
	else
		result FAIL indirect-large-requests "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
else
	result SKIP indirect-large-requests \
		"not offered by the backend yet (max_segments $(sysfs max_segments))"
	# The same pattern with the requests blkfront can send.
	check large-pattern-11-segments sh -c \
		"e2e-check write $D 200M 32M 3 -d -b 1M &&
		 e2e-check verify $D 200M 32M 3 -d -b 1M"
fi

# ext4: make, fill, remount, verify, fsck.
mkfs_fill() {
	mkfs.ext4 -q -F -b 4096 -E nodiscard $D $FS_SIZE &&
		mount -t ext4 -o noinit_itable $D /mnt || return 1
	i=1
	for size in 4K 100K 1M 3M 8M 64K 512K 2M 12K 7M; do
		e2e-check write /mnt/f$i 0 $size $((100 + i)) -b 64K || return 1
		i=$((i + 1))
	done
	mkdir -p /mnt/dir/sub && echo hello >/mnt/dir/sub/note || return 1
	(cd /mnt && sha256sum f* dir/sub/note >/tmp/MANIFEST) &&
		cp /tmp/MANIFEST /mnt/MANIFEST && sync && umount /mnt
}
fs_reverify() {
	echo 3 >/proc/sys/vm/drop_caches
	mount -t ext4 -o noinit_itable $D /mnt &&
		(cd /mnt && sha256sum -c MANIFEST) &&
		e2e-check verify /mnt/f5 0 8M 105 -d
}
check ext4-mkfs-and-files mkfs_fill
check ext4-remount-checksums fs_reverify

# fstrim: a freed file's blocks must become holes in the image (dom0
# checks the extents printed here).
trim() {
	e2e-check write /mnt/trimme 0 24M 7 -b 1M && sync || return 1
	e2e-check extents /mnt/trimme >/tmp/extents || return 1
	rm /mnt/trimme && sync && fstrim -v /mnt || return 1
	while read -r off len; do
		echo "E2E-TRIMMED $off $len"
	done </tmp/extents
	# What the guest reads back at the first trimmed extent.
	echo 3 >/proc/sys/vm/drop_caches
	read -r off len </tmp/extents
	echo "E2E-INFO after fstrim, at $off: $(dd if=$D bs=4096 skip=$((off / 4096)) count=1 2>/dev/null | hexdump -C | head -n 2 | tr "\n" " ")"
}
if [ "$(sysfs discard_max_bytes)" -eq 0 ]; then
	result SKIP fstrim "discard not offered by the backend yet"
elif ! mounted /mnt; then
	result FAIL fstrim "the filesystem is not mounted"
else
	echo "E2E-CHECK fstrim"
	if out=$(trim 2>&1); then
		echo "$out" | grep -E "E2E-(TRIMMED|INFO)"
		result PASS fstrim "$(echo "$out" | grep -vE "E2E-(TRIMMED|INFO)" | tr '\n' ' ')"
	else
		result FAIL fstrim "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
fi
! mounted /mnt || umount /mnt
check ext4-fsck-clean e2fsck -fn $D

# The read-only disk (xl access=ro): blkfront marks it read-only, it reads
# what dom0 wrote, and a write is refused (whichever side refuses it, dom0
# checks that the image did not change).  One line for dom0 to judge:
#   E2E-RO PASS|FAIL DETAIL
read_only_disk() { # DEV
	d=/dev/$1 bad=0
	wait_for "[ -b $d ]" 30 || {
		echo "$d did not appear"
		return 1
	}
	ro=$(cat "/sys/block/$1/ro")
	[ "$ro" = 1 ] || bad=1
	echo "ro=$ro"
	if e2e-check verify "$d" 0 16M 6 -d -b 1M; then
		echo "content read back"
	else
		echo "content differs"
		bad=1
	fi
	if werr=$(e2e-check write "$d" 0 1M 66 -d -b 64K 2>&1); then
		echo "O_DIRECT write accepted"
		bad=1
	else
		echo "O_DIRECT write refused ($(echo "$werr" | head -n 1))"
	fi
	echo 3 >/proc/sys/vm/drop_caches
	e2e-check verify "$d" 0 1M 6 -d -b 64K || {
		echo "content changed after the write"
		bad=1
	}
	return $bad
}
if [ -n "$RO" ]; then
	echo "E2E-CHECK read-only-disk"
	if out=$(read_only_disk "$RO" 2>&1); then
		echo "E2E-RO PASS $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "E2E-RO FAIL $(printf '%s' "$out" | tail -n 6 | tr '\n' ' ')"
	fi
fi

if [ -n "$HOTPLUG" ]; then
	echo "E2E-WAIT-ATTACH $HOTPLUG"
	if wait_for "[ -b /dev/$HOTPLUG ]" 90; then
		result PASS hotplug-attach-seen
		check hotplug-disk-pattern sh -c \
			"e2e-check write /dev/$HOTPLUG 0 8M 5 -d -b 64K &&
			 e2e-check verify /dev/$HOTPLUG 0 8M 5 -d -b 1M"
	else
		result FAIL hotplug-attach-seen "/dev/$HOTPLUG never appeared"
	fi
	echo "E2E-WAIT-DETACH $HOTPLUG"
	if wait_for "[ ! -e /sys/block/$HOTPLUG ]" 90; then
		result PASS hotplug-detach-seen
	else
		result FAIL hotplug-detach-seen "/dev/$HOTPLUG is still there"
	fi
fi

# Online resize: dom0 grows the image by 16 MiB and runs blkbackctl resize
# when it sees E2E-WAIT-RESIZE; blkfront must pick the new size up from
# the backend's re-written state.  E2E-RESIZE-SEEN tells dom0 (which
# times it) that the size changed; E2E-RESIZE PASS|FAIL is the verdict on
# the new tail.
resize_tail() { # OLD-SECTORS
	at=$(($1 * 512))
	e2e-check write $D "$at" 16M 8 -d -b 1M &&
		e2e-check verify $D "$at" 16M 8 -d -b 64K &&
		echo "[$at, +16M) written and read back"
}
if [ -n "$RESIZE" ]; then
	old=$(cat /sys/block/$DEV/size)
	want=$((old + 16 * 2048))
	echo "E2E-WAIT-RESIZE $DEV $old"
	# Up to 60 s: dom0 notices the marker first; it enforces the 10 s.
	ticks=0
	while [ "$(cat /sys/block/$DEV/size)" -lt $want ] && [ $ticks -lt 300 ]; do
		sleep 0.2
		ticks=$((ticks + 1))
	done
	now=$(cat /sys/block/$DEV/size)
	echo "E2E-RESIZE-SEEN $now sectors after $((ticks / 5)).$((ticks % 5 * 2)) s"
	if [ "$now" -ne $want ]; then
		echo "E2E-RESIZE FAIL size $now sectors, expected $want (was $old)"
	elif out=$(resize_tail "$old" 2>&1); then
		echo "E2E-RESIZE PASS $old -> $now sectors; $out"
	else
		echo "E2E-RESIZE FAIL $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
fi

if [ -n "$BENCH" ]; then
	e2e-check bench $D 256M 64M 8 || result FAIL bench "bench failed"
	# What dom0 wrote at 320M and then dropped from its cache
	# (dom0-test.sh, fill_cold_region): reads neither path has cached.
	e2e-check coldbench $D 320M 64M 5 || result FAIL coldbench "coldbench failed"
fi

# Last: a pattern written and flushed (fsync on the disk sends
# FLUSH_DISKCACHE); dom0 finds it in the image after the guest is gone.
check flushed-pattern e2e-check write $D 240M 16M 99 -d -b 256K
echo "E2E-DONE failed=$failed"
idle_forever

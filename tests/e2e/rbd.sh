# shellcheck shell=bash
# Ceph RBD under real Xen (issue 12, part rbd; docs/rbd.md), sourced by
# dom0-test.sh, which runs guest_rbd while its blkbackd serves guests
# and rbd_kernel_comparison after the kernel path's part.
#
# tools/ceph/ceph-cluster (put on the work disk by run.sh: the package
# that installs it, blkbackd-sim, is not for Xen hosts) starts
# a one-monitor, one-OSD cluster on dom0's loopback, its objects in
# memory; how long that takes and how much memory its daemons hold are
# printed (E2E-BENCH rbd). dom0 imports an image holding its pattern A; a
# PV guest has it as its disk by the disk line of docs/rbd.md
#   vdev=xvda,access=rw,script=blkbackd,target=rbd:rbd/IMAGE:conf=PATH
# reads the pattern and writes and reads back a pass's pattern without
# end (guest role migwork); with part migrate the guest (PVH then) is
# moved by `xl migrate` to this host and the exclusive lock must pass from
# the sending device to the receiving one; after `xl shutdown` dom0 finds
# the last pass the guest reported, and its own pattern untouched, in
# `rbd export`. Then a guest on a fresh image runs `e2e-check bench`
# (E2E-BENCH rbd blkbackd).
#
# rbd_kernel_comparison (with part kernel, after it): the same benchmark
# on an image the kernel's rbd module maps (`rbd map`), a phy: disk of
# xen-blkback; E2E-BENCH lines with the ratio, information only.
RBD_DIR=/tmp/e2e-ceph
RBD_CLUSTER=$E/ceph-cluster
RBD_MIB=256
RBD_BENCH_SIZE=64M

rbd_cmd() { timeout 120 rbd -c "$RBD_DIR/ceph.conf" "$@"; }

# Memory of a daemon of the cluster: its peak resident set, in MiB.
rbd_daemon_mib() { # mon.a|osd.0
	local pid
	pid=$("$RBD_CLUSTER" pid "$RBD_DIR" "$1" 2>/dev/null) &&
		awk '/^VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$pid/status"
}

rbd_cluster_start() {
	local t0 out
	# No iproute2 in the minbase dom0: busybox's ip.
	busybox ip link set lo up
	echo "e2e: dom0 memory before the cluster: $(free -m | awk '/^Mem/ { print $3 " MiB used, " $7 " available" }')"
	t0=$(uptime_cs)
	if ! out=$("$RBD_CLUSTER" start "$RBD_DIR" $RBD_MIB 2>&1); then
		# ceph-cluster removed its logs; what the daemons printed is here.
		echo "$out" | tail -n 40 | sed 's/^/e2e: ceph-cluster: /'
		result FAIL rbd/cluster-started "after $(($(uptime_cs) - t0)) cs: $(echo "$out" | grep -m 1 -E 'Caught signal|error|rror:' | cut -c1-200) $(echo "$out" | tail -n 1)"
		return 1
	fi
	result PASS rbd/cluster-started "in $(($(uptime_cs) - t0)) cs"
	echo "E2E-BENCH rbd: cluster up in $(($(uptime_cs) - t0)) cs;" \
		"mon.a $(rbd_daemon_mib mon.a) MiB, osd.0 $(rbd_daemon_mib osd.0) MiB peak RSS;" \
		"dom0 $(free -m | awk '/^Mem/ { print $3 " MiB used, " $7 " available" }')"
}

# The clients holding the image's exclusive lock (client.ID, one a line).
rbd_lockers() { rbd_cmd lock ls rbd/e2e 2>/dev/null | awk '/^client\./ { print $1 }'; }

# xl migrate to this host (with part migrate), both ends opening the same
# image: the receiving device takes the image's exclusive lock once the
# sending one has released it, and then alone holds it (another librbd
# client: each device connects on its own).
rbd_migrate() { # GUEST OLD-DOMID TARGET
	local before after
	before=$(rbd_lockers)
	migrate_checks "$1" "$2" "$3"
	[ -z "$MIG_NEW" ] || [ "$MIG_NEW" = "$2" ] || backend_gone "$2"
	after=$(rbd_lockers)
	if [ "$(echo "$before" | grep -c .)" = 1 ] &&
		[ "$(echo "$after" | grep -c .)" = 1 ] && [ "$before" != "$after" ]; then
		result PASS "$1/exclusive-lock-moved" "held by $before before, $after after"
	else
		result FAIL "$1/exclusive-lock-moved" "before: '$(echo "$before" | tr '\n' ' ')', after: '$(echo "$after" | tr '\n' ' ')'"
	fi
}

guest_rbd() {
	rbd_cluster_start || {
		rbd_cluster_stop 2>/dev/null
		return
	}
	triple_fault_tries e2e-rbd rbd_guest_try
	rbd_bench_blkbackd
	# With part kernel the cluster serves rbd_kernel_comparison too.
	has_part kernel || rbd_cluster_stop
}

# The image holding dom0's pattern, the guest, its migration and the
# image's checks; a try of triple_fault_tries (a second one imports the
# image afresh).
rbd_guest_try() {
	local g=e2e-rbd img=$IMG/rbd.raw target domid v t0
	rbd_cmd rm rbd/e2e >/dev/null 2>&1
	t0=$(uptime_cs)
	if ! { truncate -s 64M "$img" && write_pattern_a "$img" &&
		rbd_cmd import "$img" rbd/e2e >/dev/null 2>&1; }; then
		result FAIL $g/dom0-rbd-import
		return
	fi
	echo "E2E-BENCH rbd: rbd import of 64 MiB took $(($(uptime_cs) - t0)) cs"
	rm -f "$img"
	target="rbd:rbd/e2e:conf=$RBD_DIR/ceph.conf"
	if migwork_guest $g "vdev=xvda,access=rw,script=blkbackd,target=$target" \
		"e2e_verify=32:8:21"; then
		domid=$(domid_of $g)
		t0=$(uptime_cs)
		if wait_console $g "E2E-MIGWORK pass 2 ok" 600; then
			echo "E2E-BENCH rbd: passes 0-2 (3 x 8 MiB written and read back) took $(($(uptime_cs) - t0)) cs after the disk was up"
			v=$(guest_line $g E2E-PREREAD)
			case "$v" in
			PASS*) result PASS $g/dom0-pattern-read "${v#PASS }" ;;
			*) result FAIL $g/dom0-pattern-read "'$v'" ;;
			esac
			! has_part migrate || rbd_migrate $g "$domid" "$target"
		else
			result FAIL $g/workload-running
		fi
		v=$(domid_of $g)
		shutdown_guest $g
		backend_gone "${v:-$domid}"
		if rbd_cmd export rbd/e2e "$img" >/dev/null 2>&1; then
			check_last_pass $g "$img"
			check $g/dom0-pattern-untouched "$CHECK" verify "$img" 32M 8M 21 -b 1M
		else
			result FAIL $g/dom0-rbd-export
		fi
		rm -f "$img"
	fi
}

rbd_cluster_stop() { "$RBD_CLUSTER" stop "$RBD_DIR"; }
rbd_cluster_up() { "$RBD_CLUSTER" pid "$RBD_DIR" osd.0 >/dev/null 2>&1; }

# A fresh image NAME for the benchmark, twice its span, as nbd.sh's
# exports.
rbd_bench_image() { # NAME
	local out
	out=$(rbd_cmd create --size $((2 * ${RBD_BENCH_SIZE%M}))M "rbd/$1" 2>&1) && return
	result FAIL "$1/rbd-create" "$(echo "$out" | tail -n 2 | tr '\n' ' ')"
	return 1
}

# The blkbackd arm (librbd), while guest_rbd's daemon serves.
rbd_bench_blkbackd() {
	local g=e2e-rbdb
	rbd_bench_image $g || return
	bench_guest $g "vdev=xvda,access=rw,script=blkbackd,target=rbd:rbd/$g:conf=$RBD_DIR/ceph.conf" \
		$RBD_BENCH_SIZE
	echo "E2E-BENCH rbd blkbackd (librbd): $(bench_of $g | sed 's/^BENCH //')"
}

# The kernel arm (xen-blkback loaded by guest_kernel_path): a fresh image
# mapped by the kernel's rbd module (`rbd map`; the monitor speaks only
# msgr2, hence ms_mode; no udev in this dom0, whose event rbd would wait
# for, hence noudev: devtmpfs makes the node), given to the guest as phy:.
rbd_kernel_comparison() {
	local g=e2e-rbdk dev t0
	rbd_cluster_up || return 0
	t0=$(uptime_s)
	if ! modprobe rbd; then
		result FAIL $g/modprobe-rbd
		rbd_cluster_stop
		return
	fi
	if rbd_bench_image $g; then
		if dev=$(rbd_cmd map -o ms_mode=crc,noudev rbd/$g 2>&1); then
			echo "e2e: rbd map rbd/$g: $dev"
			bench_guest $g "phy:$dev,xvda,w" $RBD_BENCH_SIZE
			rbd_cmd unmap -o noudev "$dev" || result FAIL $g/rbd-unmap
		else
			result FAIL $g/rbd-map "$(echo "$dev" | tail -n 2 | tr '\n' ' ')"
			dmesg | grep -iE 'rbd|libceph' | tail -n 8 | sed 's/^/e2e: dmesg: /'
		fi
	fi
	rbd_cluster_stop
	echo "E2E-BENCH rbd-kernel: the kernel arm took $(($(uptime_s) - t0)) s"
	bench_compare rbd e2e-rbdb $g "rbd map + xen-blkback"
}

#!/bin/bash
# The end-to-end test proper, run in the dom0 under real Xen (by
# dom0-init.sh).  Prints one line per check:
#   E2E: PASS|FAIL|SKIP NAME DETAIL
# and at the end "E2E-SUMMARY: N passed, N failed, N skipped".
#
# 1. blkbackd, installed with dpkg from its Debian package (built by
#    run.sh with dpkg-buildpackage), started with the ExecStart= of its
#    installed unit file.
# 2. Guests on blkbackd: "e2e-file" (a regular file, plus a disk
#    hot-plugged and unplugged, a read-only disk, and its own disk grown
#    while it runs), "e2e-blk" (a loop block device made here),
#    both shut down cleanly; "e2e-destroy", destroyed while writing;
#    "e2e-pvh", a PVH guest, and "e2e-hvm", an HVM guest booted through
#    its firmware from its emulated IDE disk (QEMU, in dom0), which hands
#    over to its PV disk, each with a pattern written by dom0 and one
#    written by the guest, and created once more if it triple-faults (or,
#    the HVM guest, if its firmware stops reading its disk).
# 3. dom0 checks: the images hold what the guests wrote and flushed, the
#    daemon logged no error and, once the guests are gone, holds no grant
#    mappings, event channels or image file descriptors.
# 4. blkbackd stopped, xen-blkback loaded, the same workload over the
#    default kernel path (loop + xen-blkback), and the throughput and IOPS
#    of both paths with their ratio.
# 5. The concurrent-guests comparison of both paths (concurrency.sh).
# 6. The package's cycle, install -> use -> remove -> purge, with phy:
#    guests on xen-blkback before and after (package.sh, part package).
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
E=/work/e2e
R=/work/results
IMG=/work/img
CFG=/work/cfg
CHECK=$E/e2e-check
BE=/local/domain/0/backend/vbd
XVDA=51712
XVDB=51728
XVDC=51744
VDISK_READONLY=4
DAEMON_LOG=$R/blkbackd.log
mkdir -p "$IMG" "$CFG" "$R"
npass=0
nfail=0
nskip=0

result() {
	local verdict=$1 name=$2
	shift 2
	echo "E2E: $verdict $name${*:+ $*}"
	case "$verdict" in
	PASS) npass=$((npass + 1)) ;;
	FAIL) nfail=$((nfail + 1)) ;;
	SKIP) nskip=$((nskip + 1)) ;;
	esac
}

check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		result PASS "$name"
	else
		result FAIL "$name" "$(echo "$out" | tail -n 4 | tr '\n' ' ')"
	fi
}

console() { echo "$R/console/guest-$1.log"; }

domid_of() { xl domid "$1" 2>/dev/null; }

# Seconds of dom0 uptime after which no more waiting is done, so that the
# run ends with its logs before the host's QEMU timeout.
DEADLINE=$(cat "$E/deadline" 2>/dev/null || echo 1000)
uptime_s() { cut -d. -f1 /proc/uptime; }
out_of_time() { [ "$(uptime_s)" -ge "$DEADLINE" ]; }

# What is going on when a wait fails: the guest's console, the daemon's
# log and threads, the backend's xenstore nodes.
diagnose() { # GUEST WHAT
	local t
	echo "e2e: ----- $1: $2; guest console (tail):"
	tr -d '\r' <"$(console "$1")" 2>/dev/null | tail -n 25 | sed 's/^/  | /'
	echo "e2e: ----- blkbackd log (tail):"
	tail -n 15 "$DAEMON_LOG" 2>/dev/null | sed 's/^/  | /'
	if [ -n "$DPID" ] && [ -d "/proc/$DPID" ]; then
		echo "e2e: ----- blkbackd threads (comm, state, wchan):"
		for t in /proc/"$DPID"/task/*; do
			echo "  | $(cat "$t/comm") $(awk '{print $3}' "$t/stat") $(cat "$t/wchan" 2>/dev/null)"
		done
	fi
	echo "e2e: ----- xenstore $BE:"
	xenstore-ls -f "$BE" 2>&1 | grep -vE '/(params|frontend|script|mode|type|removable|bootable|dev|device-type|specification|frontend-id|online|discard-enable)=' |
		head -n 40 | sed 's/^/  | /'
	sync
}

# Waits end by the clock (bash's SECONDS), not after a count of rounds:
# under TCG the test inside a round can take longer than its sleep, and
# 600 rounds of a "120 s" wait ran for five minutes.
#
# Inside a try (triple_fault_tries, pattern_guest: TRY_WATCH is set, and
# Xen's log was emptied when the try began) a wait ends too once Xen has
# logged a triple fault: that try is dropped whatever it waits for, and
# its guest is gone. Likewise in an HVM guest's try (FIRMWARE_WATCH) once
# its firmware stalled (firmware_stuck). Xen's log and the device model's
# count are read every few seconds, not every round.
TRY_WATCH=
try_next_look=0
try_doomed() {
	[ -n "$TRY_WATCH" ] && [ "$SECONDS" -ge "$try_next_look" ] || return 1
	try_next_look=$((SECONDS + 5))
	xl dmesg | grep -q 'Triple fault' || firmware_stuck ||
		{ [ -n "$FIRMWARE_WATCH" ] && initramfs_corrupt "$FIRMWARE_WATCH"; }
}

# The guest is gone: xl knows no such domain, on three looks 4 s apart.
# On 2 December `xl domid` failed just after the HVM guest's `xl create`
# while the guest ran on (its device model read its disk for 180 s more):
# one failure is not a death.
guest_gone() { # GUEST
	local look
	for look in 1 2 3; do
		domid_of "$1" >/dev/null && return 1
		[ $look = 3 ] || sleep 4
	done
}

# Wait until the guest's console shows PATTERN; fail early if it dies.
wait_console() {
	local guest=$1 pattern=$2 secs=$3 end=$((SECONDS + $3))
	while ! grep -q -- "$pattern" "$(console "$guest")" 2>/dev/null; do
		if guest_gone "$guest"; then
			diagnose "$guest" "died waiting for '$pattern' ($(xl domid "$guest" 2>&1 | tail -n 1))"
			return 1
		fi
		if [ "$SECONDS" -ge "$end" ] || out_of_time || try_doomed; then
			diagnose "$guest" "no '$pattern' after $((secs - end + SECONDS)) s"
			return 1
		fi
		sleep 1
	done
}

# Repeat a test (a command string) for up to SECS seconds.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until eval "$*"; do
		[ "$SECONDS" -lt "$end" ] && ! try_doomed || return 1
		sleep 0.2
	done
}

# The guest's RESULT lines become ours, prefixed with the guest's name.
collect_guest_results() {
	local guest=$1 log verdict name detail
	log=$(console "$guest")
	if ! grep -q "E2E-DONE" "$log" 2>/dev/null; then
		result FAIL "$guest/finished" "no E2E-DONE on the guest console"
	fi
	while read -r _ verdict name detail; do
		result "$verdict" "$guest/$name" "$detail"
	done < <(tr -d '\r' <"$log" | grep '^RESULT ')
}

# shellcheck disable=SC2016 # the quotes are literal in the here-document
guest_config() { # NAME DISK-SPEC EXTRA [VCPUS] [SECOND-DISK-SPEC]
	cat >"$CFG/$1.cfg" <<EOF
name = "$1"
type = "pv"
kernel = "$E/guest/vmlinux"
ramdisk = "$E/guest/initrd.cpio"
extra = "console=hvc0 loglevel=4 $3"
memory = 256
vcpus = ${4:-1}
on_poweroff = "destroy"
on_reboot = "destroy"
on_crash = "destroy"
disk = [ '$2'${5:+, '$5'} ]
EOF
}

start_guest() { # NAME
	local out
	if out=$(timeout 120 xl create "$CFG/$1.cfg" 2>&1); then
		result PASS "$1/xl-create"
		wait_console "$1" E2E-STARTED 120 ||
			result FAIL "$1/disk-connected" "no E2E-STARTED from the guest"
	else
		result FAIL "$1/xl-create" "$(echo "$out" | tail -n 4 | tr '\n' ' ')"
		return 1
	fi
}

# The backend's offered features and what the frontend took, for the
# checks that must start passing when blkbackd offers more.
record_negotiation() { # GUEST DEVID
	local be fe domid
	domid=$(domid_of "$1")
	be=$BE/$domid/$2
	fe=$(xenstore-read "$be/frontend" 2>/dev/null)
	{
		for k in feature-flush-cache feature-barrier feature-discard \
			feature-persistent feature-max-indirect-segments \
			max-ring-page-order multi-queue-max-queues; do
			echo "be $k=$(xenstore-read "$be/$k" 2>/dev/null || echo -)"
		done
		for k in protocol feature-persistent ring-page-order \
			multi-queue-num-queues; do
			echo "fe $k=$(xenstore-read "$fe/$k" 2>/dev/null || echo -)"
		done
	} >"$R/negotiation-$1"
	sed "s/^/  $1: /" "$R/negotiation-$1"
}

nego() { # GUEST be|fe KEY
	sed -n "s/^$2 $3=//p" "$R/negotiation-$1"
}

# Features blkbackd does not have yet: SKIP while the backend does not
# offer them, PASS/FAIL on what the frontend negotiated once it does.
feature_checks() { # GUEST
	local g=$1 v
	v=$(nego "$g" be feature-flush-cache)
	if [ "$v" = 1 ]; then
		result PASS "$g/feature-flush-cache"
	else
		result FAIL "$g/feature-flush-cache" "backend wrote '$v'"
	fi
	v=$(nego "$g" be feature-persistent)
	if [ "$v" = 1 ]; then
		if [ "$(nego "$g" fe feature-persistent)" = 1 ]; then
			result PASS "$g/persistent-grants" "negotiated"
		else
			result FAIL "$g/persistent-grants" "offered, frontend said no"
		fi
	else
		result SKIP "$g/persistent-grants" "not offered by the backend yet"
	fi
	v=$(nego "$g" be max-ring-page-order)
	case "$v" in
	- | 0) result SKIP "$g/multi-page-ring" "not offered by the backend yet" ;;
	*)
		if [ "$(nego "$g" fe ring-page-order)" != - ]; then
			result PASS "$g/multi-page-ring" \
				"order $(nego "$g" fe ring-page-order) of max $v"
		else
			result FAIL "$g/multi-page-ring" "offered order $v, not used"
		fi
		;;
	esac
	v=$(nego "$g" be multi-queue-max-queues)
	case "$v" in
	- | 0 | 1) result SKIP "$g/multi-queue" "not offered by the backend yet" ;;
	*)
		if [ "$(nego "$g" fe multi-queue-num-queues)" != - ]; then
			result PASS "$g/multi-queue" \
				"$(nego "$g" fe multi-queue-num-queues) queues"
		else
			result FAIL "$g/multi-queue" "offered $v queues, not used"
		fi
		;;
	esac
	# The guest SKIPs indirect/fstrim when it did not get them; that is
	# only right while the backend does not offer them.
	v=$(nego "$g" be feature-max-indirect-segments)
	if [ "$v" != - ] && [ "$v" != 0 ] &&
		grep -q '^RESULT SKIP indirect' "$(console "$g")"; then
		result FAIL "$g/indirect-offered-but-unused" "backend offers $v"
	fi
	v=$(nego "$g" be feature-discard)
	if [ "$v" = 1 ] && grep -q '^RESULT SKIP fstrim' "$(console "$g")"; then
		result FAIL "$g/discard-offered-but-unused"
	fi
}

# Wait for the guest's workload, then shut it down cleanly; one that did
# not finish is destroyed instead (a hung guest would not shut down).
finish_guest() { # NAME
	if wait_console "$1" E2E-DONE 480; then
		shutdown_guest "$1"
	else
		timeout 60 xl destroy "$1" >/dev/null 2>&1
	fi
	sync
}

shutdown_guest() { # NAME
	local out
	if out=$(timeout 120 xl shutdown -w "$1" 2>&1); then
		result PASS "$1/clean-shutdown"
	else
		result FAIL "$1/clean-shutdown" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
		timeout 60 xl destroy "$1" >/dev/null 2>&1
	fi
}

# After the guest is gone: its backend directory removed by libxl.
backend_gone() { # DOMID
	local domid=$1
	if wait_until 30 "! xenstore-exists $BE/$domid"; then
		result PASS "dom$domid/backend-nodes-removed"
	else
		result FAIL "dom$domid/backend-nodes-removed" \
			"$(xenstore-ls -f "$BE/$domid" 2>&1 | head -n 20 | tr '\n' ' ')"
	fi
}

# dom0's view of the data: patterns, filesystem, files, trimmed extents.
verify_image() { # GUEST PATH [BACKING-FILE]
	local g=$1 img=$2 backing=${3:-$2} dump
	check "$g/dom0-odirect-pattern" "$CHECK" verify "$img" 160M 16M 1 -d -b 1M
	check "$g/dom0-small-pattern" "$CHECK" verify "$img" 176M 1M 4 -d -b 1M
	check "$g/dom0-buffered-pattern" "$CHECK" verify "$img" 180M 16M 2 -d -b 1M
	check "$g/dom0-large-pattern" "$CHECK" verify "$img" 200M 32M 3 -d -b 1M
	check "$g/dom0-flushed-pattern" "$CHECK" verify "$img" 240M 16M 99 -d -b 1M
	check "$g/dom0-fsck-clean" e2fsck -fn "$img"
	dump=$(mktemp -d)
	check "$g/dom0-file-checksums" sh -c "debugfs -R 'rdump / $dump' '$img' &&
		cd '$dump' && sha256sum -c MANIFEST"
	rm -rf "$dump"
	trimmed_holes "$g" "$backing"
}

trimmed_holes() { # GUEST IMAGE-FILE
	local g=$1 img=$2 off len bad=0 n=0 out first=
	while read -r _ off len; do
		n=$((n + 1))
		if ! out=$("$CHECK" holes "$img" "$off" "$len" 2>&1); then
			bad=$((bad + 1))
			[ -n "$first" ] || first=$out
		fi
	done < <(tr -d '\r' <"$(console "$g")" | grep '^E2E-TRIMMED ')
	if [ $n -eq 0 ]; then
		result SKIP "$g/dom0-trimmed-extents-are-holes" "nothing was trimmed"
	elif [ $bad -eq 0 ]; then
		result PASS "$g/dom0-trimmed-extents-are-holes" "$n extents"
	else
		result FAIL "$g/dom0-trimmed-extents-are-holes" \
			"$bad of $n extents still hold data (first: $first)"
	fi
}

# ----- blkbackd, as its unit file starts it

# Start the daemon's command line with what systemd would set up from the
# unit's [Service] section (RuntimeDirectory= included: the ring journals
# and the control socket live there); sets DPID.
RUNTIME_DIR=/run/blkbackd
launch_daemon() { # COMMAND LOG
	(
		ulimit -l unlimited
		ulimit -n 65536
		umask 0077
		mkdir -p -m 0700 "$RUNTIME_DIR"
		export RUNTIME_DIRECTORY=$RUNTIME_DIR
		exec setsid sh -c "exec $1" </dev/null >>"$2" 2>&1
	) &
	DPID=$!
}

# Install the daemon's Debian package (built by run.sh with
# dpkg-buildpackage) into the system at ROOT with dpkg, as its
# administrator does there: the maintainer scripts run (they enable and
# start nothing) and the dependencies must be installed already (the
# cached root has them). The cached root holds the blacklist of
# xen-blkback that build-dom0.sh wrote; it goes first, so that the
# administrator's explicit step, `blkbackd-takeover on` (takeover_on),
# writes it again. Prints the version.
install_package() { # NAME ROOT
	local deb out rc=0
	deb=$(ls "$E"/debs/blkbackd_*.deb 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		result FAIL "$1" "no blkbackd_*.deb on the work disk"
		return 1
	fi
	rm -f "$2/etc/modprobe.d/blkbackd.conf"
	if [ "$2" = / ]; then
		out=$(dpkg -i "$deb" </dev/null 2>&1) || rc=$?
	else
		cp "$deb" "$2/tmp/blkbackd.deb" && mount --bind /proc "$2/proc" &&
			mount --bind /dev "$2/dev" || return 1
		out=$(chroot "$2" dpkg -i /tmp/blkbackd.deb </dev/null 2>&1) || rc=$?
		umount "$2/dev" "$2/proc"
		rm -f "$2/tmp/blkbackd.deb"
	fi
	echo "$out" | sed "s|^|e2e: $1: dpkg -i: |"
	if [ $rc -eq 0 ] && [ "$(chroot "$2" dpkg-query -W -f '${Status}' blkbackd)" = "install ok installed" ]; then
		result PASS "$1" "$(chroot "$2" dpkg-query -W -f '${Package} ${Version}' blkbackd) ($(basename "$deb"), sha256 $(sha256sum "$deb" | cut -c1-16)) with dpkg -i"
	else
		result FAIL "$1" "dpkg -i exited $rc: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
		return 1
	fi
}

# The administrator's step that hands backend/vbd to blkbackd, in the
# system at ROOT (docs/driver-domain.md, blkbackd-takeover(8)).
takeover_on() { # NAME ROOT
	local out rc=0
	if [ "$2" = / ]; then
		out=$(blkbackd-takeover on 2>&1) || rc=$?
	else
		mount --bind /proc "$2/proc" || return 1
		out=$(chroot "$2" blkbackd-takeover on 2>&1) || rc=$?
		umount "$2/proc"
	fi
	echo "$out" | sed "s|^|e2e: $1: |"
	if [ $rc -eq 0 ] &&
		grep -qx 'install xen-blkback /bin/false' "$2/etc/modprobe.d/blkbackd.conf"; then
		result PASS "$1"
	else
		result FAIL "$1" "exit $rc: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
		return 1
	fi
}

DPID=
DAEMON_CMD=
# Install blkbackd's package (once), hand it backend/vbd unless
# KEEP_XEN_BLKBACK is set, and read the command line of its
# installed unit file into DAEMON_CMD, with the options of
# BLKBACKD_E2E_DAEMON_ARGS after it.
install_blkbackd() {
	local unit args
	[ -z "$DAEMON_CMD" ] || return 0
	install_package package-installed / || return 1
	# The Debian 13 dom0 keeps xen-blkback (dom0-test-xen420.sh).
	[ -n "${KEEP_XEN_BLKBACK:-}" ] || takeover_on takeover-on / || return 1
	unit=$(ls /lib/systemd/system/blkbackd.service \
		/usr/lib/systemd/system/blkbackd.service 2>/dev/null | head -n 1)
	if [ -z "$unit" ] || [ ! -x /etc/xen/scripts/blkbackd ]; then
		result FAIL installed-files "unit '$unit', hotplug script"
		return 1
	fi
	DAEMON_CMD=$(sed -n 's/^ExecStart=[-@+!:]*//p' "$unit" | head -n 1)
	# BLKBACKD_E2E_DAEMON_ARGS (run.sh): options under measurement.
	args=$(cat "$E/daemon-args" 2>/dev/null)
	DAEMON_CMD="$DAEMON_CMD${args:+ $args}"
	echo "e2e: $unit: ExecStart=$DAEMON_CMD (no systemd in this dom0:" \
		"started by hand with the unit's LimitMEMLOCK/LimitNOFILE/UMask)"
}

start_blkbackd() {
	install_blkbackd || return 1
	launch_daemon "$DAEMON_CMD" "$DAEMON_LOG"
	if wait_until 30 "grep -q 'serving ' '$DAEMON_LOG'" &&
		kill -0 "$DPID" 2>/dev/null; then
		result PASS blkbackd-started "pid $DPID: $DAEMON_CMD"
	else
		result FAIL blkbackd-started "$(tail -n 5 "$DAEMON_LOG" | tr '\n' ' ')"
		return 1
	fi
}

daemon_alive() {
	if kill -0 "$DPID" 2>/dev/null; then
		result PASS "blkbackd-alive-$1"
	else
		result FAIL "blkbackd-alive-$1" "$(tail -n 5 "$DAEMON_LOG" | tr '\n' ' ')"
	fi
}

# Event channel ports bound through /dev/xen/evtchn show in /proc/interrupts
# as "evtchn:<comm of the binding thread>".
daemon_evtchn_irqs() {
	local comms
	comms=$(cat /proc/"$DPID"/task/*/comm 2>/dev/null | sort -u |
		sed 's/[.[\*^$]/\\&/g' | paste -sd '|')
	grep -cE "evtchn:($comms)\$" /proc/interrupts
}
daemon_gntdev_maps() { grep -c '/dev/xen/gntdev' /proc/"$DPID"/maps; }
daemon_fd_targets() {
	local f
	for f in /proc/"$DPID"/fd/*; do
		readlink "$f"
	done 2>/dev/null
}
daemon_evtchn_fds() { daemon_fd_targets | grep -c '^/dev/xen/evtchn$'; }
daemon_image_fds() { daemon_fd_targets | grep -cE "^($IMG/|/dev/loop)"; }
daemon_resources() {
	echo "gntdev-maps=$(daemon_gntdev_maps) evtchn-irqs=$(daemon_evtchn_irqs)" \
		"evtchn-fds=$(daemon_evtchn_fds) image-fds=$(daemon_image_fds)"
}

# While a guest is connected the same probes must see its resources, or
# the "nothing left" checks afterwards would prove nothing.
probes_see_guest() { # GUEST
	local maps irqs fds
	maps=$(daemon_gntdev_maps)
	irqs=$(daemon_evtchn_irqs)
	fds=$(daemon_image_fds)
	if [ "$maps" -ge 1 ] && [ "$irqs" -ge 1 ] && [ "$fds" -ge 1 ]; then
		result PASS "$1/daemon-holds-ring" "$(daemon_resources)"
	else
		result FAIL "$1/daemon-holds-ring" "$(daemon_resources)"
	fi
}

# Hundredths of a second of dom0 uptime, for timing what the guest sees.
uptime_cs() {
	local u
	u=$(cut -d' ' -f1 /proc/uptime)
	echo $((10#${u/./}))
}

# The guest's verdict line "MARKER PASS|FAIL DETAIL", without the marker.
guest_line() { # GUEST MARKER
	tr -d '\r' <"$(console "$1")" 2>/dev/null | sed -n "s/^$2 //p" | tail -n 1
}

# ----- read-only disk (e2e-file's xvdc, access=ro)
#
# dom0 fills the image with pattern seed 6 and checksums it; the backend
# must advertise VDISK_READONLY in "info"; the guest sees /sys/block/xvdc/ro
# = 1, reads the pattern and cannot write; afterwards the checksum in dom0
# is unchanged.  One verdict: e2e-file/read-only-disk.
RO_SUM=
RO_INFO=
prepare_ro_image() { # IMAGE
	truncate -s 16M "$1" && "$CHECK" write "$1" 0 16M 6 -b 1M &&
		RO_SUM=$(sha256sum <"$1")
}

record_ro_info() { # DOMID
	local be=$BE/$1/$XVDC
	wait_until 30 "[ \"\$(xenstore-read $be/state 2>/dev/null)\" = 4 ]"
	RO_INFO=$(xenstore-read "$be/info" 2>/dev/null || echo -)
}

read_only_verdict() { # GUEST IMAGE
	local g=$1 bad="" notes guest
	if [ -z "$RO_SUM" ]; then
		result FAIL "$g/read-only-disk" "dom0 could not prepare the image"
		return
	fi
	case "$RO_INFO" in
	'' | *[!0-9]*) bad="$bad backend info='$RO_INFO';" ;;
	*) [ $((RO_INFO & VDISK_READONLY)) -ne 0 ] ||
		bad="$bad backend info=$RO_INFO lacks VDISK_READONLY;" ;;
	esac
	guest=$(guest_line "$g" E2E-RO)
	case "$guest" in
	PASS*) ;;
	"") bad="$bad no E2E-RO line from the guest;" ;;
	*) bad="$bad guest: ${guest#FAIL };" ;;
	esac
	if [ "$(sha256sum <"$2")" != "$RO_SUM" ]; then
		bad="$bad the image in dom0 changed ($(
			"$CHECK" verify "$2" 0 16M 6 2>&1 | head -n 1));"
	fi
	notes="info=$RO_INFO; guest: ${guest#PASS }"
	if [ -z "$bad" ]; then
		result PASS "$g/read-only-disk" "$notes; image checksum unchanged"
	else
		result FAIL "$g/read-only-disk" "${bad# }"
	fi
}

# ----- online resize (e2e-file's xvda)
#
# When the guest asks (E2E-WAIT-RESIZE), grow the image by 16 MiB and run
# `blkbackctl resize`: within 10 s "sectors" must hold the new size and the
# guest must see it (E2E-RESIZE-SEEN); the guest then writes pattern seed 8
# into the new tail, which dom0 finds in the image once the guest is gone.
# One verdict: e2e-file/online-resize.
RESIZE_BAD=
RESIZE_NOTES=
RESIZE_OLD=
grow_online() { # GUEST DOMID DEVID IMAGE
	local g=$1 be=$BE/$2/$3 img=$4 want t0 t_xs='' t_guest=''
	if ! wait_console "$g" E2E-WAIT-RESIZE 480; then
		RESIZE_BAD="the guest never asked for the resize;"
		return
	fi
	RESIZE_OLD=$(xenstore-read "$be/sectors" 2>/dev/null)
	case "$RESIZE_OLD" in
	'' | *[!0-9]*)
		RESIZE_BAD="backend sectors='$RESIZE_OLD' before the resize;"
		RESIZE_OLD=
		return
		;;
	esac
	want=$((RESIZE_OLD + 16 * 2048))
	truncate -s +16M "$img"
	t0=$(uptime_cs)
	blkbackctl --socket "$RUNTIME_DIR/control" resize "$2/$3" ||
		RESIZE_BAD="$RESIZE_BAD blkbackctl resize $2/$3 failed;"
	if wait_until 10 "[ \"\$(xenstore-read $be/sectors)\" = $want ]"; then
		t_xs=$(($(uptime_cs) - t0))
	else
		RESIZE_BAD="$RESIZE_BAD backend sectors=$(xenstore-read "$be/sectors"), expected $want;"
	fi
	if wait_until 10 "grep -q 'E2E-RESIZE-SEEN $want ' '$(console "$g")'"; then
		t_guest=$(($(uptime_cs) - t0))
	else
		RESIZE_BAD="$RESIZE_BAD the guest did not see $want sectors within 10 s of blkbackctl resize;"
		diagnose "$g" "no new size in the guest"
	fi
	RESIZE_NOTES="$RESIZE_OLD -> $want sectors; in xenstore after ${t_xs:--} cs, in the guest after ${t_guest:--} cs"
}

online_resize_verdict() { # GUEST IMAGE
	local g=$1 guest out
	if [ -n "$RESIZE_OLD" ]; then
		guest=$(guest_line "$g" E2E-RESIZE)
		case "$guest" in
		PASS*) ;;
		"") RESIZE_BAD="$RESIZE_BAD no E2E-RESIZE line from the guest;" ;;
		*) RESIZE_BAD="$RESIZE_BAD guest: ${guest#FAIL };" ;;
		esac
		if ! out=$("$CHECK" verify "$2" $((RESIZE_OLD * 512)) 16M 8 -d -b 1M 2>&1); then
			RESIZE_BAD="$RESIZE_BAD dom0: tail pattern: $(echo "$out" | head -n 1);"
		fi
	fi
	if [ -z "$RESIZE_BAD" ]; then
		result PASS "$g/online-resize" "$RESIZE_NOTES; tail pattern in the image"
	else
		result FAIL "$g/online-resize" "${RESIZE_BAD# } $RESIZE_NOTES"
	fi
}

# ----- a disk blkbackd cannot serve
#
# xl create of a guest whose image is missing must fail with blkbackd's
# reason, which reaches xl through the hotplug script's hotplug-error at
# once, rather than with libxl's bare "unable to add device with path"
# after its 10 s wait for InitWait. The time xl took (domain build and
# teardown included, under TCG) is reported.
MISSING=$IMG/missing.img
guest_missing_image() {
	local g=e2e-missing out t0 t
	rm -f "$MISSING"
	guest_config $g "vdev=xvda,access=rw,script=blkbackd,target=$MISSING" \
		""
	t0=$(uptime_cs)
	if out=$(timeout 120 xl create "$CFG/$g.cfg" 2>&1); then
		result FAIL $g/xl-create-refused "xl create succeeded"
		xl destroy $g 2>/dev/null
		return
	fi
	t=$(($(uptime_cs) - t0))
	echo "$out" | sed 's/^/e2e: xl create: /'
	if echo "$out" | grep -q "unable to add device with path"; then
		result FAIL $g/xl-create-shows-reason \
			"libxl timed out waiting for InitWait (after $t cs)"
	elif echo "$out" | grep -q "script: blkbackd: xvda of domain [0-9]* (vbd [0-9]*/$XVDA): cannot open image $MISSING: No such file or directory; check the target="; then
		result PASS $g/xl-create-shows-reason \
			"through the hotplug script, no InitWait timeout; xl failed after $t cs"
	else
		result FAIL $g/xl-create-shows-reason \
			"after $t cs: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# ----- the guests on blkbackd

guest_file() {
	local g=e2e-file domid out
	truncate -s 384M "$IMG/a.img" "$IMG/hot.img"
	fill_cold_region "$IMG/a.img"
	prepare_ro_image "$IMG/ro.img"
	guest_config $g "vdev=xvda,access=rw,script=blkbackd,target=$IMG/a.img" \
		"e2e_role=full e2e_hotplug=xvdb e2e_bench=1 e2e_ro=xvdc e2e_resize=1" \
		2 "vdev=xvdc,access=ro,script=blkbackd,target=$IMG/ro.img"
	start_guest $g || return
	domid=$(domid_of $g)
	record_negotiation $g $XVDA
	probes_see_guest $g
	record_ro_info "$domid"
	if wait_console $g E2E-WAIT-ATTACH 480; then
		if out=$(timeout 120 xl block-attach $g \
			"vdev=xvdb,access=rw,script=blkbackd,target=$IMG/hot.img" 2>&1); then
			result PASS $g/xl-block-attach
		else
			result FAIL $g/xl-block-attach "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
		fi
		if wait_console $g E2E-WAIT-DETACH 300; then
			if out=$(timeout 120 xl block-detach $g xvdb 2>&1); then
				result PASS $g/xl-block-detach
			else
				result FAIL $g/xl-block-detach "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
			fi
			if wait_until 30 "! xenstore-exists $BE/$domid/$XVDB"; then
				result PASS $g/hotplug-backend-removed
			else
				result FAIL $g/hotplug-backend-removed
			fi
			check $g/dom0-hotplug-pattern "$CHECK" verify "$IMG/hot.img" 0 8M 5 -d
		fi
	fi
	grow_online $g "$domid" $XVDA "$IMG/a.img"
	finish_guest $g
	collect_guest_results $g
	feature_checks $g
	backend_gone "$domid"
	verify_image $g "$IMG/a.img"
	read_only_verdict $g "$IMG/ro.img"
	online_resize_verdict $g "$IMG/a.img"
}

LOOPDEV=
guest_blockdev() {
	local g=e2e-blk domid
	truncate -s 384M "$IMG/b.img"
	LOOPDEV=$(losetup -f --show "$IMG/b.img") || {
		result FAIL $g/losetup
		return
	}
	guest_config $g "vdev=xvda,access=rw,script=blkbackd,target=$LOOPDEV" \
		"e2e_role=full"
	start_guest $g || return
	domid=$(domid_of $g)
	record_negotiation $g $XVDA
	finish_guest $g
	collect_guest_results $g
	backend_gone "$domid"
	verify_image $g "$LOOPDEV" "$IMG/b.img"
}

guest_destroyed_while_writing() {
	local g=e2e-destroy domid
	truncate -s 384M "$IMG/c.img"
	guest_config $g "vdev=xvda,access=rw,script=blkbackd,target=$IMG/c.img" \
		"e2e_role=writer"
	start_guest $g || return
	domid=$(domid_of $g)
	if wait_console $g "writeloop pass 0 done" 300; then
		result PASS $g/writing
	else
		result FAIL $g/writing "$(tail -n 5 "$(console $g)" | tr '\n' ' ')"
	fi
	check $g/xl-destroy timeout 120 xl destroy $g
	backend_gone "$domid"
}

leak_checks() {
	local left
	if wait_until 30 "[ -z \"\$(xenstore-list $BE 2>/dev/null)\" ]"; then
		result PASS no-backend-devices-left
	else
		result FAIL no-backend-devices-left "$(xenstore-list $BE | tr '\n' ' ')"
	fi
	# The daemon lets go as the backend reaches Closed; give it a moment.
	wait_until 20 "[ \$(daemon_gntdev_maps) -eq 0 ] &&
		[ \$(daemon_evtchn_irqs) -eq 0 ] && [ \$(daemon_image_fds) -eq 0 ]"
	left=$(daemon_resources)
	echo "e2e: daemon resources after the guests: $left"
	[ "$(daemon_gntdev_maps)" -eq 0 ] &&
		result PASS daemon-no-grant-mappings ||
		result FAIL daemon-no-grant-mappings "$left"
	[ "$(daemon_evtchn_irqs)" -eq 0 ] &&
		result PASS daemon-no-event-channels ||
		result FAIL daemon-no-event-channels "$left"
	[ "$(daemon_evtchn_fds)" -eq "$BASE_EVTCHN_FDS" ] &&
		result PASS daemon-evtchn-fds-as-at-start ||
		result FAIL daemon-evtchn-fds-as-at-start \
			"$left; at start $BASE_EVTCHN_FDS"
	[ "$(daemon_image_fds)" -eq 0 ] &&
		result PASS daemon-no-image-fds ||
		result FAIL daemon-no-image-fds "$left: $(daemon_fd_targets | grep -E "^($IMG/|/dev/loop)" | tr '\n' ' ')"
}

stop_blkbackd() {
	local status errors
	kill -TERM "$DPID"
	if wait_until 60 "! kill -0 $DPID 2>/dev/null"; then
		wait "$DPID"
		status=$?
		[ $status -eq 0 ] && result PASS blkbackd-stops-on-sigterm ||
			result FAIL blkbackd-stops-on-sigterm "exit status $status"
	else
		result FAIL blkbackd-stops-on-sigterm "still running after 60 s"
		kill -KILL "$DPID"
	fi
	# Errors but the refusal guest_missing_image (or, in the Debian 13
	# dom0, the VHD disk) asked for, and part snapshot's of a moved
	# disk's old image (SNAP_REFUSAL).
	errors=$(grep -E '^(blkbackd: err:|<[0-3]>)' "$DAEMON_LOG" |
		grep -vF "${EXPECTED_REFUSAL:-cannot open image $MISSING: }" |
		grep -vF "${SNAP_REFUSAL:-${EXPECTED_REFUSAL:-cannot open image $MISSING: }}")
	if [ -n "$errors" ]; then
		result FAIL blkbackd-logged-no-errors \
			"$(echo "$errors" | head -n 5 | tr '\n' ' ')"
	else
		result PASS blkbackd-logged-no-errors
	fi
}

# ----- where a depth-1 request's time goes (issue 8): stage timing
#
# A separate short pass after the daemon above has stopped, so that the
# timing cannot touch the comparison with the kernel path: a second daemon,
# the unit's command line plus --stage-timing, serves "e2e-stages", which
# runs 4 KiB random reads, then writes, at depth 1 and times each request
# (e2e-check qd1). dom0 reads `blkbackctl --json stats` before and after
# each run; the difference of the cumulative stage histograms is the run
# alone (stage-split.py checks that its request count is the guest's).
# The same runs from dom0 on the image file, with nothing else running,
# are the host's own floor. One E2E-STAGES line per run, and an
# E2E-BENCH handoff line: a wake-up's round trip between two threads on
# one of dom0's vCPUs and on both.
STAGES_LOG=$R/blkbackd-stages.log
QD1_SECS=8

stats_snapshot() { # FILE
	blkbackctl --socket "$RUNTIME_DIR/control" --json stats >"$1"
}

stop_stage_daemon() {
	local errors
	kill -TERM "$DPID"
	wait_until 60 "! kill -0 $DPID 2>/dev/null" || kill -KILL "$DPID"
	errors=$(grep -E '^(blkbackd: err:|<[0-3]>)' "$STAGES_LOG")
	if [ -n "$errors" ]; then
		result FAIL stages/blkbackd-logged-no-errors \
			"$(echo "$errors" | head -n 5 | tr '\n' ' ')"
	else
		result PASS stages/blkbackd-logged-no-errors
	fi
}

qd1_line() { # GUEST OP
	tr -d '\r' <"$(console "$1")" | grep "^E2E-QD1 op=$2 " | tail -n 1
}

# The daemon's system calls during one run, counted by perf in the
# kernel (raw_syscalls:sys_enter on all its threads, so the daemon runs at
# its usual speed): attached disabled beforehand, enabled and disabled
# through its control FIFOs at the run's edges. Each returns non-zero
# when perf is not counting.
syscalls_attach() { # PID NAME
	local d="$R/syscalls-$2"
	command -v perf >/dev/null || return 1
	rm -f "$d".*
	mkfifo "$d.ctl" "$d.ack" || return 1
	# Per thread, and which calls: what a figure is made of.
	perf stat -x, --per-thread -e raw_syscalls:sys_enter \
		-e syscalls:sys_enter_io_uring_enter -e syscalls:sys_enter_ioctl \
		-e syscalls:sys_enter_read -e syscalls:sys_enter_write \
		-e syscalls:sys_enter_clock_gettime \
		-D -1 --control "fifo:$d.ctl,$d.ack" -o "$d.txt" -p "$1" \
		</dev/null >"$d.err" 2>&1 &
	echo $! >"$d.pid"
	# Answered once it has attached: ready.
	syscalls_command "$2" disable
}
syscalls_command() { # NAME enable|disable
	local d="$R/syscalls-$1"
	[ -p "$d.ctl" ] || return 1
	timeout 60 sh -c "echo $2 >'$d.ctl' && head -c 4 '$d.ack' >/dev/null"
}
# Stop counting; then syscalls_sum NAME EVENT gives a count.
syscalls_finish() { # NAME
	local d="$R/syscalls-$1"
	[ -f "$d.pid" ] || return 1
	kill -INT "$(cat "$d.pid")" 2>/dev/null
	wait_until 30 "! kill -0 $(cat "$d.pid") 2>/dev/null"
}
# EVENT's count over all threads, or nothing when perf counted none.
syscalls_sum() { # NAME EVENT
	awk -F, -v ev="$2" '$4 == ev && $2 ~ /^[0-9]+$/ { n += $2; seen = 1 }
		END { if (seen) print n }' "$R/syscalls-$1.txt" 2>/dev/null
}
# Which threads made which calls: "THREAD CALL=COUNT ...", one line.
syscalls_split() { # NAME
	awk -F, '$2 ~ /^[0-9]+$/ && $2 > 0 {
			ev = $4; sub(/^(raw_)?syscalls:sys_enter_?/, "", ev)
			if (ev == "") ev = "all"
			t = $1; sub(/-[0-9]+$/, "", t)
			s = s " " t ":" ev "=" $2
		}
		END { print substr(s, 2) }' "$R/syscalls-$1.txt" 2>/dev/null
}

# E2E-BENCH: how many of the persistent grants the daemon holds mapped
# after the run OP are registered buffers of its io_uring (stats
# snapshot SNAP): none means this dom0's kernel would not pin them.
report_registered() { # SNAP OP
	echo "E2E-BENCH registered buffers after 4K depth 1 $2:" \
		"$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"]
print("%d of %d persistent-grant mappings registered with io_uring" % (
    sum(x.get("registered_grants", 0) for x in d),
    sum(x.get("mapped_grants", 0) for x in d)))' "$1" 2>&1)"
}

# Both runs of the guest, with a snapshot of the counters around each,
# and the daemon's system calls counted between them.
stage_runs() { # GUEST
	local op
	for op in read write; do
		wait_console "$1" "E2E-QD1-IDLE $op" 120 &&
			stats_snapshot "$R/stages-$op-before.json" &&
			{ syscalls_command "$op" enable || true; } &&
			wait_console "$1" "E2E-QD1 op=$op" $((QD1_SECS + 120)) &&
			{ syscalls_command "$op" disable || true; } &&
			stats_snapshot "$R/stages-$op-after.json" || {
			result FAIL "$1/qd1-$op" "$(guest_line "$1" E2E-e2e-check:)"
			return 1
		}
		report_registered "$R/stages-$op-after.json" "$op"
	done
}

# E2E-BENCH: the daemon's system calls per request of the run OP, and
# those left without the clock reads of --stage-timing (in a PV dom0 the
# clock has no vDSO reader: each read is a system call).
report_syscalls() { # GUEST OP
	local calls clock ios
	syscalls_finish "$2"
	calls=$(syscalls_sum "$2" raw_syscalls:sys_enter)
	clock=$(syscalls_sum "$2" syscalls:sys_enter_clock_gettime)
	ios=$(qd1_line "$1" "$2" | sed -n 's/.* ios=\([0-9]*\).*/\1/p')
	if [ -n "$calls" ] && [ -n "$ios" ] && [ "$ios" -gt 0 ]; then
		echo "E2E-BENCH daemon system calls per request, 4K depth 1 $2:" \
			"$(awk -v c="$calls" -v k="${clock:-0}" -v n="$ios" 'BEGIN {
				printf "%.2f, %.2f without the clock reads of --stage-timing",
					c / n, (c - k) / n }')" \
			"($calls calls, ${clock:-0} of them clock_gettime, $ios requests;" \
			"by thread and call: $(syscalls_split "$2"))"
	else
		echo "E2E-BENCH daemon system calls per request, 4K depth 1 $2:" \
			"not measured ($(tail -n 1 "$R/syscalls-$2.err" 2>/dev/null))"
	fi
}

stage_timing_pass() {
	local g=e2e-stages img=$IMG/stages.img domid op raw out
	truncate -s 64M "$img"
	# Real data under the runs, not holes the host answers without I/O.
	"$CHECK" write "$img" 0 32M 30 -d -b 1M || {
		result FAIL $g/dom0-prepare-image
		return
	}
	launch_daemon "$DAEMON_CMD --stage-timing" "$STAGES_LOG"
	if ! wait_until 30 "grep -q 'serving ' '$STAGES_LOG'"; then
		result FAIL stages/blkbackd-started "$(tail -n 5 "$STAGES_LOG" | tr '\n' ' ')"
		return
	fi
	for op in read write; do
		syscalls_attach "$DPID" $op || true
	done
	guest_config $g "vdev=xvda,access=rw,script=blkbackd,target=$img" \
		"e2e_role=qd1 e2e_qd1_secs=$QD1_SECS"
	if start_guest $g; then
		domid=$(domid_of $g)
		stage_runs $g && result PASS $g/qd1-runs
		shutdown_guest $g
		backend_gone "$domid"
	fi
	for op in read write; do
		report_syscalls $g $op
	done
	stop_stage_daemon
	[ -f "$R/stages-write-after.json" ] || return
	for op in read write; do
		raw=$("$CHECK" qd1 "$img" 0 32M $QD1_SECS $op)
		if out=$(python3 "$E/stage-split.py" "$R/stages-$op-before.json" \
			"$R/stages-$op-after.json" "$domid" $XVDA $op \
			"$(qd1_line $g $op)" "$raw" 2>&1); then
			echo "$out"
			result PASS "stages/$op-split"
		else
			result FAIL "stages/$op-split" "$out"
		fi
	done
	# What a wake-up costs between dom0's vCPUs: the worker pays it when
	# a guest's event lands on the other one (docs/performance.md).
	if out=$("$CHECK" handoff 2>&1); then
		echo "$out"
		result PASS stages/handoff-measured
	else
		result FAIL stages/handoff-measured "$out"
	fi
}

# ----- PVH and HVM guests on blkbackd
#
# Both need Xen's HVM support with HAP (run.sh gives the emulated CPU AMD-V
# with nested paging).  The PVH guest boots the PV guests' vmlinux; the HVM
# guest boots through its firmware from its disk, given first to QEMU's
# emulated IDE disk, which the kernel unplugs before its blkfront takes
# over (hvm-boot-area.sh), and its console is on the emulated serial
# port, written to the log the PV console would use.  Each disk is 64 MiB:
# dom0 writes pattern A into [32M, 40M) first; the guest reads it, writes
# pattern B into [40M, 56M) with O_DIRECT, reads it back and prints its
# checksum; after the shutdown dom0 finds B in the image and the same
# checksum.  The guest says what kind it is (/sys/hypervisor/guest_type),
# so a guest that silently came up as another type cannot pass.

# NAME TYPE DISK-SPEC EXTRA; the HVM guest's kernel and its command line
# are on its disk (boot_area_args), so EXTRA is the PVH guest's.
hvm_like_config() {
	local boot more=
	boot="kernel = \"$E/guest/vmlinux\"
ramdisk = \"$E/guest/initrd.cpio\"
extra = \"console=hvc0 loglevel=4 $4\""
	if [ "$2" = hvm ]; then
		# By QEMU's direct kernel boot (the bzImage), or from the disk
		# through the firmware (part hvm-disk, hvm-boot-area.sh).
		boot="kernel = \"$E/guest/vmlinuz\"
ramdisk = \"$E/guest/initrd.cpio\"
extra = \"console=ttyS0 loglevel=4 $4\""
		[ "${HVM_BOOT:-}" != disk ] || boot=
		more="serial = 'file:$(console "$1")'
vga = 'none'
vnc = 0
boot = 'c'"
	fi
	cat >"$CFG/$1.cfg" <<EOF
name = "$1"
type = "$2"
$boot
memory = 256
vcpus = 1
on_poweroff = "destroy"
on_reboot = "destroy"
on_crash = "destroy"
disk = [ '$3' ]
$more
EOF
}

hvm_with_hap() {
	local caps
	caps=$(xl info | sed -n 's/^virt_caps *: //p')
	case " $caps " in
	*" hvm "*) case " $caps " in *" hap "*) return 0 ;; esac ;;
	esac
	result FAIL "$1/xen-offers-hvm-with-hap" "virt_caps: $caps"
	return 1
}

# Start the guest and wait for its disk; 0 when it is up, TRIPLE_FAULT
# when it triple-faulted on the way, FIRMWARE_STALL when its firmware
# stalled (firmware_stalled), INITRAMFS_CORRUPT when its kernel found the
# initramfs corrupt though the image held it intact (initramfs_dropped),
# 1 on any other failure.
TRIPLE_FAULT=3
FIRMWARE_STALL=4
INITRAMFS_CORRUPT=5
# How many tries a PVH or HVM guest's scenario gets before a triple fault
# in every one of them fails it (pattern_guest, triple_fault_tries). Under
# this emulation about one PVH boot in two or three triple-faults (3 of 7
# in a run of 1 December, most in early boot, where a try costs seconds),
# so that with three tries each scenario still failed about once in ten
# runs for reasons that are QEMU's, not blkbackd's. On 6 December, on an
# Intel host, 18 of about 35 tries in two runs died so (the migrate and
# NBD scenarios three times each before passing): with five tries each of
# the four scenarios in triple_fault_tries failed about once in 32 runs,
# one CI run in eight; with eight, one in 64. Later that day, in two cold
# CI runs and one run of the four scenarios, 21 of 33 tries died so (13 of
# 17 in the last, the NBD scenario six times before passing): at that rate
# eight tries fail one CI run in nine, twelve one in fifty. A try costs
# time only when its guest faulted, so that a fault-free run is as fast.
TRIES=12
# A try whose guest triple-faulted before blkbackd connected its disk
# tells nothing about the daemon and is not counted among those TRIES;
# on 2 December four of five PVH tries died so (in early boot, within
# seconds) on one host. All tries together stay within MAX_TRIES.
MAX_TRIES=16
# blkbackd logged that domain DOMID's disk connected (its log's
# "vbd DOMID/DEVID: connected" line).
disk_connected() { # DOMID
	[ -n "$1" ] && grep -q "vbd $1/[0-9]*: connected" "$DAEMON_LOG"
}
BOOT_TIMES=
boot_guest() { # NAME
	local g=$1 out domid t0 t_xl
	t0=$(uptime_cs)
	if ! out=$(timeout 180 xl create "$CFG/$g.cfg" 2>&1); then
		result FAIL "$g/xl-create" "$(echo "$out" | tail -n 4 | tr '\n' ' ')"
		return 1
	fi
	t_xl=$(($(uptime_cs) - t0))
	domid=$(domid_of "$g")
	echo "$domid" >"$R/$g.domid"
	if wait_console "$g" E2E-STARTED "${BOOT_WAIT:-300}"; then
		BOOT_TIMES="xl create took $t_xl cs, the disk was up $(($(uptime_cs) - t0)) cs after it started"
		result PASS "$g/xl-create" "$BOOT_TIMES (domain $domid)"
		return 0
	fi
	! triple_faulted "$g" "$domid" || return $TRIPLE_FAULT
	! firmware_stalled "$g" "$domid" || return $FIRMWARE_STALL
	if initramfs_dropped "$g"; then
		return $INITRAMFS_CORRUPT
	elif [ $? -eq 2 ]; then
		return 1
	fi
	result FAIL "$g/disk-connected" "no E2E-STARTED from the guest"
	timeout 60 xl destroy "$g" >/dev/null 2>&1
	return 1
}

# Under TCG with nested SVM, a PVH or HVM guest now and then triple-faults
# (tests/e2e/README.md), early in boot or after its I/O.  Recognised from
# Xen's log alone, never from a check failing; such a guest is gone
# (on_reboot="destroy": Xen reboots a guest that triple-faults).
triple_faulted() { # NAME DOMID
	[ -n "$2" ] || return 1
	xl dmesg | grep -q "d${2}v[0-9]* Triple fault" || return 1
	echo "e2e: $1 (domain $2) triple-faulted: $(xl dmesg | grep -m 1 "d${2}v[0-9]* Triple fault")"
	timeout 60 xl destroy "$1" >/dev/null 2>&1
	return 0
}

# Under this emulation the HVM guest's firmware now and then stops reading
# its emulated IDE disk for good: on 2 December its device model's count
# of bytes read (rchar) stayed at 8451171 in the last 49 of the 75 samples
# of the 602 s boot wait, "Loading vmlinuz..." on the console, and the try
# failed disk-connected for QEMU's reasons, not blkbackd's. A healthy load
# moved the count by 300 KB or more in every 5 s sample (70-164 KiB/s,
# 11.5 MB in about 180 s), so FIRMWARE_STALL_S without a byte is a stall,
# with a wide margin for a slow host.
FIRMWARE_STALL_S=120
# The HVM guest whose try is watched (pattern_guest_try sets it).
FIRMWARE_WATCH=
fw_seen=
fw_since=0
# SYSLINUX is loading the kernel or initramfs: it has started ("Loading"),
# so the emulated disk works and is the image blkbackd named, and it has
# not finished (no "initrd.xz...ok"). Only then is a silent device model
# the firmware's stall: before, it can be a disk QEMU never got; after,
# the guest's Linux has unplugged the emulated disk and may be waiting for
# blkbackd.
syslinux_loading() { # GUEST
	local log
	log=$(console "$1")
	grep -q 'Loading ' "$log" 2>/dev/null &&
		! grep -q 'initrd\.xz.*ok' "$log" 2>/dev/null
}
# The watched guest's firmware stalled: its device model has read nothing
# for FIRMWARE_STALL_S while SYSLINUX loads and blkbackd has not connected
# its disk. Never once the disk connected: from then on a stuck guest is
# judged (it may be blkbackd's). Counts from the first look at a count,
# so from try_doomed's looks, every 5 s.
firmware_stuck() {
	local domid qpid rchar
	[ -n "$FIRMWARE_WATCH" ] && domid=$(domid_of "$FIRMWARE_WATCH") &&
		! disk_connected "$domid" && syslinux_loading "$FIRMWARE_WATCH" &&
		qpid=$(device_model_pid "$domid") || return 1
	rchar=$(rchar_of "$qpid")
	[ -n "$rchar" ] || return 1
	if [ "$qpid $rchar" != "$fw_seen" ]; then
		fw_seen="$qpid $rchar"
		fw_since=$SECONDS
		return 1
	fi
	[ $((SECONDS - fw_since)) -ge "$FIRMWARE_STALL_S" ]
}
# After a failed wait for the disk: the firmware stalled (firmware_stuck);
# the guest, which would wait for ever, is destroyed.
firmware_stalled() { # NAME DOMID
	[ "$FIRMWARE_WATCH" = "$1" ] && firmware_stuck || return 1
	echo "e2e: $1 (domain $2): the firmware stalled: its device model read nothing for $((SECONDS - fw_since)) s, at ${fw_seen#* } bytes, console: $(tr -d '\r' <"$(console "$1")" | grep -v '^ *$' | tail -n 1 | cut -c1-70)"
	timeout 60 xl destroy "$1" >/dev/null 2>&1
	return 0
}

# After a failed wait for the disk: the watched HVM guest's kernel found
# its initramfs corrupt (hvm-boot-area.sh, initramfs_corrupt). The guest
# is destroyed and the evidence judged: 0 when the image's boot area was
# the same before the boot (BOOT_AREA_BEFORE, of BOOT_AREA_IMAGE, which
# pattern_guest_try takes) and after it, 2 with a FAIL when it changed,
# 1 when the kernel said nothing of the kind.
BOOT_AREA_IMAGE=
BOOT_AREA_BEFORE=
initramfs_dropped() { # NAME
	[ "$FIRMWARE_WATCH" = "$1" ] && initramfs_corrupt "$1" || return 1
	timeout 60 xl destroy "$1" >/dev/null 2>&1
	initramfs_corrupt_judge "$1" "$BOOT_AREA_IMAGE" "$BOOT_AREA_BEFORE" || return 2
}

# BLKBACKD_E2E_INJECT (run.sh) asked for WHAT, a crash on purpose that the
# test must recover from (tests/e2e/README.md).
injected() { grep -qw "$1" "$E/inject" 2>/dev/null; }

guest_type_is() { # GUEST TYPE
	local seen
	seen=$(guest_line "$1" E2E-GUEST-TYPE)
	if [ "$seen" = "$2" ]; then
		result PASS "$1/guest-type" "$seen"
	else
		result FAIL "$1/guest-type" "the guest says '$seen', expected $2"
	fi
}

# Pattern A, for the guest to read.
write_pattern_a() { # IMAGE
	"$CHECK" write "$1" 32M 8M 21 -b 1M
}

# After the guest is gone: pattern B and the guest's checksum in the image.
verify_pattern_image() { # GUEST IMAGE SEED
	local g=$1 img=$2 want have
	check "$g/dom0-guest-pattern" "$CHECK" verify "$img" 40M 16M "$3" -d -b 1M
	check "$g/dom0-pattern-untouched" "$CHECK" verify "$img" 32M 8M 21 -b 1M
	want=$(guest_line "$g" E2E-SUM)
	have=$(dd if="$img" bs=1M skip=40 count=16 2>/dev/null | sha256sum | cut -d' ' -f1)
	if [ -n "$want" ] && [ "$want" = "$have" ]; then
		result PASS "$g/dom0-checksum-as-guest" "$have"
	else
		result FAIL "$g/dom0-checksum-as-guest" "guest '$want', image '$have'"
	fi
}

# Pattern B's seed in try TRY: each try writes its own, so that the data
# dom0 finds after a second try cannot be what the first one left.
pattern_b_seed() { echo $((21 + $1)); }
pattern_args() { # TRY
	echo "e2e_role=pattern e2e_verify=32:8:21 e2e_write=40:16:$(pattern_b_seed "$1")"
}
PATTERN_ARGS=$(pattern_args 1)

# One try of the guest (of TYPE pvh or hvm) on IMAGE: create it, run CHECK
# while it runs, wait for its workload and shut it down.  Its domain id
# goes to $R/NAME.domid.  Returns TRIPLE_FAULT when the guest triple-faulted
# (it is then gone), FIRMWARE_STALL when an HVM guest's firmware stalled
# before its disk connected (destroyed), INITRAMFS_CORRUPT when an HVM
# guest's initramfs went wrong though its image held it intact
# (destroyed), 1 when it did not boot, else 0:
# the checks of the guest's results follow.
# With the triple-fault injection an HVM guest's first try reboots by a
# triple fault (reboot=t) once its I/O is done (e2e_triple_fault=1). Not
# a PVH guest's: its Linux reboots through Xen whatever reboot= says, so
# that its try would just end, unfinished.
pattern_guest_try() { # NAME TYPE IMAGE CHECK TRY
	local g=$1 domid args rc=0 initrd=
	args=$(pattern_args "$5")
	[ "$5" != 1 ] || [ "$2" != hvm ] || ! injected triple-fault ||
		args="$args reboot=t e2e_triple_fault=1"
	rm -f "$R/$g.domid"
	if [ "${HVM_BOOT:-}" = disk ]; then
		FIRMWARE_WATCH=$g
		[ "$5" != 1 ] || ! injected initramfs-corrupt ||
			initrd=corrupt-initrd.xz
		if ! boot_area_args "$3" "console=ttyS0 loglevel=4 $args" "$initrd"; then
			result FAIL "$g/boot-area-args" "cannot write syslinux.cfg on $3"
			return 1
		fi
		BOOT_AREA_IMAGE=$3
		BOOT_AREA_BEFORE=$(boot_area_sum "$3")
	fi
	hvm_like_config "$g" "$2" "vdev=xvda,access=rw,script=blkbackd,target=$3" "$args"
	boot_guest "$g" || return
	echo "E2E-BENCH $2: $BOOT_TIMES"
	domid=$(domid_of "$g")
	[ -z "$4" ] || "$4" "$g" "$domid" "$3"
	record_negotiation "$g" $XVDA
	if wait_console "$g" E2E-DONE 480; then
		shutdown_guest "$g"
	elif triple_faulted "$g" "$domid"; then
		rc=$TRIPLE_FAULT
	else
		timeout 60 xl destroy "$g" >/dev/null 2>&1
	fi
	sync
	return $rc
}

# Count the E2E: lines of a try that is judged; print the others.
replay_results() { # FILE
	local verdict name detail line
	while IFS= read -r line; do
		case "$line" in
		"E2E: "*)
			read -r _ verdict name detail <<<"$line"
			result "$verdict" "$name" "$detail"
			;;
		*) echo "$line" ;;
		esac
	done <"$1"
}

# Boot the guest (of TYPE pvh or hvm) on IMAGE, which holds pattern A, let
# it run the pattern role, shut it down and check the image.  CHECK, if
# given, is called with the guest's name, domain id and image while it runs.
# A try that triple-faulted is not judged: its lines are printed as
# dropped, dom0 waits until the backend is gone and blkbackd closed the
# image, and the guest is created once more, up to TRIES times, and judged
# on the first try without one.  So is a try whose firmware stalled
# (boot_guest), which is never counted: it stalled before blkbackd had
# anything to do with the guest's boot.  Pattern A still holds then (no
# try writes there) and each try writes pattern B with its own seed over
# whatever the ones before left.
pattern_guest() { # NAME TYPE IMAGE [CHECK]
	local g=$1 domid try=0 counted=0 rc out=$R/$1.try why what
	while :; do
		try=$((try + 1))
		xl dmesg -c >/dev/null
		(TRY_WATCH=1 pattern_guest_try "$1" "$2" "$3" "${4:-}" $try) >"$out" 2>&1
		rc=$?
		domid=$(cat "$R/$g.domid" 2>/dev/null)
		if [ $rc -eq $FIRMWARE_STALL ]; then
			what=firmware-stall
			why="as the firmware stalled before its disk connected (not counted)"
		elif [ $rc -eq $INITRAMFS_CORRUPT ]; then
			what=initramfs-corrupt
			why="as its initramfs went wrong on the way from the intact image into the guest (not counted)"
		elif [ $rc -eq $TRIPLE_FAULT ]; then
			what=triple-fault
			why="after a triple fault"
			if disk_connected "$domid"; then
				counted=$((counted + 1))
			else
				why="$why before its disk connected (not counted)"
			fi
		else
			break
		fi
		[ $counted -lt "$TRIES" ] && [ $try -lt "$MAX_TRIES" ] || break
		sed "s/^/e2e: $g try $try, dropped $why: /" "$out"
		mv "$(console "$g")" "$(console "$g").$what.$try" 2>/dev/null
		backend_gone "$domid"
		if wait_until 30 "! daemon_fd_targets | grep -qxF '$3'"; then
			result PASS "$g/image-closed-after-$what"
		else
			result FAIL "$g/image-closed-after-$what" "blkbackd still has $3 open"
		fi
	done
	replay_results "$out"
	if [ $rc -eq $TRIPLE_FAULT ]; then
		result FAIL "$g/a-try-without-triple-fault" "domain $domid triple-faulted in try $try too ($counted of $try after the disk connected)"
		return
	fi
	if [ $rc -eq $FIRMWARE_STALL ]; then
		result FAIL "$g/disk-connected" "the firmware stalled in try $try too, the last allowed (MAX_TRIES)"
		return
	fi
	if [ $rc -eq $INITRAMFS_CORRUPT ]; then
		result FAIL "$g/disk-connected" "the initramfs went wrong in try $try too, the last allowed (MAX_TRIES)"
		return
	fi
	# Not booted (its failure is among the lines above): nothing to judge.
	[ $rc -eq 0 ] || return
	echo "e2e: $g judged on try $try (domain $domid)"
	guest_type_is "$g" "$(echo "$2" | tr '[:lower:]' '[:upper:]')"
	collect_guest_results "$g"
	backend_gone "$domid"
	verify_pattern_image "$g" "$3" "$(pattern_b_seed $try)"
}

guest_pvh() {
	local g=e2e-pvh img=$IMG/pvh.img
	hvm_with_hap $g || return
	rm -f "$img"
	if truncate -s 64M "$img" && write_pattern_a "$img"; then
		pattern_guest $g pvh "$img"
	else
		result FAIL $g/dom0-prepare-image
	fi
}

# The device model (QEMU in dom0) of domain DOMID.
device_model_pid() {
	local p
	for p in $(pgrep -f -- "-xen-domid $1( |$)"); do
		echo "$p"
		return 0
	done
	return 1
}

# How many bytes process PID has read so far (rchar in /proc/PID/io).
rchar_of() { sed -n 's/^rchar: //p' "/proc/$1/io" 2>/dev/null; }

# While the HVM guest runs: QEMU got the image for its emulated disk from
# physical-device-path (which blkbackd writes), and closed it when the
# guest unplugged the emulated disk (blkbackd then serves it alone).
hvm_emulated_disk_checks() { # GUEST DOMID IMAGE
	local g=$1 pdp qpid
	pdp=$(xenstore-read "$BE/$2/$XVDA/physical-device-path" 2>/dev/null)
	if [ "$pdp" = "$3" ]; then
		result PASS "$g/physical-device-path" "$pdp"
	else
		result FAIL "$g/physical-device-path" "'$pdp', expected $3"
	fi
	if ! qpid=$(device_model_pid "$2"); then
		result FAIL "$g/device-model-has-disk" "no QEMU with -xen-domid $2"
		return
	fi
	if tr '\0' ' ' <"/proc/$qpid/cmdline" | grep -q -- "file=$3,if=ide"; then
		result PASS "$g/device-model-has-disk" "QEMU $qpid: -drive file=$3,if=ide"
	else
		result FAIL "$g/device-model-has-disk" "$(tr '\0' ' ' <"/proc/$qpid/cmdline" | grep -o -- '-drive [^ ]*')"
	fi
	if ls -l "/proc/$qpid/fd" 2>/dev/null | grep -q -- "-> $3\$"; then
		result FAIL "$g/device-model-closed-image" "QEMU $qpid still has $3 open"
	else
		result PASS "$g/device-model-closed-image"
	fi
}

# Part hvm: the HVM guest, booted by QEMU's direct kernel boot. The boot
# through the firmware from the disk (part hvm-disk) reads 10.6 MB through
# the emulated IDE disk, a VM exit for every few sectors, and under this
# nested emulation too many of those exits go wrong: on 6 December all
# four of its tries died (three triple faults with Xen's own code address
# as the guest's RIP, one without a word), so CI boots this way, as the
# test did before the disk boot.
guest_hvm() {
	local g=e2e-hvm img=$IMG/hvm.img
	hvm_with_hap $g || return
	rm -f "$img"
	if truncate -s 64M "$img" && write_pattern_a "$img"; then
		pattern_guest $g hvm "$img" hvm_emulated_disk_checks
	else
		result FAIL $g/dom0-prepare-image
	fi
}

# ----- a storage driver domain (issue 9; docs/driver-domain.md)
#
# A PV domain named "blkbackd" (driver_domain=1) boots with systemd as
# PID 1, which starts blkbackd.service from blkbackd's Debian package
# (installed there with dpkg) and `xl devd` (xldevd.service, as
# docs/driver-domain.md writes it); its root is a pristine copy of the
# dom0 root (run.sh gives QEMU the cached image once more, as /dev/vdc),
# which dom0's blkbackd serves to it, and its images live there, in
# /srv/img. A PV guest then has two disks written as a user writes them
# for a driver domain, without script=:
#   backend=blkbackd,file:/srv/img/dd-a.img,xvda,w
#   backend=blkbackd,vdev=xvdb,access=rw,target=/srv/img/dd-b.img
# dom0 checks what libxl and the driver domain wrote while it runs, the
# guest verifies a pattern put there beforehand and writes and reads back
# another on each; after its shutdown a guest whose disk names a missing
# image fails to start, and the driver domain (dd-test.sh) checks the
# unit's sandbox and watchdog, the images, reports their checksums
# (compared here with the guest's), that it made no loop device and the
# journal's record of the refused image; dom0 checks it made no loop
# device either.
DD=blkbackd
DD_ROOT=/dev/vdc
DD_IMG=/srv/img
DD_MNT=/mnt/dd-root

# Every loop device bound to a file, as "loopN=FILE".
loop_bindings() {
	local f
	for f in /sys/block/loop*/loop/backing_file; do
		[ -f "$f" ] && echo "${f#/sys/block/}=$(cat "$f")"
	done
}

# What docs/driver-domain.md has the domain's administrator do, done in
# its root from here (systemctl --root, chroot): the package installed
# with dpkg, backend/vbd taken over (blkbackd-takeover on), the `block` script
# taken over, and `xl devd` run by the recipe's unit, both enabled.
dd_recipe() { # ROOT
	install_package $DD/package-installed "$1" || return 1
	takeover_on $DD/takeover-on "$1" || return 1
	if chroot "$1" dpkg-divert --local --rename --add /etc/xen/scripts/block &&
		ln -s blkbackd "$1/etc/xen/scripts/block"; then
		result PASS $DD/block-script-taken-over "$(ls -l "$1/etc/xen/scripts/block" | sed 's/.* -> //')"
	else
		result FAIL $DD/block-script-taken-over
		return 1
	fi
	cat >"$1/etc/systemd/system/xldevd.service" <<'UNIT'
[Unit]
Description=xl devd: run hotplug scripts for this driver domain
After=blkbackd.service
[Service]
Type=forking
PIDFile=/run/xldevd.pid
ExecStart=/usr/sbin/xl devd --pidfile=/run/xldevd.pid
[Install]
WantedBy=multi-user.target
UNIT
	systemctl --root="$1" enable blkbackd.service xldevd.service
}

# The test's own unit there: dd-test.sh once both have started, writing
# to the console dom0 reads (no login prompt shares it).
dd_test_unit() { # ROOT
	install -m 755 "$E/dd-test.sh" "$1/usr/local/sbin/e2e-dd-test" &&
		cat >"$1/etc/systemd/system/e2e-dd.service" <<'UNIT' &&
[Unit]
Description=blkbackd's real-Xen test: the driver domain's checks
After=blkbackd.service xldevd.service
[Service]
Type=simple
ExecStart=/usr/local/sbin/e2e-dd-test
StandardOutput=tty
StandardError=tty
TTYPath=/dev/hvc0
[Install]
WantedBy=multi-user.target
UNIT
		systemctl --root="$1" enable e2e-dd.service &&
		systemctl --root="$1" mask serial-getty@hvc0.service
}

# The domain's root: the recipe, the test's unit and checker, the images.
dd_prepare_root() {
	local rc
	mkdir -p "$DD_MNT"
	mount -t ext4 "$DD_ROOT" "$DD_MNT" || return 1
	dd_recipe "$DD_MNT" && dd_test_unit "$DD_MNT" &&
		install -m 755 "$CHECK" "$DD_MNT/usr/local/bin/e2e-check" &&
		mkdir -p "$DD_MNT$DD_IMG" &&
		truncate -s 64M "$DD_MNT$DD_IMG/dd-a.img" "$DD_MNT$DD_IMG/dd-b.img" &&
		write_pattern_a "$DD_MNT$DD_IMG/dd-a.img" &&
		write_pattern_a "$DD_MNT$DD_IMG/dd-b.img"
	rc=$?
	umount "$DD_MNT" || rc=1
	return $rc
}

dd_config() {
	cat >"$CFG/$DD.cfg" <<EOF
name = "$DD"
type = "pv"
driver_domain = 1
kernel = "$E/guest/vmlinux"
ramdisk = "$E/guest/initrd.cpio"
extra = "console=hvc0 loglevel=4 e2e_role=switchroot e2e_init=/lib/systemd/systemd"
memory = 512
vcpus = 2
on_poweroff = "destroy"
on_reboot = "destroy"
on_crash = "destroy"
disk = [ 'vdev=xvda,access=rw,script=blkbackd,target=$DD_ROOT' ]
EOF
}

# While the guest runs: the disks are the driver domain's, as libxl wrote
# them for a line without script=, and connected after xl devd ran the
# (taken over) block script there; dom0 serves none of them.
dd_backend_checks() { # GUEST GUEST-DOMID DD-DOMID
	local g=$1 devid be bad="" got
	for devid in $XVDA $XVDB; do
		be=/local/domain/$3/backend/vbd/$2/$devid
		got="state=$(xenstore-read "$be/state" 2>/dev/null)"
		got="$got script=$(xenstore-read "$be/script" 2>/dev/null)"
		got="$got hotplug-status=$(xenstore-read "$be/hotplug-status" 2>/dev/null)"
		got="$got params=$(xenstore-read "$be/params" 2>/dev/null)"
		case "$got" in
		"state=4 script=/etc/xen/scripts/block hotplug-status=connected params=$DD_IMG/dd-"[ab].img) ;;
		*) bad="$bad $devid: $got;" ;;
		esac
	done
	xenstore-exists "$BE/$2" && bad="$bad dom0 has a backend for the guest;"
	if [ -z "$bad" ]; then
		result PASS "$g/served-by-driver-domain" "backend/vbd of domain $3: state 4, script block, hotplug-status connected"
	else
		result FAIL "$g/served-by-driver-domain" "${bad# }"
	fi
}

# The driver domain's checksums against the guest's.
dd_sums_match() { # GUEST
	local img dev want have
	for img in a b; do
		dev=xvda
		[ $img = a ] || dev=xvdb
		want=$(guest_line "$1" "E2E-SUM$([ $dev = xvda ] || echo "-$dev")")
		have=$(guest_line "$DD" "E2E-DD-SUM $img")
		if [ -n "$want" ] && [ "$want" = "$have" ]; then
			result PASS "$1/$dev-checksum-in-driver-domain" "$have"
		else
			result FAIL "$1/$dev-checksum-in-driver-domain" "guest '$want', driver domain '$have'"
		fi
	done
}

# A guest whose disk names an image missing in the driver domain: xl
# create fails (dom0's libxl waits for the backend in vain: docs/
# driver-domain.md), and the driver domain is told which domain it was,
# to find the refusal in its journal.
dd_refused_image() { # DD-DOMID
	local g=e2e-ddmissing out domid
	guest_config $g "backend=$DD,vdev=xvda,access=rw,target=$DD_IMG/dd-missing.img" ""
	if out=$(timeout 120 xl create "$CFG/$g.cfg" 2>&1); then
		result FAIL $g/xl-create-fails "xl create succeeded"
		timeout 60 xl destroy $g >/dev/null 2>&1
	else
		result PASS $g/xl-create-fails "$(echo "$out" | grep -m 1 -E 'error|timed out')"
	fi
	domid=$(echo "$out" | sed -n 's/.*Domain \([0-9][0-9]*\):.*/\1/p' | head -n 1)
	xenstore-write "/local/domain/$1/data/e2e-refused" "${domid:-unknown}"
}

# What the driver domain showed of its daemon (systemctl status, the
# journal's lines), into this log.
dd_record() {
	tr -d '\r' <"$(console $DD)" | sed -n 's/^E2E-DD-LOG /e2e: driver domain: /p'
}

guest_driver_domain() {
	local g=e2e-ddguest ddid domid out t0 loops_before loops_after
	loops_before=$(loop_bindings)
	if ! dd_prepare_root; then
		result FAIL $DD/prepare-root "cannot install into $DD_ROOT"
		return
	fi
	dd_config
	t0=$(uptime_s)
	if ! out=$(timeout 180 xl create "$CFG/$DD.cfg" 2>&1); then
		result FAIL $DD/xl-create "$(echo "$out" | tail -n 4 | tr '\n' ' ')"
		return
	fi
	result PASS $DD/xl-create
	ddid=$(domid_of $DD)
	if ! wait_console $DD E2E-DD-READY 300; then
		collect_guest_results $DD
		dd_record
		timeout 60 xl destroy $DD >/dev/null 2>&1
		return
	fi
	echo "E2E-BENCH driverdomain: xl create to blkbackd.service and xl devd up under systemd in $(($(uptime_s) - t0)) s"
	guest_config $g "backend=$DD,file:$DD_IMG/dd-a.img,xvda,w" \
		"$PATTERN_ARGS e2e_devs=xvda,xvdb" 1 \
		"backend=$DD,vdev=xvdb,access=rw,target=$DD_IMG/dd-b.img"
	t0=$(uptime_cs)
	if ! out=$(timeout 180 xl -vvv create "$CFG/$g.cfg" 2>&1); then
		result FAIL $g/xl-create "$(echo "$out" | grep -E 'error|timed out' | head -n 4 | tr '\n' ' ')"
		echo "$out" | grep -vE '^(domainbuilder|xc:)' | tail -n 60 | sed 's/^/e2e: xl create: /'
		xenstore-ls -f "/local/domain/$ddid/backend" 2>&1 | head -n 40 | sed 's/^/e2e: xenstore: /'
	elif ! wait_console $g E2E-STARTED 300; then
		result FAIL $g/disk-connected "no E2E-STARTED from the guest"
		timeout 60 xl destroy $g >/dev/null 2>&1
	else
		result PASS $g/xl-create "the disks were up $(($(uptime_cs) - t0)) cs after xl create started"
		domid=$(domid_of $g)
		dd_backend_checks $g "$domid" "$ddid"
		finish_guest $g
		collect_guest_results $g
		if wait_until 30 "! xenstore-exists /local/domain/$ddid/backend/vbd/$domid"; then
			result PASS "$g/driver-domain-backend-removed"
		else
			result FAIL "$g/driver-domain-backend-removed" \
				"$(xenstore-ls -f "/local/domain/$ddid/backend/vbd/$domid" 2>&1 | head -n 8 | tr '\n' ' ')"
		fi
	fi
	dd_refused_image "$ddid"
	xenstore-write "/local/domain/$ddid/data/e2e-cmd" verify
	wait_console $DD E2E-DONE 300
	collect_guest_results $DD
	dd_record
	dd_sums_match $g
	wait_until 60 "! domid_of $DD >/dev/null" ||
		timeout 60 xl destroy $DD >/dev/null 2>&1
	backend_gone "$ddid"
	loops_after=$(loop_bindings)
	if [ "$loops_after" = "$loops_before" ]; then
		result PASS dom0-no-new-loop-devices "bound before and after: ${loops_after:-none}"
	else
		result FAIL dom0-no-new-loop-devices "before: ${loops_before:-none}; after: $loops_after"
	fi
}

# ----- xl migrate to localhost (issue 12)
#
# A PVH guest on a blkbackd file disk runs verified writes without end
# (guest role migwork) while `xl migrate` moves it to this same host: the
# receiving xl is started by the sender itself (-s '' runs the "host"
# argument as the command). dom0 records what xl, blkbackd and xenstore
# said, then checks that the receiving device took the image only after
# the sending one released it, that the guest's passes went on verified
# after the move and that the image holds the last pass it reported.
#
# The guest is PVH: Debian 12's Xen 4.17.7 is built without shadow paging
# (CONFIG_SHADOW_PAGING unset since XSA-495), which a PV guest's log-dirty
# mode needs, so `xl migrate` of a PV guest fails there ("Failed to enable
# logdirty: 95,22,0"); a PVH guest's log-dirty mode is HAP's
# (docs/migration.md).

# Create the guest NAME of the role migwork on DISK, PVH so that it can
# migrate (above), and wait for its disk. Run in triple_fault_tries.
start_migwork() { # NAME DISK-SPEC EXTRA
	hvm_with_hap "$1" || return
	hvm_like_config "$1" pvh "$2" "e2e_role=migwork ${3:-}"
	boot_guest "$1"
}

# Run FUNCTION, a part's scenario around the guest NAME (PVH when it
# migrates), in tries. Under this emulation a PVH guest now and then
# triple-faults (tests/e2e/README.md), in its boot, its I/O or its
# migration (once each in a rbd part's guest and others), or as it shuts
# down. A try in whose time Xen logged a triple fault is not judged,
# unless its guest started (its xl-create check passed) and no check
# failed: Xen's log is emptied before
# each try (xl dmesg -c; the serial log keeps it all), the try's lines are
# printed as dropped, what is left of the guest destroyed and its consoles
# set aside, and FUNCTION runs again, up to TRIES times, and is judged on
# the first try without one. (A guest that faults in its boot records no
# failure, boot_guest() leaving that to the tries; judged, such a try
# passed a part that had run nothing: CI's rehearsal of 6 December.) A
# try judged must have started its guest or failed a check.
triple_fault_tries() { # NAME FUNCTION
	local g=$1 out=$R/$1.try try tf c
	for try in $(seq "$TRIES"); do
		xl dmesg -c >/dev/null
		(TRY_WATCH=1 "$2") >"$out" 2>&1
		tf=$(xl dmesg | grep -m 1 'Triple fault')
		if [ -n "$tf" ] && ! grep -q '^E2E: FAIL' "$out" &&
			grep -q "^E2E: PASS $g/xl-create" "$out"; then
			echo "e2e: $g try $try: judged, every check passed despite: $tf"
			tf=
		fi
		if [ -z "$tf" ] || [ $try = "$TRIES" ]; then
			break
		fi
		sed "s/^/e2e: $g try $try, dropped after a triple fault ($tf): /" "$out"
		for c in "$g" "$g--incoming"; do
			timeout 60 xl destroy "$c" >/dev/null 2>&1
			mv "$(console "$c")" "$(console "$c").triple-fault.$try" 2>/dev/null
		done
	done
	replay_results "$out"
	[ -z "$tf" ] || result FAIL "$g/a-try-without-triple-fault" "try $try: $tf"
	grep -q -e "^E2E: PASS $g/xl-create" -e '^E2E: FAIL' "$out" ||
		result FAIL "$g/guest-started" "try $try neither started its guest nor failed a check"
}

# The guest of the role migwork of a part that migrates it if part
# migrate is asked for too (nbd.sh, rbd.sh): PVH then, else PV.
migwork_guest() { # NAME DISK-SPEC EXTRA
	if has_part migrate; then
		start_migwork "$@"
		return
	fi
	guest_config "$1" "$2" "e2e_role=migwork ${3:-}"
	start_guest "$1"
}

# The guest's console, in the logs of both domains (xenconsoled names a
# log after the domain's name when it appears: the receiving one is
# NAME--incoming until xl renames it).
migwork_console() { # GUEST
	cat "$(console "$1")" "$(console "$1--incoming")" 2>/dev/null | tr -d '\r'
}
migwork_passes() { # GUEST
	migwork_console "$1" | grep -c '^E2E-MIGWORK pass [0-9]* ok'
}

# IMAGE holds the role migwork's last finished pass: pass K wrote seed
# K+100 over the 8 MiB at (K % 2) x 8 MiB. A guest that finished no pass
# fails the check with that said, not with a read before the image's start.
check_last_pass() { # GUEST IMAGE [CHECK-NAME]
	local name=$1/${3:-dom0-last-pass-in-image} last
	last=$(($(migwork_passes "$1") - 1))
	if [ "$last" -lt 0 ]; then
		result FAIL "$name" "the guest finished no pass"
		return
	fi
	check "$name" "$CHECK" verify "$2" \
		$((last % 2 * 8))M 8M $((last + 100)) -d -b 1M
}

# Who holds a lock on FILE (/proc/locks: OFD locks show pid -1).
image_locks() { # FILE
	local ino
	ino=$(stat -c %i "$1")
	grep -E ":$ino " /proc/locks | sed 's/^/  | /'
}

# The receiving device took the image only once the sending one had let
# it go (blkbackd's log, vbd.c's hand-over): never two writers.
handover_after_release() { # GUEST OLD-DOMID NEW-DOMID IMAGE
	local rel took
	[ -n "$3" ] && [ "$3" != "$2" ] || return 0
	rel=$(grep -n "vbd $2/$XVDA: released" "$DAEMON_LOG" | head -n 1 | cut -d: -f1)
	took=$(grep -nF "vbd $3/$XVDA: took $4 over" "$DAEMON_LOG" | head -n 1 | cut -d: -f1)
	if [ -n "$rel" ] && [ -n "$took" ] && [ "$rel" -lt "$took" ]; then
		result PASS "$1/handover-after-release"
	else
		result FAIL "$1/handover-after-release" "released at log line ${rel:-none}, taken over at ${took:-none}"
	fi
}

# `xl migrate` of GUEST (domain OLD-DOMID, its disk TARGET: an image or a
# URI, as blkbackd names it) to this host while its verified passes run:
# the new domain, the hand-over in blkbackd's log, two passes after the
# move. MIG_NEW is then the guest's domain id.
migrate_checks() { # GUEST OLD-DOMID TARGET
	local g=$1 old=$2 out rc t0 n tf
	t0=$(uptime_s)
	out=$(timeout 600 xl migrate -s '' "$g" "xl migrate-receive" 2>&1)
	rc=$?
	MIG_NEW=$(domid_of "$g")
	echo "$out" | sed 's/^/e2e: xl migrate: /'
	echo "e2e: blkbackd log about $3:"
	grep -F "$3" "$DAEMON_LOG" | tail -n 10 | sed 's/^/  | /'
	xenstore-ls -f "$BE" 2>/dev/null | grep -E '/(error|hotplug-error|hotplug-status|state)=' |
		sed 's/^/e2e: xenstore: /'
	if [ $rc -eq 0 ] && [ -n "$MIG_NEW" ] && [ "$MIG_NEW" != "$old" ]; then
		result PASS "$g/xl-migrate" "domain $old -> $MIG_NEW in $(($(uptime_s) - t0)) s"
	else
		tf=$(xl dmesg | grep -m 1 'Triple fault')
		result FAIL "$g/xl-migrate" "exit $rc, domain $old -> ${MIG_NEW:-none}: $(echo "$out" | grep -iE 'error|fail' | tail -n 4 | tr '\n' ' ')${tf:+ (Xen: $tf)}"
	fi
	handover_after_release "$g" "$old" "$MIG_NEW" "$3"
	# The guest's writes go on, verified, wherever it now runs.
	n=$(migwork_passes "$g")
	if wait_until 120 "[ \$(migwork_passes $g) -ge $((n + 2)) ]" &&
		! migwork_console "$g" | grep -q '^E2E-MIGWORK pass [0-9]* FAIL'; then
		result PASS "$g/io-after-migration" "$n passes before, $(migwork_passes "$g") now"
	else
		result FAIL "$g/io-after-migration" "$n passes before, $(migwork_passes "$g") now: $(migwork_console "$g" | grep E2E-MIGWORK | tail -n 2 | tr '\n' ' ')"
	fi
}

guest_migrate() { triple_fault_tries e2e-mig guest_migrate_try; }

guest_migrate_try() {
	local g=e2e-mig img=$IMG/mig.img old
	truncate -s 64M "$img"
	start_migwork $g "vdev=xvda,access=rw,script=blkbackd,target=$img" || return
	old=$(domid_of $g)
	if ! wait_console $g "E2E-MIGWORK pass 1 ok" 300; then
		result FAIL $g/workload-running
		timeout 60 xl destroy $g >/dev/null 2>&1
		return
	fi
	migrate_checks $g "$old" "$img"
	echo "e2e: locks on $img after xl migrate (blkbackd pid $DPID):"
	image_locks "$img"
	timeout 60 xl destroy $g >/dev/null 2>&1
	backend_gone "$old"
	[ -z "$MIG_NEW" ] || [ "$MIG_NEW" = "$old" ] || backend_gone "$MIG_NEW"
	check_last_pass $g "$img"
}

# ----- the kernel path, for comparison

guest_kernel_path() {
	local g=e2e-kernel domid
	if modprobe --ignore-install xen-blkback; then
		result PASS kernel-blkback-loaded
	else
		result FAIL kernel-blkback-loaded
		return
	fi
	truncate -s 384M "$IMG/k.img"
	fill_cold_region "$IMG/k.img"
	guest_config $g "vdev=xvda,access=rw,target=$IMG/k.img" \
		"e2e_role=full e2e_bench=1" 2
	start_guest $g || return
	domid=$(domid_of $g)
	record_negotiation $g $XVDA
	finish_guest $g
	collect_guest_results $g
	backend_gone "$domid"
	verify_image $g "$IMG/k.img"
}

bench_of() { tr -d '\r' <"$(console "$1")" | grep '^BENCH ' | tail -n 1; }
coldbench_of() { tr -d '\r' <"$(console "$1")" | grep '^COLDBENCH ' | tail -n 1; }

# The region the bench guests read cold (guest-init.sh, e2e_bench): the
# last 64 MiB of the 384 MiB IMAGE filled, flushed and dropped from dom0's
# page cache. The bench's own order, writes and then reads of
# the same blocks, lets loop serve its reads from dom0's cache while
# blkbackd reads the disk; these reads are the disk's on both paths.
fill_cold_region() { # IMAGE
	dd if=/dev/urandom of="$1" bs=1M seek=320 count=64 conv=notrunc \
		status=none && sync "$1" && echo 1 >/proc/sys/vm/drop_caches
}

# The guest NAME running the benchmark over the first SIZE of DISK (guest
# role bench), the store's arms of nbd.sh and rbd.sh.
bench_guest() { # NAME DISK SIZE
	local domid
	guest_config "$1" "$2" "e2e_role=bench e2e_bench_size=$3"
	start_guest "$1" || return
	domid=$(domid_of "$1")
	finish_guest "$1"
	collect_guest_results "$1"
	backend_gone "$domid"
}

# A store's kernel arm (KERNEL-GUEST, its disk reached through WHAT) beside
# its blkbackd arm (BLKBACKD-GUEST): the figures and their ratio,
# information only.
bench_compare() { # STORE BLKBACKD-GUEST KERNEL-GUEST WHAT
	local b k
	b=$(bench_of "$2")
	k=$(bench_of "$3")
	echo "E2E-BENCH $1 kernel ($4): ${k#BENCH }"
	if [ -z "$b" ] || [ -z "$k" ]; then
		result FAIL "$1-bench-comparison" "missing figures"
		return
	fi
	bench_ratio "E2E-BENCH $1 ratio blkbackd/kernel:" "$b" "$k"
	result PASS "$1-bench-comparison"
}

# blkbackd's figures B beside the kernel path's K (BENCH or COLDBENCH
# lines) and their ratio, each E2E-BENCH line ending its label in SUFFIX;
# the check NAME fails when either is missing.
compare_figures() { # NAME SUFFIX B K
	echo "E2E-BENCH blkbackd (file, O_DIRECT in guest)$2: ${3#* }"
	echo "E2E-BENCH kernel (loop + xen-blkback)$2:       ${4#* }"
	if [ -z "$3" ] || [ -z "$4" ]; then
		result FAIL "$1" "missing figures"
		return
	fi
	bench_ratio "E2E-BENCH ratio blkbackd/kernel$2:" "$3" "$4"
	result PASS "$1"
}

compare_bench() {
	compare_figures bench-comparison "" \
		"$(bench_of e2e-file)" "$(bench_of e2e-kernel)"
	compare_figures coldbench-comparison ", cold reads" \
		"$(coldbench_of e2e-file)" "$(coldbench_of e2e-kernel)"
}

# LABEL and each figure of two BENCH lines as the first over the second.
bench_ratio() { # LABEL BENCH-LINE BENCH-LINE
	printf '%s\n%s\n' "$2" "$3" | awk -v label="$1" '
		{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[NR, kv[1]] = kv[2]; n[i] = kv[1] } m = NF }
		END {
			s = label
			for (i = 2; i <= m; i++)
				s = s sprintf(" %s=%.2f", n[i], v[2, n[i]] > 0 ? v[1, n[i]] / v[2, n[i]] : 0)
			print s
		}'
}

# dom0-test-xen420.sh sources this file for the functions above.
[ -z "${E2E_FUNCTIONS_ONLY:-}" ] || return 0

# ----- main

echo "e2e: dom0 $(uname -r), $(xl info | sed -n 's/^xen_version *: //p')"
lsmod | grep -q '^xen_blkback' &&
	result FAIL xen-blkback-kept-away "loaded at boot despite the blacklist" ||
	result PASS xen-blkback-kept-away
PARTS=$(cat "$E/parts" 2>/dev/null || echo "blkbackd pvh hvm kernel concurrency")
has_part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
# shellcheck source=tests/e2e/nbd.sh
! has_part nbd || . "$E/nbd.sh"
# shellcheck source=tests/e2e/rbd.sh
! has_part rbd || . "$E/rbd.sh"
# shellcheck source=tests/e2e/snapshot.sh
! has_part snapshot || . "$E/snapshot.sh"
# A part that dom0's daemon serves, if asked for: how long it took, and
# the daemon still alive after it.
daemon_part() { # PART FUNCTION AFTER-WHAT
	local t0
	has_part "$1" || return 0
	t0=$(uptime_s)
	"$2"
	daemon_alive "after-$3"
	echo "E2E-BENCH $1: the part took $(($(uptime_s) - t0)) s"
}
# One daemon serves the PV, PVH and HVM guests and the driver domain's
# root disk in turn.
# shellcheck source=tests/e2e/hvm-boot-area.sh
. "$E/hvm-boot-area.sh"
if has_part blkbackd || has_part stages || has_part pvh || has_part hvm ||
	has_part hvm-disk || has_part driverdomain || has_part migrate || has_part nbd || has_part rbd ||
	has_part snapshot; then
	if start_blkbackd; then
		BASE_EVTCHN_FDS=$(daemon_evtchn_fds)
		echo "e2e: daemon resources at start: $(daemon_resources)"
		if has_part blkbackd; then
			guest_missing_image
			daemon_alive after-missing-image
			guest_file
			daemon_alive after-file-guest
			guest_blockdev
			daemon_alive after-blockdev-guest
			guest_destroyed_while_writing
			daemon_alive after-destroy
		fi
		daemon_part pvh guest_pvh pvh-guest
		daemon_part hvm guest_hvm hvm-guest
		daemon_part hvm-disk guest_hvm_disk hvm-disk-guest
		daemon_part driverdomain guest_driver_domain driver-domain
		daemon_part migrate guest_migrate migration
		daemon_part nbd guest_nbd nbd-guest
		daemon_part rbd guest_rbd rbd-guest
		daemon_part snapshot guest_snapshot snapshot-guest
		leak_checks
		stop_blkbackd
		if has_part blkbackd || has_part stages; then
			t_part=$(uptime_s)
			stage_timing_pass
			echo "E2E-BENCH stages: the part took $(($(uptime_s) - t_part)) s"
		fi
	fi
	[ -z "$LOOPDEV" ] || losetup -d "$LOOPDEV"
fi
sync
case " $PARTS " in
*" kernel "*) guest_kernel_path ;;
esac
! has_part kernel || ! has_part nbd || nbd_kernel_comparison
! has_part kernel || ! has_part rbd || rbd_kernel_comparison
case " $PARTS " in
*" blkbackd "*) case " $PARTS " in *" kernel "*) compare_bench ;; esac ;;
esac
case " $PARTS " in
*" concurrency "*)
	. "$E/concurrency.sh"
	concurrency_comparison
	;;
esac
if has_part package; then
	# shellcheck source=tests/e2e/package.sh
	. "$E/package.sh"
	t_part=$(uptime_s)
	guest_package
	echo "E2E-BENCH package: the part took $(($(uptime_s) - t_part)) s"
fi
echo "----- blkbackd log (last 40 lines)"
tail -n 40 "$DAEMON_LOG"
echo "E2E-SUMMARY: $npass passed, $nfail failed, $nskip skipped"

#!/bin/bash
# Part xen420 of the real-Xen test, run by dom0-init.sh in a Debian 13 dom0
# under Xen 4.20 (issue 9 item 5): one dom0 where the kernel's xen-blkback
# keeps serving phy: volumes and blkbackd, started with --serve vbd3, serves
# files written as backendtype=tap disks.  Prints E2E: lines and a summary
# as dom0-test.sh does, whose functions it uses.
#
# 1. The bookworm-built blkbackd package installs here with dpkg (its
#    dependencies are Debian 13's packages of the same names), leaves
#    xen-blkback alone (no blacklist), and its programs run: ldd finds
#    every library.
# 2. xen-blkback is loaded and blkbackd starts beside it with --serve vbd3.
# 3. One PV guest (e2e-tap) with two disks: xvda is phy: on a loop device
#    made here (xen-blkback), xvdb the line a user writes for a tap disk,
#    backendtype=tap,script=blkbackd (blkbackd).  dom0 writes a pattern
#    into both images; the guest reads it, writes and reads back another on
#    each disk; after `xl shutdown` dom0 finds the guest's pattern and
#    checksum in both images.
# 4. What libxl 4.20 wrote for both disks (xenstore-ls -fp of the backend
#    and frontend directories) and the environment it ran the hotplug
#    script with go to the log; xenstore, sysfs and blkbackd's log and file
#    descriptors show that each backend served its own directory only.
# 5. A format=vhd tap disk: `xl block-attach` fails printing blkbackd's
#    reason.
# 6. Debian 13's own xentop (libxenstat 4.20 reads a vbd3 disk's counters
#    from the file tapdisk3 keeps, which blkbackd writes for its tap
#    disks) shows xvdb's read and write counters moving between a sample
#    taken as the guest starts and one after its I/O (issue 30).
# shellcheck source=tests/e2e/dom0-test.sh
E2E_FUNCTIONS_ONLY=1 . /work/e2e/dom0-test.sh
# blkbackd serves backend/vbd3 beside xen-blkback: no takeover.
KEEP_XEN_BLKBACK=1

BE3=/local/domain/0/backend/vbd3
G=e2e-tap
PHY_IMG=$IMG/phy.img
TAP_IMG=$IMG/tap.img
VHD_IMG=$IMG/v.vhd
HOTPLUG_ENV=$R/hotplug-env.txt
XENSTORE_DUMP=$R/xenstore-xen420.txt

# The installed programs find all their libraries (the package was built on
# Debian 12; a soname trixie lacks would show as "not found").
binaries_run() {
	local f out missing=
	for f in /usr/sbin/blkbackd /usr/sbin/blkbackctl; do
		if ! out=$(ldd "$f" 2>&1); then
			missing="$missing $f ($out)"
			continue
		fi
		echo "$out" | sed "s|^|e2e: ldd $f: |"
		missing="$missing$(echo "$out" | awk '/not found/ { printf " %s", $1 }')"
	done
	if [ -z "$missing" ]; then
		result PASS bookworm-binaries-find-their-libraries
	else
		result FAIL bookworm-binaries-find-their-libraries "missing:$missing"
	fi
}

# libxl runs the script named by script= from /etc/xen/scripts; put a
# wrapper in front of the installed one that records the environment it
# gets, then runs it.
record_hotplug_environment() {
	local s=/etc/xen/scripts/blkbackd
	mv "$s" "$s.installed"
	cat >"$s" <<EOF
#!/bin/sh
{ echo "--- \$0 \$*"; env | sort; } >>$HOTPLUG_ENV
exec $s.installed "\$@"
EOF
	chmod 755 "$s"
}

# Installing the package leaves xen-blkback alone: no blacklist (only
# blkbackd-takeover on writes one), so an operator who keeps it beside
# blkbackd has nothing to undo.
let_blkback_load() {
	local f=/etc/modprobe.d/blkbackd.conf

	if [ -e "$f" ]; then
		result FAIL package-leaves-xen-blkback-alone "$f: $(tr '\n' ' ' <"$f")"
	else
		result PASS package-leaves-xen-blkback-alone
	fi
}

# blkbackd with the installed unit's command line and --serve vbd3, while
# xen-blkback is loaded: it must start, and watch backend/vbd3 alone.
start_beside_blkback() {
	let_blkback_load
	if modprobe xen-blkback && lsmod | grep -q '^xen_blkback'; then
		result PASS xen-blkback-loaded
	else
		result FAIL xen-blkback-loaded
		return 1
	fi
	record_hotplug_environment
	DAEMON_CMD="$DAEMON_CMD --serve vbd3"
	start_blkbackd || return 1
	if grep -q "serving $BE3\$" "$DAEMON_LOG" &&
		! grep -q "serving $BE\$" "$DAEMON_LOG"; then
		result PASS blkbackd-watches-vbd3-only
	else
		result FAIL blkbackd-watches-vbd3-only "$(grep serving "$DAEMON_LOG" | tr '\n' ' ')"
	fi
}

state_is() { # BACKEND-DIR STATE
	[ "$(xenstore-read "$1/state" 2>/dev/null)" = "$2" ]
}

dump_xenstore() { # DOMID
	local d
	for d in "$BE/$1" "$BE3/$1" "/local/domain/$1/device/vbd" \
		"/libxl/$1/device"; do
		echo "--- xenstore-ls -fp $d"
		xenstore-ls -fp "$d" 2>&1
	done >"$XENSTORE_DUMP"
	sed 's/^/e2e: xenstore: /' "$XENSTORE_DUMP"
	echo "e2e: the hotplug script's environment (add):"
	sed 's/^/e2e: hotplug-env: /' "$HOTPLUG_ENV" 2>/dev/null
}

# Each directory holds its own disk; each backend serves its own.
backends_apart() { # DOMID
	local domid=$1 kbe=$BE/$1/$XVDA tbe=$BE3/$1/$XVDB bad=
	[ "$(xenstore-list "$BE/$domid" 2>/dev/null | tr '\n' ' ')" = "$XVDA " ] ||
		bad="$bad backend/vbd/$domid holds '$(xenstore-list "$BE/$domid" 2>&1 | tr '\n' ' ')';"
	[ "$(xenstore-list "$BE3/$domid" 2>/dev/null | tr '\n' ' ')" = "$XVDB " ] ||
		bad="$bad backend/vbd3/$domid holds '$(xenstore-list "$BE3/$domid" 2>&1 | tr '\n' ' ')';"
	if [ -z "$bad" ]; then
		result PASS "$G/each-disk-in-its-directory" "vbd: $XVDA, vbd3: $XVDB"
	else
		result FAIL "$G/each-disk-in-its-directory" "${bad# }"
	fi
	# The kernel's: Connected, its device in sysfs, the loop device
	# its script found; never in blkbackd's log.
	bad=
	state_is "$kbe" 4 || bad="$bad state $(xenstore-read "$kbe/state");"
	[ -e "/sys/bus/xen-backend/devices/vbd-$domid-$XVDA" ] ||
		bad="$bad no vbd-$domid-$XVDA in /sys/bus/xen-backend;"
	[ -n "$(xenstore-read "$kbe/physical-device" 2>/dev/null)" ] ||
		bad="$bad no physical-device;"
	! grep -qE "(^|[^0-9a-z])vbd $domid/" "$DAEMON_LOG" ||
		bad="$bad blkbackd logged: $(grep -E "(^|[^0-9a-z])vbd $domid/" "$DAEMON_LOG" | head -n 1);"
	if [ -z "$bad" ]; then
		result PASS "$G/xvda-served-by-xen-blkback" \
			"physical-device $(xenstore-read "$kbe/physical-device")"
	else
		result FAIL "$G/xvda-served-by-xen-blkback" "${bad# }"
	fi
	# blkbackd's: Connected after the script, the file open in blkbackd,
	# no kernel device for it, nothing of the phy: disk open in blkbackd.
	bad=
	state_is "$tbe" 4 || bad="$bad state $(xenstore-read "$tbe/state");"
	[ "$(xenstore-read "$tbe/hotplug-status" 2>/dev/null)" = connected ] ||
		bad="$bad hotplug-status '$(xenstore-read "$tbe/hotplug-status" 2>&1)';"
	grep -q "vbd3 $domid/$XVDB" "$DAEMON_LOG" ||
		bad="$bad blkbackd's log does not name vbd3 $domid/$XVDB;"
	daemon_fd_targets | grep -qx "$TAP_IMG" ||
		bad="$bad blkbackd has no descriptor of $TAP_IMG;"
	! daemon_fd_targets | grep -qE "^($PHY_IMG|$LOOPDEV)\$" ||
		bad="$bad blkbackd has the phy: disk open;"
	[ ! -e "/sys/bus/xen-backend/devices/vbd-$domid-$XVDB" ] ||
		bad="$bad the kernel has a device for xvdb;"
	if [ -z "$bad" ]; then
		result PASS "$G/xvdb-served-by-blkbackd" \
			"params $(xenstore-read "$tbe/params")"
	else
		result FAIL "$G/xvdb-served-by-blkbackd" "${bad# }"
	fi
}

# `xentop -b -i 2 -d 1 -x` (a line per VBD) into FILE, and into the log.
xentop_sample() { # FILE
	timeout 30 xentop -b -i 2 -d 1 -x >"$1" 2>&1
	sed 's/^/e2e: xentop: /' "$1"
}

# The last sample's "VBD Tapdisk3 51728 ... RD: N WR: N" of FILE: "RD WR".
xentop_tap_counts() { # FILE
	grep "VBD Tapdisk3 *$XVDB " "$1" | tail -n 1 |
		sed -n 's/.* RD: *\([0-9]*\) .* WR: *\([0-9]*\) .*/\1 \2/p'
}

# The daemon's own counts of the tap disk's read and write requests, from
# `blkbackctl metrics`: "RD WR", or nothing.
daemon_tap_counts() { # DOMID
	blkbackctl metrics 2>/dev/null |
		awk -v d="domid=\"$1\"," -v v="devid=\"$XVDB\"," '
			/^blkbackd_requests_total\{/ && index($0, d) && index($0, v) {
				if (index($0, "op=\"read\"")) rd = $NF
				if (index($0, "op=\"write\"")) wr = $NF
			}
			END { if (rd != "" && wr != "") print rd, wr }'
}

# xentop shows the tap disk (blkbackd's) with blkbackd's own counts: once
# the guest is done with it, a sample's RD and WR equal the daemon's read
# and write requests, both above 0. Sampled until they agree, at most 5
# times: the daemon rewrites the file xentop reads once a second. (The
# check compared a sample taken as the guest started with one after its
# I/O, and lost the race once: the guest had done all of xvdb's I/O
# before the first sample.) The detail names what libxenstat found on
# the way: the kernel's sysfs entry, the kthread-pid node, the file.
xentop_shows_tap_disk() { # DOMID
	local domid=$1 pid xt own why tries=0
	while :; do
		xentop_sample "$R/xentop-after.txt"
		xt=$(xentop_tap_counts "$R/xentop-after.txt")
		own=$(daemon_tap_counts "$domid")
		tries=$((tries + 1))
		if { [ -n "$xt" ] && [ "$xt" = "$own" ]; } || [ $tries -ge 5 ]; then
			break
		fi
		sleep 1
	done
	pid=$(xenstore-read "$BE3/$domid/$XVDB/kthread-pid" 2>/dev/null)
	why="xentop '${xt:-none}', blkbackd '${own:-none}' (RD WR, after $tries sample(s));"
	why="$why sysfs vbd3-$domid-$XVDB $([ -e "/sys/bus/xen-backend/devices/vbd3-$domid-$XVDB" ] && echo present || echo absent);"
	why="$why kthread-pid '${pid:-none}';"
	why="$why /dev/shm/td3-$pid/vbd-$domid-$XVDB $([ -n "$pid" ] && [ -f "/dev/shm/td3-$pid/vbd-$domid-$XVDB" ] && echo present || echo absent)"
	# shellcheck disable=SC2086 # "RD WR": two words
	set -- ${xt:-}
	if [ $# -eq 2 ] && [ "$xt" = "$own" ] && [ "$1" -gt 0 ] && [ "$2" -gt 0 ]; then
		result PASS "$G/xentop-shows-tap-disk-counters" "$why"
	else
		result FAIL "$G/xentop-shows-tap-disk-counters" "$why"
	fi
}

# A VHD image on a tap disk: xl prints blkbackd's reason.
vhd_refused() {
	local out
	truncate -s 16M "$VHD_IMG"
	if out=$(timeout 120 xl block-attach $G \
		"vdev=xvdc,access=rw,backendtype=tap,format=vhd,script=blkbackd,target=$VHD_IMG" 2>&1); then
		result FAIL vhd-tap-disk-refused "xl block-attach succeeded"
		timeout 120 xl block-detach $G xvdc >/dev/null 2>&1
		return
	fi
	echo "$out" | sed 's/^/e2e: xl block-attach: /'
	if echo "$out" | grep -q "script: blkbackd: .*vbd3 [0-9]*/$XVDC.*$VHD_IMG is a VHD image; blkbackd serves raw images"; then
		result PASS vhd-tap-disk-refused "xl block-attach printed blkbackd's reason"
	else
		result FAIL vhd-tap-disk-refused "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# After the shutdown: in each image the guest's pattern, its checksum (the
# guest's E2E-SUM line for xvda, E2E-SUM-xvdb for xvdb) and dom0's
# pattern untouched.
verify_disk() { # DEV IMAGE SUM-MARKER
	local want have
	check "$G/$1/dom0-guest-pattern" "$CHECK" verify "$2" 40M 16M 22 -d -b 1M
	check "$G/$1/dom0-pattern-untouched" "$CHECK" verify "$2" 32M 8M 21 -b 1M
	want=$(guest_line "$G" "$3")
	have=$(dd if="$2" bs=1M skip=40 count=16 2>/dev/null | sha256sum | cut -d' ' -f1)
	if [ -n "$want" ] && [ "$want" = "$have" ]; then
		result PASS "$G/$1/dom0-checksum-as-guest" "$have"
	else
		result FAIL "$G/$1/dom0-checksum-as-guest" "guest '$want', image '$have'"
	fi
}

guest_two_backends() {
	local domid t0
	t0=$(uptime_s)
	rm -f "$PHY_IMG" "$TAP_IMG"
	if ! { truncate -s 64M "$PHY_IMG" "$TAP_IMG" &&
		write_pattern_a "$PHY_IMG" && write_pattern_a "$TAP_IMG" &&
		LOOPDEV=$(losetup -f --show "$PHY_IMG"); }; then
		result FAIL $G/dom0-prepare-images
		return
	fi
	guest_config $G "phy:$LOOPDEV,xvda,w" \
		"e2e_devs=xvda,xvdb $PATTERN_ARGS" 1 \
		"vdev=xvdb,access=rw,backendtype=tap,script=blkbackd,target=$TAP_IMG"
	# What libxl 4.20 does and waits for, in its own words.
	if ! timeout 120 xl -vvv create "$CFG/$G.cfg" >"$R/xl-create-vvv.log" 2>&1; then
		result FAIL $G/xl-create "$(tail -n 4 "$R/xl-create-vvv.log" | tr '\n' ' ')"
		return
	fi
	result PASS $G/xl-create
	grep -E "vbd3|51728|hotplug|wanted state" "$R/xl-create-vvv.log" |
		sed 's/^/e2e: xl -vvv create: /'
	wait_console $G E2E-STARTED 120 ||
		result FAIL $G/disk-connected "no E2E-STARTED from the guest"
	domid=$(domid_of $G)
	wait_until 30 "state_is $BE/$domid/$XVDA 4 && state_is $BE3/$domid/$XVDB 4"
	dump_xenstore "$domid"
	backends_apart "$domid"
	vhd_refused
	wait_console $G E2E-DONE 480 && xentop_shows_tap_disk "$domid"
	finish_guest $G
	collect_guest_results $G
	if wait_until 30 "! xenstore-exists $BE/$domid && ! xenstore-exists $BE3/$domid"; then
		result PASS "$G/backend-nodes-removed"
	else
		result FAIL "$G/backend-nodes-removed"
	fi
	losetup -d "$LOOPDEV"
	verify_disk xvda "$PHY_IMG" E2E-SUM
	verify_disk xvdb "$TAP_IMG" E2E-SUM-xvdb
	echo "E2E-BENCH xen420: the guest with both backends took $(($(uptime_s) - t0)) s"
}

echo "e2e: dom0 $(uname -r), Xen $(xl info | sed -n 's/^xen_version *: //p')," \
	"$(. /etc/os-release && echo "$PRETTY_NAME")"
echo "E2E-BENCH xen420: dom0 ready $(uptime_s) s after its kernel started"
# A test knob (run.sh, BLKBACKD_E2E_INJECT=dom0-crash, given to the first
# boot only): dom0 dies as Debian 13's kernel now and then does in early
# boot here, so that the host's retry is exercised.
if injected dom0-crash; then
	echo "e2e: crashing dom0 on purpose (BLKBACKD_E2E_INJECT=dom0-crash)"
	sync
	echo c >/proc/sysrq-trigger
fi
if install_blkbackd; then
	binaries_run
fi
if [ -n "$DAEMON_CMD" ] && start_beside_blkback; then
	guest_two_backends
	daemon_alive after-xen420-guest
	if [ "$(daemon_image_fds)" -eq 0 ]; then
		result PASS daemon-no-image-fds
	else
		result FAIL daemon-no-image-fds "$(daemon_resources)"
	fi
	EXPECTED_REFUSAL="$VHD_IMG is a VHD image;" stop_blkbackd
fi
if lsmod | grep -q '^xen_blkback'; then
	result PASS xen-blkback-still-loaded
else
	result FAIL xen-blkback-still-loaded
fi
echo "----- blkbackd log (last 40 lines)"
tail -n 40 "$DAEMON_LOG"
echo "E2E-SUMMARY: $npass passed, $nfail failed, $nskip skipped"

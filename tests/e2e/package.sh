# shellcheck shell=bash
# The package's cycle under real Xen (issue 30, part package), sourced by
# dom0-test.sh, which runs guest_package last in the Debian 12 boot, with
# no daemon of its own running:
#
# 1. the host as before blkbackd: its package purged if an earlier part
#    installed it, no blacklist, xen-blkback loaded by name; a PV guest on
#    a phy: disk (a loop device made here) served by xen-blkback;
# 2. dpkg -i: it succeeds, says how to take backend/vbd over and that
#    xen-blkback is loaded, and changes nothing (no blacklist, xen-blkback
#    still loaded, blkbackd.service not enabled);
# 3. blkbackd-takeover on: blacklist written, xen-blkback unloaded, the
#    unit enabled; the daemon started with the unit's command line serves
#    a script=blkbackd guest, and while that guest runs `dpkg -r` is
#    refused, naming it and the override, the package staying installed;
# 4. the guest shut down and the daemon stopped, dpkg -r: no blacklist,
#    xen-blkback loaded again, and a phy: guest served by it;
# 5. dpkg -P: /etc/blkbackd.conf gone, and a phy: guest served by
#    xen-blkback once more.
# Each guest (role pattern) reads dom0's pattern and writes its own, which
# dom0 then finds in the image.
PKG_SNIPPET=/etc/modprobe.d/blkbackd.conf
PKG_WANTS=/etc/systemd/system/multi-user.target.wants/blkbackd.service
PKG_LOOP=

# Its files are installed, whatever the selection: a refused `dpkg -r`
# leaves it "deinstall ok installed", still installed and configured.
pkg_installed() {
	[ "$(dpkg-query -W -f '${db:Status-Status}' blkbackd 2>/dev/null)" = installed ]
}

# Which backend serves domain DOMID's xvda: xen-blkback binds it in sysfs.
kernel_serves() { # DOMID
	[ -e "/sys/bus/xen-backend/drivers/vbd/vbd-$1-$XVDA" ]
}

# A PV guest NAME on DISK-LINE (image IMAGE) writing pattern SEED; CHECK
# runs with NAME and the domain id while the guest idles after its I/O.
pkg_guest() { # NAME DISK-LINE IMAGE SEED CHECK
	local g=$1 domid
	guest_config "$g" "$2" "e2e_role=pattern e2e_verify=32:8:21 e2e_write=40:16:$4"
	start_guest "$g" || return 1
	domid=$(domid_of "$g")
	if wait_console "$g" E2E-DONE 240; then
		"$5" "$g" "$domid"
		shutdown_guest "$g"
	else
		timeout 60 xl destroy "$g" >/dev/null 2>&1
	fi
	collect_guest_results "$g"
	backend_gone "$domid"
	verify_pattern_image "$g" "$3" "$4"
}

pkg_on_kernel() { # NAME DOMID
	if kernel_serves "$2"; then
		result PASS "$1/served-by-xen-blkback"
	else
		result FAIL "$1/served-by-xen-blkback" "$(ls /sys/bus/xen-backend/drivers/vbd 2>&1 | tr '\n' ' ')"
	fi
}

pkg_phy_guest() { # NAME SEED
	pkg_guest "$1" "phy:$PKG_LOOP,xvda,w" "$IMG/pkg-phy.img" "$2" pkg_on_kernel
}

# While the blkbackd guest runs: blkbackd serves it, and removal is refused.
pkg_refuses_removal() { # NAME DOMID
	local out rc=0
	if blkbackctl list | grep -q " $1 " && ! kernel_serves "$2"; then
		result PASS "$1/served-by-blkbackd"
	else
		result FAIL "$1/served-by-blkbackd" "$(blkbackctl list 2>&1 | tr '\n' ' ')"
	fi
	out=$(dpkg -r blkbackd </dev/null 2>&1) || rc=$?
	echo "$out" | sed 's/^/e2e: package: dpkg -r under a guest: /'
	if [ $rc -ne 0 ] && pkg_installed && echo "$out" | grep -q " $1 " &&
		echo "$out" | grep -q BLKBACKD_FORCE_REMOVE=1; then
		result PASS package/removal-refused-under-guest
	else
		result FAIL package/removal-refused-under-guest "exit $rc: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
	fi
}

# The host as it was before blkbackd, and a phy: guest on xen-blkback.
pkg_before() {
	local out
	if pkg_installed; then
		out=$(BLKBACKD_FORCE_REMOVE=1 dpkg --purge blkbackd </dev/null 2>&1) ||
			echo "$out" | sed 's/^/e2e: package: purging the earlier install: /'
	fi
	rm -f "$PKG_SNIPPET" # the cached root's (build-dom0.sh)
	modprobe -r xen-blkback 2>/dev/null
	check package/xen-blkback-loads-before modprobe xen-blkback
	truncate -s 64M "$IMG/pkg-phy.img" "$IMG/pkg-bb.img"
	write_pattern_a "$IMG/pkg-phy.img" && write_pattern_a "$IMG/pkg-bb.img" ||
		result FAIL package/images
	PKG_LOOP=$(losetup -f --show "$IMG/pkg-phy.img") || {
		result FAIL package/loop-device
		return 1
	}
	pkg_phy_guest e2e-pkg-before 30
}

pkg_install() {
	local deb out rc=0
	deb=$(ls "$E"/debs/blkbackd_*.deb 2>/dev/null | head -n 1)
	out=$(dpkg -i "$deb" </dev/null 2>&1) || rc=$?
	echo "$out" | sed 's/^/e2e: package: dpkg -i: /'
	[ $rc -eq 0 ] && pkg_installed && result PASS package/installed ||
		result FAIL package/installed "exit $rc: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
	echo "$out" | grep -q "blkbackd-takeover on" &&
		echo "$out" | grep -q "xen-blkback is loaded" &&
		result PASS package/install-says-what-to-do ||
		result FAIL package/install-says-what-to-do
	[ ! -e "$PKG_SNIPPET" ] && [ -d /sys/module/xen_blkback ] &&
		[ ! -e "$PKG_WANTS" ] &&
		result PASS package/install-changes-nothing ||
		result FAIL package/install-changes-nothing "blacklist: $(ls "$PKG_SNIPPET" 2>&1), xen_blkback: $(ls -d /sys/module/xen_blkback 2>&1), enabled: $(ls "$PKG_WANTS" 2>&1)"
}

# The operator's step, then the daemon as the unit starts it, and a guest.
pkg_use() {
	local out rc=0 cmd
	out=$(blkbackd-takeover on 2>&1) || rc=$?
	echo "$out" | sed 's/^/e2e: package: blkbackd-takeover on: /'
	grep -qx 'install xen-blkback /bin/false' "$PKG_SNIPPET" 2>/dev/null &&
		[ ! -d /sys/module/xen_blkback ] && [ -L "$PKG_WANTS" ] && [ $rc -eq 0 ] &&
		result PASS package/takeover-on ||
		result FAIL package/takeover-on "exit $rc: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	cmd=$(sed -n 's/^ExecStart=[-@+!:]*//p' /lib/systemd/system/blkbackd.service)
	launch_daemon "$cmd" "$R/blkbackd-package.log"
	if ! wait_until 30 "grep -q 'serving ' '$R/blkbackd-package.log'"; then
		result FAIL package/blkbackd-started "$(tail -n 5 "$R/blkbackd-package.log" | tr '\n' ' ')"
		return 1
	fi
	result PASS package/blkbackd-started
	pkg_guest e2e-pkg-bb "vdev=xvda,access=rw,script=blkbackd,target=$IMG/pkg-bb.img" \
		"$IMG/pkg-bb.img" 31 pkg_refuses_removal
	kill -TERM "$DPID"
	wait_until 60 "! kill -0 $DPID 2>/dev/null" ||
		result FAIL package/blkbackd-stopped "still running after 60 s"
}

pkg_remove() { # remove|purge
	local out rc=0
	out=$(dpkg "--$1" blkbackd </dev/null 2>&1) || rc=$?
	echo "$out" | sed "s/^/e2e: package: dpkg --$1: /"
	[ $rc -eq 0 ] && ! pkg_installed && result PASS "package/$1" ||
		result FAIL "package/$1" "exit $rc: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
	[ ! -e "$PKG_SNIPPET" ] && [ -d /sys/module/xen_blkback ] &&
		result PASS "package/$1-restores-xen-blkback" ||
		result FAIL "package/$1-restores-xen-blkback" "blacklist: $(ls "$PKG_SNIPPET" 2>&1), xen_blkback: $(ls -d /sys/module/xen_blkback 2>&1)"
}

guest_package() {
	if pkg_before; then
		pkg_install
		pkg_use
		pkg_remove remove
		pkg_phy_guest e2e-pkg-removed 32
		pkg_remove purge
		[ ! -e /etc/blkbackd.conf ] && result PASS package/purge-removes-conffile ||
			result FAIL package/purge-removes-conffile
		pkg_phy_guest e2e-pkg-purged 33
	fi
	[ -z "$PKG_LOOP" ] || losetup -d "$PKG_LOOP"
}

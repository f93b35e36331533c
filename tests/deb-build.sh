#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the Debian packages from a copy of the source tree with
# `dpkg-buildpackage -us -uc -b` (tests/build-debs.sh, into
# $top_builddir/debs, where `make check-xen` takes the daemon's package
# from; a tree already built there is not built again), check what each
# package holds (the files an operator expects, the conffiles, no
# blacklist of xen-blkback, nothing enabled or started on installation,
# the pre-removal check before the daemon's stop, the package installed,
# removed and purged in a fake root, and none of the simulator's stand-in
# Xen libraries in the daemon's package or on the library path), and run
# lintian, which must report no error or warning. Run by `make check-deb`
# (about 30 s on two cores when it builds: it builds everything again),
# not by `make check`.
. "$top_srcdir/tests/lib.sh"

[ -d "$top_srcdir/debian" ] || skip "no debian/ in $top_srcdir (a dist tarball)"
command -v lintian >/dev/null ||
	skip "no lintian (apt-get install dpkg-dev debhelper lintian git)"

out=$top_builddir/debs
rc=0
daemon_deb=$(sh "$top_srcdir/tests/build-debs.sh" "$top_srcdir" "$out") ||
	rc=$?
[ $rc -ne 77 ] || skip "cannot build packages here (see above)"
[ $rc -eq 0 ] || fail "dpkg-buildpackage failed"
version=$(dpkg-parsechangelog -l "$top_srcdir/debian/changelog" -S Version)
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
sim_deb=$out/blkbackd-sim_${version}_$arch.deb
for deb in "$daemon_deb" "$sim_deb"; do
	[ -f "$deb" ] || fail "no $deb"
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/blkbackd-deb.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# contents DEB: "MODE PATH" per file
contents() {
	dpkg-deb -c "$1" | awk '{ sub(/^\./, "", $6); print $1, $6 }'
}
contents "$daemon_deb" >"$tmp/daemon.list"
contents "$sim_deb" >"$tmp/sim.list"

# expect LIST MODE PATH
expect() {
	grep -qx -- "$2 $3" "$1" || fail_later "$(basename "$1" .list) lacks $2 $3"
}
d=$tmp/daemon.list
expect "$d" -rwxr-xr-x /usr/sbin/blkbackd
expect "$d" -rwxr-xr-x /usr/sbin/blkbackctl
expect "$d" -rwxr-xr-x /usr/sbin/blkbackd-takeover
expect "$d" -rw-r--r-- /usr/share/man/man8/blkbackd-takeover.8.gz
expect "$d" -rw-r--r-- /usr/share/man/man8/blkbackctl.8.gz
expect "$d" -rw-r--r-- /usr/share/bash-completion/completions/blkbackctl
expect "$d" -rwxr-xr-x /etc/xen/scripts/blkbackd
expect "$d" -rw-r--r-- /lib/systemd/system/blkbackd.service
expect "$d" -rw-r--r-- /lib/systemd/system/blkbackd-metrics.socket
expect "$d" -rw-r--r-- /lib/systemd/system/blkbackd-metrics@.service
expect "$d" -rw-r--r-- /etc/blkbackd.conf
expect "$d" -rw-r--r-- /usr/share/man/man8/blkbackd.8.gz
expect "$d" -rw-r--r-- /usr/share/man/man8/blkbackd-hotplug.8.gz
expect "$d" -rw-r--r-- /usr/share/man/man5/blkbackd.conf.5.gz
expect "$d" -rw-r--r-- /usr/share/doc/blkbackd/copyright
s=$tmp/sim.list
expect "$s" -rwxr-xr-x /usr/bin/blkback-bench
expect "$s" -rwxr-xr-x /usr/libexec/blkbackd/xensim-host
expect "$s" -rwxr-xr-x /usr/libexec/blkbackd/ceph-cluster
expect "$s" -rw-r--r-- /usr/share/man/man1/blkback-bench.1.gz
grep -q '/blkbackd/xensim/libxengnttab\.so\.1' "$s" ||
	fail_later "blkbackd-sim lacks the simulator's libxengnttab"

# A production host gets no stand-in Xen library, and nothing the simulator
# ships lands where the dynamic linker looks.
grep -q 'libxen' "$d" && fail_later "blkbackd ships a libxen* library"
# Installing changes nothing about the host's disks: no blacklist of
# xen-blkback (blkbackd-takeover on writes one when asked).
grep -q ' /etc/modprobe.d/' "$d" && fail_later "blkbackd ships a modprobe.d file"
grep -E ' /(usr/)?lib/[^/]*/[^/]*\.so' "$s" &&
	fail_later "blkbackd-sim puts a library on the default library path"

# The unit, the conffiles and the maintainer scripts.
dpkg-deb -e "$daemon_deb" "$tmp/ctl"
for f in /etc/blkbackd.conf /etc/xen/scripts/blkbackd; do
	grep -qx "$f" "$tmp/ctl/conffiles" || fail_later "$f is not a conffile"
done
# Neither the daemon nor the HTTP metrics endpoint is enabled on a new
# installation: postinst re-enables each only where it was
# (dh_installsystemd --no-enable); the daemon's start there is a no-op for
# a disabled unit (deb-systemd-invoke), the socket is not even started.
for unit in blkbackd.service blkbackd-metrics.socket; do
	grep -q "debian-installed '$unit'" "$tmp/ctl/postinst" ||
		fail_later "postinst enables $unit on a new installation"
done
grep -q "deb-systemd-invoke.*blkbackd-metrics" "$tmp/ctl/postinst" &&
	fail_later "postinst starts blkbackd-metrics.socket"
grep -q "blkbackd-takeover on" "$tmp/ctl/postinst" ||
	fail_later "postinst does not tell how to take backend/vbd over"
# prerm refuses a removal under guests before debhelper's part stops the
# daemon; postrm removes the blacklist.
refuse=$(grep -n 'blkbackd-takeover guests' "$tmp/ctl/prerm" | cut -d: -f1)
stop=$(grep -n 'deb-systemd-invoke stop' "$tmp/ctl/prerm" | cut -d: -f1)
[ -n "$refuse" ] && [ -n "$stop" ] && [ "$refuse" -lt "$stop" ] ||
	fail_later "prerm does not check for guests before it stops the daemon"
grep -q 'modprobe.d/blkbackd.conf' "$tmp/ctl/postrm" ||
	fail_later "postrm does not remove the blacklist"
dpkg-deb -x "$daemon_deb" "$tmp/root"
grep -qx 'ExecStart=/usr/sbin/blkbackd' \
	"$tmp/root/lib/systemd/system/blkbackd.service" ||
	fail_later "the unit does not start /usr/sbin/blkbackd"
"$tmp/root/usr/sbin/blkbackd" --config "$tmp/root/etc/blkbackd.conf" \
	--check-config >/dev/null ||
	fail_later "the packaged daemon refuses the packaged /etc/blkbackd.conf"

# The whole package, debhelper's parts of its maintainer scripts included,
# installed, removed and purged with dpkg into an empty root ($DPKG_ROOT,
# scripts run chrootless; its dependencies are not there): installing
# writes no blacklist and enables nothing, removing deletes a blacklist
# blkbackd-takeover left, purging leaves nothing of the package in /etc.
fake=$tmp/fake
mkdir -p "$fake/var/lib/dpkg/info" "$fake/var/lib/dpkg/updates" \
	"$fake/etc/modprobe.d"
: >"$fake/var/lib/dpkg/status"
fdpkg() {
	dpkg --root="$fake" --force-script-chrootless --force-depends \
		--force-not-root "$@" >>"$tmp/fake-dpkg.log" 2>&1 ||
		fail_later "dpkg $* into a fake root failed: $(tail -n 5 "$tmp/fake-dpkg.log")"
}
fdpkg -i "$daemon_deb"
[ -e "$fake/etc/modprobe.d/blkbackd.conf" ] &&
	fail_later "installing wrote /etc/modprobe.d/blkbackd.conf"
find "$fake/etc" -path '*.wants/*' | grep -q . &&
	fail_later "installing enabled a unit: $(find "$fake/etc" -path '*.wants/*')"
printf 'blacklist xen-blkback\ninstall xen-blkback /bin/false\n' \
	>"$fake/etc/modprobe.d/blkbackd.conf"
fdpkg -r blkbackd
[ -e "$fake/etc/modprobe.d/blkbackd.conf" ] &&
	fail_later "removing left /etc/modprobe.d/blkbackd.conf"
[ -f "$fake/etc/blkbackd.conf" ] || fail_later "removing took the conffile"
fdpkg -P blkbackd
left=$(find "$fake/etc" -type f)
[ -z "$left" ] || fail_later "purging left $left"

# lintian, as the package would be checked for Debian.
if ! lintian --fail-on error,warning "$out"/blkbackd_"${version}"_"$arch".changes \
	>"$tmp/lintian.log" 2>&1; then
	cat "$tmp/lintian.log"
	fail_later "lintian reports errors or warnings"
fi

finish "blkbackd and blkbackd-sim $version built, contents and lintian OK"

#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the Debian packages from a copy of the source tree with
# `dpkg-buildpackage -us -uc -b` (tests/build-debs.sh, into
# $top_builddir/debs, where `make check-xen` takes the daemon's package
# from; a tree already built there is not built again), check what each
# package holds (the files an operator expects, the conffiles, the unit
# enabled through dh_installsystemd, and none of the simulator's stand-in
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
expect "$d" -rw-r--r-- /usr/share/man/man8/blkbackctl.8.gz
expect "$d" -rw-r--r-- /usr/share/bash-completion/completions/blkbackctl
expect "$d" -rwxr-xr-x /etc/xen/scripts/blkbackd
expect "$d" -rw-r--r-- /lib/systemd/system/blkbackd.service
expect "$d" -rw-r--r-- /lib/systemd/system/blkbackd-metrics.socket
expect "$d" -rw-r--r-- /lib/systemd/system/blkbackd-metrics@.service
expect "$d" -rw-r--r-- /etc/blkbackd.conf
expect "$d" -rw-r--r-- /etc/modprobe.d/blkbackd.conf
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
grep -E ' /(usr/)?lib/[^/]*/[^/]*\.so' "$s" &&
	fail_later "blkbackd-sim puts a library on the default library path"

# The unit, the conffiles and the maintainer scripts.
dpkg-deb -e "$daemon_deb" "$tmp/ctl"
for f in /etc/blkbackd.conf /etc/modprobe.d/blkbackd.conf \
	/etc/xen/scripts/blkbackd; do
	grep -qx "$f" "$tmp/ctl/conffiles" || fail_later "$f is not a conffile"
done
grep -q 'deb-systemd-helper.*blkbackd.service' "$tmp/ctl/postinst" ||
	fail_later "postinst does not enable blkbackd.service (dh_installsystemd)"
# The HTTP metrics endpoint is off until the operator enables it: postinst
# re-enables it only where it was (dh_installsystemd --no-enable), and
# starts nothing.
grep -q "debian-installed 'blkbackd-metrics.socket'" "$tmp/ctl/postinst" ||
	fail_later "postinst enables blkbackd-metrics.socket on a new installation"
grep -q "deb-systemd-invoke.*blkbackd-metrics" "$tmp/ctl/postinst" &&
	fail_later "postinst starts blkbackd-metrics.socket"
dpkg-deb -x "$daemon_deb" "$tmp/root"
grep -qx 'ExecStart=/usr/sbin/blkbackd' \
	"$tmp/root/lib/systemd/system/blkbackd.service" ||
	fail_later "the unit does not start /usr/sbin/blkbackd"
grep -qx 'install xen-blkback /bin/false' \
	"$tmp/root/etc/modprobe.d/blkbackd.conf" ||
	fail_later "the modprobe.d snippet does not keep xen-blkback out"
"$tmp/root/usr/sbin/blkbackd" --config "$tmp/root/etc/blkbackd.conf" \
	--check-config >/dev/null ||
	fail_later "the packaged daemon refuses the packaged /etc/blkbackd.conf"

# lintian, as the package would be checked for Debian.
if ! lintian --fail-on error,warning "$out"/blkbackd_"${version}"_"$arch".changes \
	>"$tmp/lintian.log" 2>&1; then
	cat "$tmp/lintian.log"
	fail_later "lintian reports errors or warnings"
fi

finish "blkbackd and blkbackd-sim $version built, contents and lintian OK"

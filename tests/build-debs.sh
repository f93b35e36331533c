#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages of the source tree as it is now, built once and kept:
#
#   build-debs.sh SRCDIR OUTDIR
#
# builds blkbackd_*.deb and blkbackd-sim_*.deb (with their .changes and
# .buildinfo) with `dpkg-buildpackage -us -uc -b` from a copy of the
# tracked and new files of SRCDIR (no build trees), into OUTDIR, unless
# OUTDIR already holds the packages of exactly these files (OUTDIR/tree,
# a checksum of every file's name and contents). Prints the daemon
# package's path on stdout, the build's log on failure on stderr.
#
# Shared by `make check-deb` (tests/deb-build.sh checks the packages) and
# `make check-xen` (tests/e2e/run.sh installs the daemon's in the real-Xen
# dom0s), so that CI builds them once; either one alone builds them when
# they are missing or stale. Exit: 0 built or reused, 1 the build failed,
# 77 a tool or build dependency is missing (the message says which).
set -eu

src=$1
out=$2

for tool in dpkg-buildpackage dh git; do
	command -v "$tool" >/dev/null || {
		echo "no $tool (apt-get install dpkg-dev debhelper git)" >&2
		exit 77
	}
done
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || {
	echo "$src is not a git checkout" >&2
	exit 77
}
dpkg-checkbuilddeps -P nocheck "$src/debian/control" >&2 || {
	echo "build dependencies missing (./autogen.sh --install-deps)" >&2
	exit 77
}

mkdir -p "$out"
# One build at a time in OUTDIR (check-deb and check-xen may overlap).
exec 8>"$out/.lock"
flock 8

# The tracked and new files, as they are now (a file deleted but not yet
# committed is left out); no build trees.
files() {
	git -C "$src" ls-files -co --exclude-standard -z |
		(cd "$src" && xargs -0 sh -c \
			'for f; do [ ! -f "$f" ] || printf "%s\0" "$f"; done' sh)
}
tree=$(files | (cd "$src" && xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
deb=$out/blkbackd_${version}_$arch.deb

if [ "$(cat "$out/tree" 2>/dev/null)" = "$tree" ] && [ -f "$deb" ] &&
	[ -f "$out/blkbackd-sim_${version}_$arch.deb" ]; then
	echo "build-debs: reusing the packages of this tree in $out" >&2
	echo "$deb"
	exit 0
fi

echo "build-debs: dpkg-buildpackage -b into $out (30 s on 2 cores here)" >&2
rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo \
	"$out/tree"
mkdir "$out/src"
files | (cd "$src" && xargs -0 cp --parents -t "$out/src")
# The test suite runs in `make check`; nocheck keeps it from running twice.
if ! (cd "$out/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
	dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1); then
	tail -n 40 "$out/build.log" >&2
	echo "build-debs: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
rm -rf "$out/src"
echo "$tree" >"$out/tree"
echo "$deb"

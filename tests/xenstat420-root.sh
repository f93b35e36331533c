#!/bin/sh
# xenstat420-root.sh DIR: unpack Debian 13's xentop and libxenstat 4.20,
# the headers of its libxen-dev and the libraries they load (Debian 13's
# libc6 among them) into DIR, for tests/xentop-real.sh. The packages come
# through apt-get from the Debian archive this machine's apt sources name,
# for the suite trixie, with a private apt state in DIR.apt (nothing of the
# machine's apt setup changes); they are unpacked, never installed.
# Exits 0 with DIR ready, else 1 after saying why.
set -eu
dir=$1
apt=$dir.apt
packages="libc6 libxenmisc4.20 libxencall1 libxendevicemodel1 libxenevtchn1
	libxenforeignmemory1 libxengnttab1 libxenhypfs1 libxenstore4
	libxentoollog1 libxentoolcore1 xen-utils-4.20 libxen-dev libext2fs2t64
	libncursesw6 libncurses6 libtinfo6 libyajl2 libzstd1 liblzma5 libuuid1
	zlib1g"

# The archive of this machine's own Debian sources (deb822 or one-line).
uri=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources \
	2>/dev/null | grep -v security | head -n 1)
[ -n "$uri" ] || uri=$(sed -n 's/^deb  *\(\[[^]]*\] *\)\{0,1\}\([^ ]*\) .*/\2/p' \
	/etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1)
if [ -z "$uri" ]; then
	echo "xenstat420-root.sh: no Debian archive in this machine's apt sources" >&2
	exit 1
fi
rm -rf "$dir" "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" \
	"$apt/parts"
echo "deb $uri trixie main" >"$apt/sources.list"
: >"$apt/status"
set -- -o Dir::Etc::sourcelist="$apt/sources.list" \
	-o Dir::Etc::sourceparts="$apt/parts" \
	-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
	-o Dir::State::status="$apt/status" -o APT::Sandbox::User=root
timeout 300 apt-get "$@" -q update >"$apt/update.log" 2>&1 || {
	echo "xenstat420-root.sh: apt-get update of trixie failed: $(tail -n 1 "$apt/update.log")" >&2
	exit 1
}
# shellcheck disable=SC2086 # the package list is words
(cd "$apt/debs" && timeout 300 apt-get "$@" -q download $packages) \
	>"$apt/download.log" 2>&1 || {
	echo "xenstat420-root.sh: apt-get download failed: $(tail -n 1 "$apt/download.log")" >&2
	exit 1
}
mkdir -p "$dir.new"
for deb in "$apt"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dir.new"
done
mv "$dir.new" "$dir"
rm -rf "$apt"
echo "xenstat420-root.sh: Debian 13's xentop and libxenstat in $dir"

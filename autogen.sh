#!/bin/sh
# Bootstrap and build blkbackd in ./build.
#
#   ./autogen.sh [--install-deps] [CONFIGURE-ARGS...]
#
# --install-deps (Debian 12): install every package needed to build and
# test first, with apt-get as root (through sudo when run as a user).  Then
# regenerate the build system, configure in ./build with --enable-werror
# plus CONFIGURE-ARGS, and build.  Safe to rerun.

set -eu

# Build and test dependencies, by Debian 12 package name.
DEPS="build-essential pkg-config autoconf automake libtool make
libxen-dev xenstore-utils xen-utils-4.17
liburing-dev libsystemd-dev libjson-c-dev libinih-dev libnbd-dev nbdkit qemu-utils qemu-system-common
librbd-dev ceph-mon ceph-osd ceph-common
util-linux diffutils procps e2fsprogs xfsprogs python3 python3-prometheus-client gdb qemu-system-x86
libnbd-bin fuse3 valgrind linux-perf"

# Root runs apt-get itself (a fresh container has no sudo); a user goes
# through sudo for apt-get alone and builds as itself.
install_deps() {
	as_root=
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null; then
			echo "autogen.sh: --install-deps runs apt-get: run it as" \
				"root, or install sudo" >&2
			exit 1
		fi
		as_root=sudo
	fi
	$as_root env DEBIAN_FRONTEND=noninteractive apt-get update
	# shellcheck disable=SC2086 # DEPS is a word list
	$as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends $DEPS
}

# After `sudo ./autogen.sh --install-deps`, build as the user who ran sudo,
# so that the generated files and ./build do not end up owned by root.
drop_root() {
	if [ "$(id -u)" -eq 0 ] && [ "${SUDO_UID:-0}" -ne 0 ]; then
		exec setpriv --reuid="$SUDO_UID" --regid="${SUDO_GID:-$SUDO_UID}" \
			--clear-groups -- /bin/sh "$0" "$@"
	fi
}

if [ "${1:-}" = "--install-deps" ]; then
	shift
	install_deps
	drop_root "$@"
fi

cd "$(dirname "$0")"
autoreconf -fi
mkdir -p build
cd build
../configure --enable-werror "$@"
make -j"$(nproc 2>/dev/null || echo 2)"

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# xensim-host: starts xenstored under the shim, xenstore-write/read and
# introduce/release work against it, xensim-stat reports, a binary linked
# against the real libxengnttab/libxenevtchn loads the fakes without a
# version warning, and stop leaves no process and no directory behind.
set -u

: "${top_builddir:=..}"
host=$top_builddir/tools/xensim/xensim-host
XENSTORED_BIN=${XENSTORED_BIN:-/usr/lib/xen-4.17/bin/xenstored}
export XENSTORED_BIN

if [ ! -x "$XENSTORED_BIN" ]; then
	echo "SKIP: no xenstored at '$XENSTORED_BIN' (apt-get install xen-utils-4.17)"
	exit 77
fi
if ! command -v xenstore-write >/dev/null; then
	echo "SKIP: no xenstore-write (apt-get install xenstore-utils)"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/xensim-host.XXXXXX") || exit 1
trap '"$host" stop "$work/host" >/dev/null 2>&1; "$host" stop "$work/bad" >/dev/null 2>&1; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

alive() {
	kill -0 "$1" 2>/dev/null &&
		! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null
}

"$host" start "$work/host" || fail "xensim-host start"
[ -r "$work/host/env" ] || fail "no env file"
. "$work/host/env"
[ "$XENSIM_DIR" = "$(cd "$work/host" && pwd)" ] || fail "XENSIM_DIR=$XENSIM_DIR"
[ -S "$XENSTORED_PATH" ] || fail "no xenstored socket at $XENSTORED_PATH"
[ -e "$XENSIM_LIBDIR/libxengnttab.so.1" ] || fail "XENSIM_LIBDIR=$XENSIM_LIBDIR"
pid=$(cat "$XENSIM_DIR/xenstored.pid")
alive "$pid" || fail "xenstored ($pid) not running"

"$host" start "$work/host" 2>/dev/null && fail "second start on a running host"

xenstore-write /hello world || fail "xenstore-write"
[ "$(xenstore-read /hello)" = world ] || fail "xenstore-read"
xenstore-exists /nothing/here && fail "xenstore-exists on a missing node"

out=$("$XENSIM_STAT" "$XENSIM_DIR" 0) || fail "xensim-stat dom0"
[ "$out" = "mapped_grants=0 bound_ports=0 dying=0" ] || fail "dom0 stat: $out"
"$XENSIM_STAT" "$XENSIM_DIR" 99 2>/dev/null && fail "stat of a domain that never existed"

"$top_builddir/tests/xensim-xsintro" || fail "introduce/release"
out=$("$XENSIM_STAT" "$XENSIM_DIR" 6) || fail "xensim-stat dom6"
[ "$out" = "mapped_grants=0 bound_ports=0 dying=1" ] || fail "dom6 stat: $out"

# The real libraries cannot open without Xen; the fakes must, silently.
"$top_builddir/tests/xensim-reallink" >/dev/null 2>&1 &&
	fail "the real libraries opened without Xen: the next check means nothing"
out=$(LD_LIBRARY_PATH=$XENSIM_LIBDIR "$top_builddir/tests/xensim-reallink" 2>&1) ||
	fail "real-linked binary with the fakes: $out"
case $out in
*"version information"* | *"not found"*) fail "loader complained: $out" ;;
esac
LD_LIBRARY_PATH=$XENSIM_LIBDIR ldd "$top_builddir/tests/xensim-reallink" |
	grep "libxengnttab.so.1 => $XENSIM_LIBDIR/" >/dev/null ||
	fail "the fake libxengnttab was not the one loaded"

"$host" stop "$work/host" || fail "xensim-host stop"
[ ! -e "$work/host" ] || fail "stop left $work/host"
sleep 0.2
alive "$pid" && fail "xenstored ($pid) survived stop"
"$host" stop "$work/host" || fail "stop is not idempotent"

# A xenstored that cannot start gives a clear error, and stop cleans up.
XENSTORED_BIN=/bin/false "$host" start "$work/bad" 2>"$work/err" &&
	fail "start with a broken xenstored succeeded"
grep -q "xenstored" "$work/err" || fail "unclear error: $(cat "$work/err")"
"$host" stop "$work/bad" || fail "stop after a failed start"
[ ! -e "$work/bad" ] || fail "stop left $work/bad"

echo "xensim-host ok"
exit 0

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# xensim-host: starts xenstored under the shim, xenstore-write/read and
# introduce/release work against it, xensim-stat reports, a binary linked
# against the real libxengnttab/libxenevtchn loads the fakes without a
# version warning, and stop leaves no process and no directory behind.
. "$top_srcdir/tests/lib.sh"

# The build tree's xensim-host is the subject here, not a tool.
host=$XENSIM_HOST
[ -x "$host" ] || fail "xensim-host not built at $host"
requires_xenstored
export XENSTORED_BIN
requires xenstore-write xenstore-read xenstore-exists
scratch_dir
SIM_HOSTS="host bad"

"$host" start "$WORK/host" || fail "xensim-host start"
[ -r "$WORK/host/env" ] || fail "no env file"
. "$WORK/host/env"
[ "$XENSIM_DIR" = "$(cd "$WORK/host" && pwd)" ] || fail "XENSIM_DIR=$XENSIM_DIR"
[ -S "$XENSTORED_PATH" ] || fail "no xenstored socket at $XENSTORED_PATH"
[ -e "$XENSIM_LIBDIR/libxengnttab.so.1" ] || fail "XENSIM_LIBDIR=$XENSIM_LIBDIR"
pid=$(cat "$XENSIM_DIR/xenstored.pid")
pid_alive "$pid" || fail "xenstored ($pid) not running"

"$host" start "$WORK/host" 2>/dev/null && fail "second start on a running host"

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

"$host" stop "$WORK/host" || fail "xensim-host stop"
[ ! -e "$WORK/host" ] || fail "stop left $WORK/host"
sleep 0.2
pid_alive "$pid" && fail "xenstored ($pid) survived stop"
"$host" stop "$WORK/host" || fail "stop is not idempotent"

# A xenstored that cannot start gives a clear error, and stop cleans up.
XENSTORED_BIN=/bin/false "$host" start "$WORK/bad" 2>"$WORK/err" &&
	fail "start with a broken xenstored succeeded"
grep -q "xenstored" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"
"$host" stop "$WORK/bad" || fail "stop after a failed start"
[ ! -e "$WORK/bad" ] || fail "stop left $WORK/bad"

finish "xensim-host ok"

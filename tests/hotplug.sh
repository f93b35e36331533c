#!/bin/sh
# The xl hotplug script (tools/hotplug/blkbackd) against a real xenstored
# started by the simulator: "add" reports hotplug-status=connected, "remove"
# succeeds, and every failure exits non-zero and, where libxl would read it,
# leaves hotplug-error and hotplug-status=error behind.

. "$top_srcdir/tests/lib.sh"

script=$top_srcdir/tools/hotplug/blkbackd
host=$top_builddir/tools/xensim/xensim-host
[ -x "$host" ] || skip "$host is not built"

# Run the script with dash where available: it must not need bash.
shell='sh'
command -v dash >/dev/null 2>&1 && shell=dash

tmp=$(mktemp -d "${TMPDIR:-/tmp}/blkbackd-hotplug.XXXXXX") || exit 99
stop_host() {
	"$host" stop "$tmp/sim" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap stop_host EXIT
trap 'exit 1' INT TERM

if ! "$host" start "$tmp/sim" >"$tmp/host.log" 2>&1; then
	cat "$tmp/host.log" >&2
	hard_error "xensim-host start failed"
fi
# shellcheck disable=SC1091
. "$tmp/sim/env"
[ -n "${XENSTORED_PATH:-}" ] ||
	hard_error "$tmp/sim/env does not set XENSTORED_PATH"
export XENSTORED_PATH


# run_script XENBUS_PATH ARGS...: run the hotplug script as libxl does;
# sets and returns $rc, and leaves its stderr in $tmp/err.
run_script() {
	bus=$1
	shift
	if [ -n "$bus" ]; then
		XENBUS_PATH=$bus $shell "$script" "$@" 2>"$tmp/err"
	else
		(unset XENBUS_PATH; $shell "$script" "$@") 2>"$tmp/err"
	fi
	rc=$?
	return "$rc"
}

# expect_node PATH VALUE: xenstore holds VALUE at PATH.
expect_node() {
	got=$(xenstore-read "$1" 2>/dev/null) || got="(missing)"
	[ "$got" = "$2" ] || fail_later "$1 is '$got', expected '$2'"
}

expect_no_node() {
	if xenstore-exists "$1" 2>/dev/null; then
		fail_later "$1 exists, expected it absent"
	fi
}

# A backend directory as libxl leaves it when it runs the script: written
# by the toolstack, taken to InitWait (2) by blkbackd.
make_backend() {
	xenstore-write "$1/frontend-id" 5 "$1/params" /srv/xen/vm1.img \
		"$1/script" /etc/xen/scripts/blkbackd "$1/online" 1 \
		"$1/state" 2 || exit 99
}

# XENBUS_PATH is relative, as libxl passes it: xenstored resolves it
# against the caller's domain (/local/domain/0).
be=backend/vbd/5/51712
make_backend "$be"

run_script "$be" add
[ "$rc" -eq 0 ] || { cat "$tmp/err" >&2; fail_later "add exited $rc"; }
expect_node "/local/domain/0/$be/hotplug-status" connected
expect_no_node "$be/hotplug-error"

run_script "$be" remove
[ "$rc" -eq 0 ] || { cat "$tmp/err" >&2; fail_later "remove exited $rc"; }

run_script "" add
[ "$rc" -ne 0 ] || fail_later "add without XENBUS_PATH exited 0"
grep -q XENBUS_PATH "$tmp/err" || fail_later "no message naming XENBUS_PATH"

be2=backend/vbd/5/51728
make_backend "$be2"
run_script "$be2" frobnicate
[ "$rc" -ne 0 ] || fail_later "unknown command exited 0"
expect_node "$be2/hotplug-status" error
err=$(xenstore-read "$be2/hotplug-error" 2>/dev/null)
case $err in
*frobnicate*) ;;
*) fail_later "hotplug-error is '$err', expected it to name the command" ;;
esac

# blkbackd refused the disk and left the reason in the error node: "add"
# hands it to libxl as hotplug-error, and fails.
be4=backend/vbd/5/51776
make_backend "$be4"
reason="blkbackd: xvda of domain 5 (vbd 5/51776): cannot open image"
xenstore-write "$be4/error" "$reason" || exit 99
run_script "$be4" add
[ "$rc" -ne 0 ] || fail_later "add of a refused disk exited 0"
expect_node "$be4/hotplug-status" error
expect_node "$be4/hotplug-error" "$reason"
grep -q "cannot open image" "$tmp/err" || fail_later "the reason is not on stderr"

# A device the toolstack already removed: fail, and create nothing.
gone=backend/vbd/5/51744
run_script "$gone" add
[ "$rc" -ne 0 ] || fail_later "add for a missing backend directory exited 0"
expect_no_node "$gone"

# xenstored unreachable: xenstore-write fails, so must the script.
be3=backend/vbd/5/51760
make_backend "$be3"
(XENSTORED_PATH=$tmp/no-such-socket; run_script "$be3" add)
rc=$?
[ "$rc" -ne 0 ] || fail_later "add with xenstored unreachable exited 0"
expect_no_node "$be3/hotplug-status"

finish "hotplug script OK ($shell, real xenstored)"

# Shared helpers for the integration tests (sourced, POSIX sh).
#
# Each test gets its own simulated host (the real xenstored under the
# xensim shim) in a mktemp directory, runs the real daemon binary from the
# build tree against it, and tears everything down from an EXIT trap. Set
# KEEP=1 to keep the directory for inspection.

set -u

T=$(basename "$0" .sh)
: "${top_builddir:?run through make check (top_builddir unset)}"
: "${top_srcdir:?run through make check (top_srcdir unset)}"

XS_TOOLS=$top_builddir/tools/xensim
TOOLSTACK=$XS_TOOLS/xensim-toolstack
BLKFRONT=$XS_TOOLS/xensim-blkfront
BLKBACKD=${BLKBACKD:-$top_builddir/blkbackd/blkbackd}
HOTPLUG=$top_srcdir/tools/hotplug/blkbackd
CACHESTAT=$top_builddir/tests/it-cachestat

WORK=
DAEMON_PID=
BG_PIDS=
HOST_UP=

note() { printf '%s: %s\n' "$T" "$*"; }

skip() {
	printf 'SKIP: %s: %s\n' "$T" "$*"
	exit 77
}

dump_logs() {
	[ -n "$WORK" ] || return 0
	for f in "$WORK"/*.log "$WORK"/*.out "$WORK"/*.err; do
		[ -s "$f" ] || continue
		printf -- '--- %s (last 30 lines)\n' "$f"
		tail -n 30 "$f"
	done
}

fail() {
	printf 'FAIL: %s: %s\n' "$T" "$*" >&2
	dump_logs >&2
	exit 1
}

# A tool of the simulated hypervisor: a build-tree program, else a script.
hv_tool() {
	for t in "$XS_TOOLS/$1" "$top_srcdir/tools/xensim/$1"; do
		if [ -x "$t" ]; then
			echo "$t"
			return 0
		fi
	done
	return 1
}

cleanup() {
	rc=$?
	trap - EXIT
	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null
	done
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	[ -n "$HOST_UP" ] && "$XENSIM_HOST" stop "$WORK/host" >/dev/null 2>&1
	if [ -n "${KEEP:-}" ]; then
		note "kept $WORK"
	elif [ -n "$WORK" ]; then
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# Start a simulated host; skip when a piece this machine lacks is missing.
xensim_setup() {
	[ -x "${XENSTORED_BIN:-}" ] ||
		skip "no xenstored (install xen-utils-4.17)"
	XENSIM_HOST=$(hv_tool xensim-host) || skip "xensim-host not built"
	XENSIM_STAT=$(hv_tool xensim-stat) || skip "xensim-stat not built"
	[ -x "$TOOLSTACK" ] && [ -x "$BLKFRONT" ] ||
		fail "xensim guest tools not built in $XS_TOOLS"
	[ -x "$BLKBACKD" ] || skip "daemon not built at $BLKBACKD"
	command -v xenstore-read >/dev/null ||
		skip "no xenstore-read (install xenstore-utils)"
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/blkbackd-$T.XXXXXX") ||
		fail "mktemp failed"
	trap cleanup EXIT
	trap 'exit 1' INT TERM HUP
	XENSTORED_BIN=$XENSTORED_BIN "$XENSIM_HOST" start "$WORK/host" \
		>"$WORK/host.log" 2>&1 || fail "xensim-host start failed"
	HOST_UP=1
	# shellcheck disable=SC1091
	. "$WORK/host/env" || fail "no $WORK/host/env"
	export XENSIM_DIR XENSTORED_PATH XENSIM_LIBDIR
	if [ -x "$HOTPLUG" ]; then
		XENSIM_HOTPLUG=$HOTPLUG
		export XENSIM_HOTPLUG
		SCRIPT_OPT=
	else
		SCRIPT_OPT=--no-script
	fi
}

# Start blkbackd with extra options; its stderr goes to blkbackd.log.
start_daemon() {
	LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$BLKBACKD" --log-level debug "$@" 2>>"$WORK/blkbackd.log" &
	DAEMON_PID=$!
}

daemon_alive() {
	kill -0 "$DAEMON_PID" 2>/dev/null
}

assert_daemon_alive() {
	daemon_alive || fail "blkbackd died"
}

be_path() { echo "/local/domain/0/backend/vbd/$1/${2:-51712}"; }
fe_path() { echo "/local/domain/$1/device/vbd/${2:-51712}"; }

xs_read() { xenstore-read "$1" 2>/dev/null; }

# assert_node PATH VALUE
assert_node() {
	got=$(xs_read "$1") || fail "missing node $1"
	[ "$got" = "$2" ] || fail "$1 is '$got', wanted '$2'"
}

# wait_node PATH VALUE SECONDS: poll every 100 ms.
wait_node() {
	n=$(($3 * 10))
	while [ "$n" -gt 0 ]; do
		[ "$(xs_read "$1")" = "$2" ] && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# wait_file_line FILE REGEX SECONDS
wait_file_line() {
	n=$(($3 * 10))
	while [ "$n" -gt 0 ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# guest DOMID SIZE [MEM_MB]: a domain (16 MiB of guest memory unless
# given) and its sparse image $WORK/dDOMID.img
guest() {
	truncate -s "$2" "$WORK/d$1.img" || fail "cannot make image"
	"$TOOLSTACK" create "$1" --mem-mb "${3:-16}" \
		>>"$WORK/toolstack.log" 2>&1 || fail "create dom $1 failed"
}

# attach DOMID [VDEV] [IMAGE]
attach() {
	# shellcheck disable=SC2086
	"$TOOLSTACK" attach "$1" "${3:-$WORK/d$1.img}" "${2:-xvda}" \
		$SCRIPT_OPT >>"$WORK/toolstack.log" 2>&1 ||
		fail "attach dom $1 ${2:-xvda} failed"
}

# detach DOMID [VDEV] [extra toolstack options]
detach() {
	d=$1
	v=${2:-xvda}
	shift
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086
	"$TOOLSTACK" detach "$d" "$v" $SCRIPT_OPT "$@" \
		>>"$WORK/toolstack.log" 2>&1 || fail "detach dom $d $v failed"
}

# blkfront DOMID ARGS...: a run that must succeed; output in front-D.out
blkfront() {
	d=$1
	shift
	"$BLKFRONT" --domid "$d" "$@" >"$WORK/front-$d.out" 2>&1 || {
		cat "$WORK/front-$d.out" >&2
		fail "xensim-blkfront on dom $d failed: $*"
	}
	cat "$WORK/front-$d.out"
}

# hold_start DOMID ARGS...: a blkfront in the background whose stdin is
# fd 3 of this shell (write a line to go on, close it to end).
hold_start() {
	d=$1
	shift
	rm -f "$WORK/in-$d"
	mkfifo "$WORK/in-$d" || fail "mkfifo"
	# Emptied here, not by the child's redirection, so hold_wait never
	# reads the previous run's output.
	: >"$WORK/front-$d.out"
	"$BLKFRONT" --domid "$d" "$@" <"$WORK/in-$d" >"$WORK/front-$d.out" \
		2>&1 &
	HOLD_PID=$!
	BG_PIDS="$BG_PIDS $HOLD_PID"
	exec 3>"$WORK/in-$d"
}

# hold_wait WORD SECONDS: wait for the held guest to print WORD, or fail.
hold_wait() {
	wait_file_line "$WORK/front-$d.out" "$1" "$2" || {
		cat "$WORK/front-$d.out" >&2
		fail "guest did not print $1 within $2 s"
	}
}

# hold_end: let the held guest go on and finish; it must succeed.
hold_end() {
	exec 3>&-
	wait "$HOLD_PID" || {
		cat "$WORK/front-$d.out" >&2
		fail "held guest failed"
	}
}

# connected_line DOMID: the frontend's "connected: ..." line of its last run
connected_line() { grep -m1 ': connected: ' "$WORK/front-$1.out"; }

# stat_of DOMID: "mapped_grants=N bound_ports=N dying=0|1"
stat_of() { "$XENSIM_STAT" "$XENSIM_DIR" "$1" 2>/dev/null; }

# mapped_of DOMID: how many of its grants the backend maps right now
mapped_of() { stat_of "$1" | sed -n 's/.*mapped_grants=\([0-9]*\).*/\1/p'; }

# wait_released DOMID SECONDS: no grant mapped, no port bound.
wait_released() {
	n=$(($2 * 10))
	while [ "$n" -gt 0 ]; do
		case $(stat_of "$1") in
		*mapped_grants=0\ bound_ports=0*) return 0 ;;
		esac
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

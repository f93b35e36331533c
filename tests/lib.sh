# Shared helpers for the shell tests (sourced, POSIX sh).
#
# Outcomes, as automake reads the exit status: fail exits 1 at once;
# fail_later reports and goes on, and finish then exits 1 or 0; skip and
# requires exit 77 (the test cannot run here, and says why); hard_error
# exits 99 (the test's own set-up broke).
#
# Tests that need a simulated host get their own (the real xenstored under
# the xensim shim) in a scratch directory, run the real daemon binary from
# the build tree against it, and tear everything down from an EXIT trap.
# Set KEEP=1 to keep the directory for inspection.

set -u

T=$(basename "$0" .sh)
: "${top_builddir:?run through make check (top_builddir unset)}"
: "${top_srcdir:?run through make check (top_srcdir unset)}"

XS_TOOLS=$top_builddir/tools/xensim
XENSIM_HOST=$XS_TOOLS/xensim-host
TOOLSTACK=$XS_TOOLS/xensim-toolstack
BLKFRONT=$XS_TOOLS/xensim-blkfront
BLKBACKD=${BLKBACKD:-$top_builddir/blkbackd/blkbackd}
HOTPLUG=$top_srcdir/tools/hotplug/blkbackd
CACHESTAT=$top_builddir/tests/it-cachestat

WORK=
DAEMON_PID=
BG_PIDS= # PID:START pairs, see track_pid
BG_FRONTS= # PID:DOMID pairs, see blkfront_bg
SIM_HOSTS=
SCRATCH_MOUNTS=
FAILED=0

# ---- outcomes ----

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

# fail_later MESSAGE: report a failed check and go on with the others.
fail_later() {
	printf 'FAIL: %s: %s\n' "$T" "$*" >&2
	FAILED=$((FAILED + 1))
}

# finish [MESSAGE]: exit 1 if a check failed (fail_later), else say
# MESSAGE and exit 0.
finish() {
	[ "$FAILED" -eq 0 ] || fail "$FAILED check(s) failed"
	[ $# -eq 0 ] || note "$*"
	exit 0
}

# hard_error MESSAGE: the test could not set itself up.
hard_error() {
	printf 'ERROR: %s: %s\n' "$T" "$*" >&2
	dump_logs >&2
	exit 99
}

# ---- what this machine must have ----

# The Debian package that installs TOOL, when a test names one it knows.
package_of() {
	case $1 in
	xenstore-*) echo xenstore-utils ;;
	python3) echo python3 ;;
	cmp | diff) echo diffutils ;;
	losetup | blockdev | mount | umount) echo util-linux ;;
	mkfs.xfs) echo xfsprogs ;;
	mkfs.ext4) echo e2fsprogs ;;
	gdb) echo gdb ;;
	nbdkit) echo nbdkit ;;
	qemu-img) echo qemu-utils ;;
	qemu-storage-daemon) echo qemu-system-common ;;
	nbdfuse) echo libnbd-bin ;;
	fusermount3) echo fuse3 ;;
	esac
}

# requires TOOL...: skip the test, saying what to install, unless every
# TOOL is on PATH.
requires() {
	for req_tool in "$@"; do
		command -v "$req_tool" >/dev/null 2>&1 && continue
		req_pkg=$(package_of "$req_tool")
		skip "no $req_tool${req_pkg:+ (install $req_pkg)}"
	done
}

# requires_prometheus_parser: PY, a python3 with the Prometheus project's
# parser of its text format (Debian's, when another python3 comes first).
requires_prometheus_parser() {
	PY=
	for py in python3 /usr/bin/python3; do
		"$py" -c "import prometheus_client" 2>/dev/null && PY=$py && break
	done
	[ -n "$PY" ] || skip "no prometheus_client in python3" \
		"(install python3-prometheus-client)"
}

# requires_xenstored: skip unless the xenstored configure found is there.
requires_xenstored() {
	[ -x "${XENSTORED_BIN:-}" ] ||
		skip "no xenstored (install xen-utils-4.17)"
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

# ---- the scratch directory and what the EXIT trap undoes ----

# pid_start PID: when the process PID started (field 22 of /proc/PID/stat),
# empty when there is none; with the pid, it names one process for good.
pid_start() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}

# track_pid PID...: the EXIT trap kills each PID if it still runs. Only if
# it is still the process it was now: pids wrap, and one reaped long ago
# may belong to another test's process by then.
track_pid() {
	for tracked_pid in "$@"; do
		BG_PIDS="$BG_PIDS $tracked_pid:$(pid_start "$tracked_pid")"
	done
}

cleanup() {
	rc=$?
	trap - EXIT
	for p in $BG_PIDS; do
		[ "$(pid_start "${p%%:*}")" = "${p#*:}" ] &&
			kill "${p%%:*}" 2>/dev/null
	done
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	valgrind_verdict || rc=1
	for h in $SIM_HOSTS; do
		"$XENSIM_HOST" stop "$WORK/$h" >/dev/null 2>&1
	done
	# After the daemon, which holds images open on them.
	for m in $SCRATCH_MOUNTS; do
		umount "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null ||
			umount -l "$m" 2>/dev/null
	done
	if [ -n "${KEEP:-}" ]; then
		note "kept $WORK"
	elif [ -n "$WORK" ]; then
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# scratch_dir: $WORK, a new directory that the EXIT trap removes together
# with everything started in it: the processes given to track_pid, the daemon, the
# simulated hosts named (relative to $WORK) in SIM_HOSTS, and the file
# systems mounted at the absolute paths in SCRATCH_MOUNTS (unmounted after
# the daemon stops).
scratch_dir() {
	[ -n "${WORK:-}" ] && return 0 # made already, with its cleanup
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/blkbackd-$T.XXXXXX") ||
		hard_error "mktemp failed"
	trap cleanup EXIT
	trap 'exit 1' INT TERM HUP
}

# pid_alive PID: PID runs and is not a zombie.
pid_alive() {
	pid_state=$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null) ||
		return 1
	[ -n "$pid_state" ] && [ "$pid_state" != Z ]
}

# ---- the simulated host ----

# Start a simulated host; skip when a piece this machine lacks is missing.
xensim_setup() {
	requires_xenstored
	XENSIM_HOST=$(hv_tool xensim-host) || skip "xensim-host not built"
	XENSIM_STAT=$(hv_tool xensim-stat) || skip "xensim-stat not built"
	[ -x "$TOOLSTACK" ] && [ -x "$BLKFRONT" ] ||
		fail "xensim guest tools not built in $XS_TOOLS"
	[ -x "$BLKBACKD" ] || skip "daemon not built at $BLKBACKD"
	requires xenstore-read
	scratch_dir
	XENSTORED_BIN=$XENSTORED_BIN "$XENSIM_HOST" start "$WORK/host" \
		>"$WORK/host.log" 2>&1 || fail "xensim-host start failed"
	SIM_HOSTS=host
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

# A simulated host's xenstored alone, for the C tests that talk to it
# (test-xenbus, test-vbd); skip when this machine has none.
xenstore_setup() {
	requires_xenstored
	XENSIM_HOST=$(hv_tool xensim-host) || skip "xensim-host not built"
	scratch_dir
	XENSTORED_BIN=$XENSTORED_BIN "$XENSIM_HOST" start "$WORK/host" \
		>"$WORK/host.log" 2>&1 || hard_error "xensim-host start failed"
	SIM_HOSTS=host
	# shellcheck disable=SC1091
	. "$WORK/host/env" || hard_error "no $WORK/host/env"
	export XENSIM_DIR XENSTORED_PATH
}

# ---- the daemon ----

# With BLKBACKD_VALGRIND=1 (make check-valgrind) every daemon runs under
# valgrind's memcheck, each into its own $WORK/valgrind.PID.log, which
# valgrind_verdict reads when the test ends. Valgrind before 3.23 never
# lets another thread run while one sleeps in io_uring_enter(2) (its bug
# 428364), so the daemon's workers then sleep in poll(2) instead
# (tests/vg-uring-wait.c).
valgrind_prefix() {
	VALGRIND_PREFIX=
	[ -n "${BLKBACKD_VALGRIND:-}" ] || return 0
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	vg_ver=$(valgrind --version | sed 's/^valgrind-//')
	vg_preload=
	if [ "$(printf '%s\n3.23\n' "$vg_ver" | sort -V | head -n1)" != 3.23 ]; then
		vg_preload=$top_builddir/tests/.libs/vg-uring-wait.so
		[ -f "$vg_preload" ] || hard_error "$vg_preload not built"
	fi
	VALGRIND_PREFIX="env ${vg_preload:+LD_PRELOAD=$vg_preload} valgrind -q
		--tool=memcheck --leak-check=full --show-leak-kinds=definite,possible
		--errors-for-leak-kinds=definite,possible --track-origins=yes
		--num-callers=40 --suppressions=$top_srcdir/tests/valgrind.supp
		--log-file=$WORK/valgrind.%p.log"
}

# valgrind_verdict: under BLKBACKD_VALGRIND, fail when memcheck reported
# an error or a leak in any daemon this test ran (a daemon the test killed
# with SIGKILL has no leak summary, but its errors are there).
valgrind_verdict() {
	[ -n "${BLKBACKD_VALGRIND:-}" ] && [ -n "$WORK" ] || return 0
	for vg_log in "$WORK"/valgrind.*.log; do
		[ -s "$vg_log" ] || continue
		printf 'FAIL: %s: memcheck found errors in the daemon:\n' "$T" >&2
		cat "$vg_log" >&2
		return 1
	done
	return 0
}

# Start blkbackd with extra options; its stderr goes to blkbackd.log.
start_daemon() {
	valgrind_prefix
	# shellcheck disable=SC2086 # the prefix is words, or nothing
	LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		$VALGRIND_PREFIX \
		"$BLKBACKD" --log-level debug --state-dir "$WORK/state" "$@" \
		2>>"$WORK/blkbackd.log" &
	DAEMON_PID=$!
	wait_control
}

# wait_control: the daemon has made its control socket (it does so before
# it serves its first device), so blkbackctl can reach it; returns early
# if the daemon died (the caller's next check says so).
wait_control() {
	wc_n=100
	while [ ! -S "$WORK/state/control" ] && daemon_alive &&
		[ "$wc_n" -gt 0 ]; do
		sleep 0.1
		wc_n=$((wc_n - 1))
	done
}

daemon_alive() {
	kill -0 "$DAEMON_PID" 2>/dev/null
}

# now_ms: the time in milliseconds, for timing what a test does.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_gone PID SECONDS: wait until PID has exited; false if it still runs.
wait_gone() {
	wg_n=$(($2 * 10))
	while pid_alive "$1" && [ "$wg_n" -gt 0 ]; do
		sleep 0.1
		wg_n=$((wg_n - 1))
	done
	! pid_alive "$1"
}

assert_daemon_alive() {
	daemon_alive || fail "blkbackd died"
}

# assert_still_serving DOMID [SIZE]: the daemon lives and serves a new
# guest DOMID (with a SIZE image, 4M unless given) verified I/O.
assert_still_serving() {
	assert_daemon_alive
	guest "$1" "${2:-4M}"
	attach "$1"
	blkfront "$1" --ops 300 --verify >/dev/null
	assert_daemon_alive
}

# stop_daemon [SIGNAL]: stop blkbackd (with SIGTERM unless told) and reap it.
stop_daemon() {
	kill -"${1:-TERM}" "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	# A socket left by a killed daemon must not pass for the next one's.
	rm -f "$WORK/state/control"
}

# restart_daemon ARGS...: stop blkbackd and start it with these options.
restart_daemon() {
	stop_daemon
	start_daemon "$@"
}

# stall_probe_start: probe the daemon's control socket every 50 ms for as
# long as the test's attack lasts (tests/stall-probe.py); stall_probe_stop
# MAX_MS then fails the test if any probe waited longer than MAX_MS (scaled
# for an instrumented daemon by stall_bound()), not counting the time the
# daemon's main thread and the probe waited for a CPU, or got no answer.
# STALL_WORST_MS holds the worst such wait, for the test's note.
stall_probe_start() {
	rm -f "$WORK/stall.out"
	python3 "$top_srcdir/tests/stall-probe.py" "$WORK/state/control" \
		"$WORK/stall.out" &
	STALL_PID=$!
	track_pid $STALL_PID
}

# An instrumented daemon is slower at everything: under AddressSanitizer
# (CI runs the whole suite so) a bound is 5 times MAX_MS, under valgrind
# 20 times. What the probe is for, a main loop that waits on a store or a
# client, stalls for seconds, and is still caught.
stall_bound() { # MAX_MS
	if [ -n "${VALGRIND_PREFIX:-}" ]; then
		echo $(($1 * 20))
	elif ldd "$BLKBACKD" 2>/dev/null | grep -q libasan; then
		echo $(($1 * 5))
	else
		echo "$1"
	fi
}

stall_probe_stop() {
	sp_max=$(stall_bound "$1")
	kill -TERM "$STALL_PID" 2>/dev/null
	# Not only wait: from a subshell the probe is not a child to wait for.
	wait "$STALL_PID" 2>/dev/null
	wait_file_line "$WORK/stall.out" worst_ms= 5 ||
		fail "the stall probe wrote nothing"
	STALL_WORST_MS=$(sed -n 's/.*worst_ms=\([0-9]*\).*/\1/p' "$WORK/stall.out")
	sp_failed=$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' "$WORK/stall.out")
	sp_probes=$(sed -n 's/.*probes=\([0-9]*\).*/\1/p' "$WORK/stall.out")
	[ "$sp_probes" -gt 0 ] || fail "the stall probe made no probe"
	[ "$sp_failed" -eq 0 ] ||
		fail "$sp_failed of $sp_probes control requests got no answer"
	# The time the daemon's main thread and the probe waited for a CPU is
	# the host's load, not the daemon's stall: the probe takes it out of
	# each wait (schedstat), or where it cannot, reports the host's
	# scheduling delay (noise_ms), which is added to the bound
	# (tests/stall-probe.py).
	sp_noise=$(sed -n 's/.*noise_ms=\([0-9]*\).*/\1/p' "$WORK/stall.out")
	sp_sched=$(sed -n 's/.*sched_ms=\([0-9]*\).*/\1/p' "$WORK/stall.out")
	sp_max=$((sp_max + ${sp_noise:-0}))
	[ "$STALL_WORST_MS" -le "$sp_max" ] ||
		fail "the main loop left a control client waiting" \
			"$STALL_WORST_MS ms beyond waiting for a CPU (at most" \
			"$sp_max; up to ${sp_sched:-0} ms of a probe's wait was" \
			"the host's load, and ${sp_noise:-0} ms allowed for it)"
}

# ---- xenstore ----

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

# wait_socket PATH WHAT: a server the test started has made its socket
# PATH within 5 s, or the test fails saying WHAT did not start.
wait_socket() {
	ws_n=50
	until [ -S "$1" ]; do
		ws_n=$((ws_n - 1))
		[ "$ws_n" -gt 0 ] || fail "$2 did not start"
		sleep 0.1
	done
}

# json FILE EXPRESSION: EXPRESSION (Python, over the JSON as d) printed.
json() { # FILE PYTHON-EXPRESSION-OVER-d: prints the value
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# guest DOMID SIZE [MEM_MB]: a domain (16 MiB of guest memory unless
# given) and its sparse image $WORK/dDOMID.img
guest() {
	truncate -s "$2" "$WORK/d$1.img" || fail "cannot make image"
	"$TOOLSTACK" create "$1" --mem-mb "${3:-16}" \
		>>"$WORK/toolstack.log" 2>&1 || fail "create dom $1 failed"
}

# attach DOMID [VDEV] [IMAGE] [toolstack options]
attach() {
	at_domid=$1
	at_vdev=${2:-xvda}
	at_image=${3:-$WORK/d$1.img}
	shift
	[ $# -gt 0 ] && shift
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086
	"$TOOLSTACK" attach "$at_domid" "$at_image" "$at_vdev" "$@" \
		$SCRIPT_OPT >>"$WORK/toolstack.log" 2>&1 ||
		fail "attach dom $at_domid $at_vdev failed"
}

# attach_must_fail DOMID IMAGE VDEV REGEX [toolstack options]: the attach
# must fail, and what the toolstack printed (the script's error, as xl
# shows it) must match REGEX.
attach_must_fail() {
	ar_out=$WORK/attach-$1-$3.out
	ar_regex=$4
	ar_args="$1 $2 $3"
	shift 4
	# shellcheck disable=SC2086
	if "$TOOLSTACK" attach $ar_args "$@" $SCRIPT_OPT >"$ar_out" 2>&1; then
		fail "attach $ar_args $* succeeded"
	fi
	grep -q -- "$ar_regex" "$ar_out" ||
		fail "attach $ar_args: the toolstack printed '$(cat "$ar_out")'"
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

# write_pattern FILE SECTORS SEED: what a verified workload with SEED
# leaves in the first SECTORS sectors of an image.
write_pattern() {
	"$BLKFRONT" --dump-pattern "$2" --seed "$3" >"$1" ||
		fail "dump-pattern failed"
}

# blkfront DOMID ARGS...: a run that must succeed, and read back what it
# wrote if it compared (expect_verified); output in front-D.out
blkfront() {
	d=$1
	shift
	"$BLKFRONT" --domid "$d" "$@" >"$WORK/front-$d.out" 2>&1 || {
		cat "$WORK/front-$d.out" >&2
		fail "xensim-blkfront on dom $d failed: $*"
	}
	verified_if_reported "$WORK/front-$d.out" "dom $d ($*)"
	cat "$WORK/front-$d.out"
}

# expect_facts FILE CHECK WHAT: the facts xensim-blkfront reported in
# FILE for CHECK (its "fact check=CHECK case=CASE KEY=VALUE..." lines,
# workload-check.h) are, in order and in number, the lines on stdin: each
# "CASE KEY=VALUE..." as a basic regular expression the whole fact must
# match. The simulator judges nothing; this is where a test says what the
# backend must have answered. WHAT names the run in a failure. Not at the
# end of a pipe: fail would only leave the pipe's subshell.
expect_facts() {
	ef_got="$WORK/facts.got"
	ef_want="$WORK/facts.want"
	sed -n "s/^fact check=$2 case=//p" "$1" >"$ef_got"
	cat >"$ef_want"
	ef_i=0
	while IFS= read -r ef_line; do
		ef_i=$((ef_i + 1))
		ef_fact=$(sed -n "${ef_i}p" "$ef_got")
		printf '%s\n' "$ef_fact" | grep -qx -- "$ef_line" ||
			fail "$3: $2 fact $ef_i is '$ef_fact', expected" \
				"'$ef_line'"
	done <"$ef_want"
	[ "$(wc -l <"$ef_got")" -eq "$ef_i" ] ||
		fail "$3: $2 reported $(wc -l <"$ef_got") facts, expected" \
			"$ef_i: $(cat "$ef_got")"
}

# verify_problem FILE MIN: what is wrong with the data xensim-blkfront's
# --verify runs in FILE read back (their "fact check=verify case=summary
# written=W compared=C mismatched=M first=S:B expected=E got=G" lines,
# workload.h), or nothing: every run must have compared at least MIN
# blocks read with what was written, and found none different.
verify_problem() {
	awk -v min="$2" '
	/^fact check=verify case=summary / {
		runs++
		split("", f)
		for (i = 4; i <= NF; i++) {
			n = index($i, "=")
			f[substr($i, 1, n - 1)] = substr($i, n + 1)
		}
		if (f["mismatched"] != "0") {
			split(f["first"], at, ":")
			printf "%s of %s blocks read back differ from what was" \
				" written (the first wrong byte: 512-byte sector %s" \
				" byte %s, expected %s, got %s)\n", f["mismatched"],
				f["compared"], at[1], at[2], f["expected"], f["got"]
			bad = 1
			exit
		}
		if (f["compared"] + 0 < min) {
			printf "only %s blocks read back and compared (%s written)," \
				" expected at least %s\n", f["compared"], f["written"],
				min
			bad = 1
			exit
		}
	}
	END {
		if (!bad && !runs)
			print "no verified run reported what it read back" \
				" (no \"fact check=verify\" line: not run with --verify?)"
	}' "$1"
}

# expect_verified FILE WHAT [MIN_COMPARED]: every --verify run of
# xensim-blkfront in FILE compared at least MIN_COMPARED (1 unless given)
# blocks it read back with what was written, and none differed. The
# simulator only counts; this is where a test judges the data. WHAT names
# the run in a failure. The helpers that run xensim-blkfront and wait for
# it (blkfront, blkfront_wait, wait_fronts, hold_end, the good guest) call
# it on every run that reported a comparison.
expect_verified() {
	ev_problem=$(verify_problem "$1" "${3:-1}")
	[ -z "$ev_problem" ] || fail "$2: $ev_problem"
}

# verified_if_reported FILE WHAT: expect_verified when a run in FILE
# reported a comparison (it was given --verify or --preexisting).
verified_if_reported() {
	grep -q '^fact check=verify ' "$1" || return 0
	expect_verified "$1" "$2"
}

# expect_check FILE CHECK WHAT PRINTER [ARGS...]: expect_facts for CHECK
# in FILE, with what PRINTER ARGS prints as the expectation.
expect_check() {
	ec_file=$1
	ec_check=$2
	ec_what=$3
	shift 3
	"$@" >"$WORK/facts.expected"
	expect_facts "$ec_file" "$ec_check" "$ec_what" <"$WORK/facts.expected"
}

# The expectations of the checks several tests run, as docs/security.md
# states them; each prints the facts a check must report, in order.

# probe_facts SECTOR: a ring that still serves: a page written at SECTOR
# and read back whole, every sector its pattern, nothing changed outside
# the segment.
probe_facts() {
	echo "probe-write status=OKAY"
	echo "probe-read status=OKAY"
	echo "probe-data sector=$1 sectors=8 mismatched=0 outside=0"
}

# bad_requests_facts DOMID: malformed requests answered EOPNOTSUPP for an
# operation not known or not offered, ERROR for the rest; a barrier is
# sent only when the backend does not offer barriers.
bad_requests_facts() {
	echo "unknown-op-99 status=EOPNOTSUPP"
	for kase in 12-segments 255-segments no-segments last-sect-8 \
		first-after-last read-ungranted write-ungranted; do
		echo "$kase status=ERROR"
	done
	[ "$(xs_read "$(be_path "$1")/feature-barrier")" = 1 ] ||
		echo "barrier-not-offered status=EOPNOTSUPP"
	probe_facts 16
}

# bad_indirect_facts DOMID: hostile indirect requests, then hostile
# discards when discard is offered, answered ERROR throughout.
bad_indirect_facts() {
	bi_be=$(be_path "$1")
	[ "$(xs_read "$bi_be/feature-max-indirect-segments")" -ge 4096 ] ||
		echo "more-than-offered status=ERROR"
	for kase in 4097-segments 65535-segments no-segments \
		page-not-granted page-gref-0 inner-flush inner-discard \
		inner-indirect past-end segment-ungranted segment-last-sect-8 \
		segment-first-after-last; do
		echo "$kase status=ERROR"
	done
	if [ "$(xs_read "$bi_be/feature-discard")" = 1 ]; then
		for kase in discard-past-end discard-crossing-end \
			discard-0-sectors discard-wrapping; do
			echo "$kase status=ERROR"
		done
	fi
	probe_facts 16
}

# past_end_facts SECTORS: on a disk of SECTORS sectors, every request
# crossing or beyond the end, or wrapping 2^64, answered ERROR; the last
# sector written and read back.
past_end_facts() {
	echo "disk sectors=$1"
	for kase in read-crossing-end write-crossing-end write-past-end \
		read-wrapping; do
		echo "$kase status=ERROR"
	done
	echo "write-last-sector status=OKAY"
	echo "read-last-sector status=OKAY"
	echo "last-sector-data sector=$(($1 - 1)) sectors=1 mismatched=0" \
		"outside=0"
	probe_facts 0
}

# full_11_facts: 11 whole pages written in one request at sector 24 and
# read back whole, then page by page: all OKAY, all 88 sectors the
# pattern.
full_11_facts() {
	echo "full-write status=OKAY"
	echo "full-read status=OKAY"
	echo "full-data sector=24 sectors=88 mismatched=0 outside=0"
	echo "page-reads requests=11 okay=11 sectors=88 mismatched=0"
}

# partial_facts: 30 sectors in 11 partial segments written at sector 101
# and read back as whole pages, and the reverse at 307: all OKAY, every
# sector the pattern, no byte written outside a segment.
partial_facts() {
	for kase in partial:101 whole:307; do
		echo "${kase%:*}-write status=OKAY"
		echo "${kase%:*}-read status=OKAY"
		echo "${kase%:*}-data sector=${kase#*:} sectors=30 mismatched=0" \
			"outside=0"
	done
}

# barrier_facts: 24 rounds of write, barrier, write (a read every third
# round) at sector 512 + 64 i, 1 + i % 4 pages: answered in that order,
# all OKAY (the barrier is offered, so never EOPNOTSUPP); the read after
# the barrier, or one made after the round, holds the last write's data.
barrier_facts() {
	echo "disk feature-barrier=1"
	i=0
	while [ $i -lt 24 ]; do
		echo "round-$i order=before,barrier,after status=OKAY,OKAY,OKAY"
		[ $((i % 3)) -eq 2 ] || echo "round-$i-read status=OKAY"
		echo "round-$i-data sector=$((512 + i * 64))" \
			"sectors=$(((1 + i % 4) * 8)) mismatched=0 outside=0"
		i=$((i + 1))
	done
}

# flush_data_facts: a FLUSH_DISKCACHE carrying 4 pages at sector 200,
# then a read of them: both OKAY, the data the pattern.
flush_data_facts() {
	echo "disk feature-flush-cache=1"
	echo "flush-with-data status=OKAY"
	echo "read status=OKAY"
	echo "read-data sector=200 sectors=32 mismatched=0 outside=0"
}

# discard_facts: the check discard: a 4 MiB range (8192 sectors, a whole
# number of granules) plus a guard on each side written, discarded in
# quarters (two with the secure flag, ignored without discard-secure),
# read back as zeros; the guards keep their pattern.
discard_facts() {
	cat <<'EOF'
write sectors=[0-9]* requests=\([0-9]*\) okay=\1
flush-written status=OKAY
discard-0 status=OKAY
discard-1-secure status=OKAY
discard-2 status=OKAY
discard-3-secure status=OKAY
flush-discarded status=OKAY
discarded sectors=8192 requests=\([0-9]*\) okay=\1 nonzero=0
guard-before sectors=[0-9]* requests=\([0-9]*\) okay=\1 mismatched=0
guard-after sectors=[0-9]* requests=\([0-9]*\) okay=\1 mismatched=0
EOF
	probe_facts 0
}

# readonly_facts INFO BACKEND-PATH: a read-only disk with info INFO: a
# write, a flush with data and (when offered) a barrier answered ERROR;
# a read answered OKAY with the data the image holds (--preexisting, the
# run's --seed).
readonly_facts() {
	echo "disk info=$1"
	echo "write status=ERROR"
	echo "flush-with-data status=ERROR"
	[ "$(xs_read "$2/feature-barrier")" = 1 ] &&
		echo "barrier-write status=ERROR"
	echo "read status=OKAY"
	echo "read-data sector=8 sectors=8 mismatched=0 outside=0"
}

# blkfront_bg DOMID ARGS...: a run in the background, output in
# front-DOMID.out; its pid is BG_PID, killed at exit if it still runs.
blkfront_bg() {
	bg_domid=$1
	shift
	# Emptied here, not by the child's redirection, so that nothing waiting
	# for a line of it reads the previous run's output.
	: >"$WORK/front-$bg_domid.out"
	"$BLKFRONT" --domid "$bg_domid" "$@" >"$WORK/front-$bg_domid.out" \
		2>&1 &
	BG_PID=$!
	track_pid $BG_PID
	BG_FRONTS="$BG_FRONTS $BG_PID:$bg_domid"
}

# blkfront_wait DOMID PID [WHAT]: that background run must succeed, or the
# test fails with WHAT; and it must have read back what it wrote if it
# compared (expect_verified).
blkfront_wait() {
	wait "$2" || {
		cat "$WORK/front-$1.out" >&2
		fail "${3:-xensim-blkfront on dom $1 failed}"
	}
	verified_if_reported "$WORK/front-$1.out" "dom $1"
}

# wait_fronts WHAT PID...: every background run must succeed, or the test
# fails with WHAT after showing all their output; those started by
# blkfront_bg must have read back what they wrote if they compared.
wait_fronts() {
	wf_what=$1
	shift
	for wf_pid in "$@"; do
		wait "$wf_pid" || {
			cat "$WORK"/front-*.out >&2
			fail "$wf_what"
		}
		for wf_front in $BG_FRONTS; do
			[ "${wf_front%%:*}" = "$wf_pid" ] || continue
			verified_if_reported "$WORK/front-${wf_front#*:}.out" \
				"dom ${wf_front#*:}"
		done
	done
}

# assert_verified DOMID...: expect_verified for each guest's last run.
assert_verified() {
	for av_d in "$@"; do
		expect_verified "$WORK/front-$av_d.out" "guest $av_d"
	done
}

# blkfront_refused DOMID ARGS...: a run the backend must refuse to connect:
# the frontend says "connect failed", and the backend is at Closing (or
# Closed, once the frontend closed too) with an error node.
blkfront_refused() {
	bad_domid=$1
	shift
	bad_out=$WORK/refused-$bad_domid.out
	bad_be=$(be_path "$bad_domid")
	"$BLKFRONT" --domid "$bad_domid" "$@" >"$bad_out" 2>&1 &&
		fail "dom $bad_domid was served with $*"
	grep -q "connect failed" "$bad_out" ||
		fail "dom $bad_domid with $*: unexpected failure:" \
			"$(cat "$bad_out")"
	bad_state=$(xs_read "$bad_be/state")
	case $bad_state in
	5 | 6) ;;
	*) fail "dom $bad_domid with $*: backend state '$bad_state'" ;;
	esac
	xs_read "$bad_be/error" >/dev/null ||
		fail "dom $bad_domid with $*: no error node"
}

# hold_start DOMID ARGS...: a blkfront in the background whose stdin is
# fd 3 of this shell (write a line to go on, close it to end).
hold_start() {
	HOLD_DOMID=$1
	shift
	rm -f "$WORK/in-$HOLD_DOMID"
	mkfifo "$WORK/in-$HOLD_DOMID" || fail "mkfifo"
	# Emptied here, not by the child's redirection, so hold_wait never
	# reads the previous run's output.
	: >"$WORK/front-$HOLD_DOMID.out"
	"$BLKFRONT" --domid "$HOLD_DOMID" "$@" <"$WORK/in-$HOLD_DOMID" \
		>"$WORK/front-$HOLD_DOMID.out" 2>&1 &
	HOLD_PID=$!
	track_pid $HOLD_PID
	exec 3>"$WORK/in-$HOLD_DOMID"
}

# hold_wait WORD SECONDS: wait for the held guest to print WORD, or fail.
hold_wait() {
	wait_file_line "$WORK/front-$HOLD_DOMID.out" "$1" "$2" || {
		cat "$WORK/front-$HOLD_DOMID.out" >&2
		fail "guest did not print $1 within $2 s"
	}
}

# hold_end: let the held guest go on and finish; it must succeed.
hold_end() {
	exec 3>&-
	blkfront_wait "$HOLD_DOMID" "$HOLD_PID" "held guest failed"
}

# good_guest_start DOMID: a well-behaved guest in the background, doing
# verified runs of 2 s back to back (reconnecting each time) until
# good_guest_stop; each run's outcome is a line of $WORK/good.status: ok
# when it ran and read back what it wrote (verify_problem), else failed.
good_guest_start() {
	GOOD_DOMID=$1
	: >"$WORK/good.status"
	(
		while [ ! -e "$WORK/stop-good" ]; do
			"$BLKFRONT" --domid "$GOOD_DOMID" --seconds 2 --depth 4 \
				--verify >"$WORK/good-run.out" 2>&1
			gg_rc=$?
			gg_problem=
			[ "$gg_rc" -ne 0 ] ||
				gg_problem=$(verify_problem "$WORK/good-run.out" 1)
			cat "$WORK/good-run.out" >>"$WORK/front-$GOOD_DOMID.out"
			if [ "$gg_rc" -eq 0 ] && [ -z "$gg_problem" ]; then
				echo ok >>"$WORK/good.status"
			else
				echo "failed${gg_problem:+: $gg_problem}" \
					>>"$WORK/good.status"
				break
			fi
		done
	) &
	GOOD_PID=$!
	track_pid $GOOD_PID
}

# assert_good_guest WHAT: the well-behaved guest has not failed so far.
assert_good_guest() {
	grep -q '^failed' "$WORK/good.status" &&
		fail "the well-behaved guest (dom $GOOD_DOMID) failed during" \
			"$1$(sed -n 's/^failed\(: .*\)/\1/p' "$WORK/good.status")"
	return 0
}

# good_guest_stop MIN_RUNS: let it finish its run; it must never have
# failed and must have completed at least MIN_RUNS runs (printed).
good_guest_stop() {
	: >"$WORK/stop-good"
	wait "$GOOD_PID"
	assert_good_guest "the test"
	GOOD_RUNS=$(grep -c '^ok$' "$WORK/good.status")
	[ "$GOOD_RUNS" -ge "$1" ] ||
		fail "the well-behaved guest completed only $GOOD_RUNS runs"
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

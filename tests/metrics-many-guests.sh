#!/bin/sh
# A scrape stays cheap with many guests: N idle guests (250 unless
# METRICS_GUESTS says otherwise), all connected to the daemon and held by
# one process (tests/idle-hold.c); `blkbackctl metrics` must answer in
# under 1 ms per guest (1 s for 1000, the target of issue 30), and its
# output must hold every disk's series and stay within 30 per disk. 250,
# not 1000, because the simulated handshakes of 1000 guests take minutes
# (200 took 11 s here, their scrape 77 ms; METRICS_GUESTS=1000 runs the
# target itself, given the time).
. "$top_srcdir/tests/lib.sh"
xensim_setup
N=${METRICS_GUESTS:-250}
HOLD=$top_builddir/tests/idle-hold
[ -x "$HOLD" ] || hard_error "$HOLD not built"
# Each guest's frontend holds a few descriptors in the one process.
# shellcheck disable=SC3045 # dash and bash both take -n
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null ||
	skip "cannot raise the open-file limit for $N guests"
start_daemon --log-level notice
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
mkdir "$WORK/idle" || hard_error "mkdir failed"

# The guests are held until the fifo's writer, fd 3, closes.
mkfifo "$WORK/hold.in" || hard_error "mkfifo failed"
exec 3<>"$WORK/hold.in"
t0=$(now_ms)
"$HOLD" "$N" 1 "$WORK/idle" <"$WORK/hold.in" >"$WORK/hold.out" 3>&- \
	2>"$WORK/hold.err" &
HOLD_PID=$!
track_pid $HOLD_PID
wait_file_line "$WORK/hold.out" ready 600 ||
	fail "$N idle guests did not connect: $(tail -n 3 "$WORK/hold.err")"
note "$N idle guests connected in $(($(now_ms) - t0)) ms"

best=
for _ in 1 2 3; do
	t=$(now_ms)
	$CTL metrics >"$WORK/m.prom" || fail "blkbackctl metrics failed"
	t=$(($(now_ms) - t))
	[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
done
limit=$((N * 1000 / 1000))
[ "$limit" -ge 100 ] || limit=100
note "a scrape of $N idle guests took $best ms (best of 3; limit $limit ms);" \
	"$(wc -l <"$WORK/m.prom") lines"
[ "$best" -lt "$limit" ] ||
	fail "a scrape of $N idle guests took $best ms, over $limit ms"
disks=$(grep -c '^blkbackd_requests_in_flight{' "$WORK/m.prom")
[ "$disks" -eq "$N" ] || fail "$disks disks in the metrics, not $N"
series=$(grep -c '^blkbackd_[a-z_]*{domid=' "$WORK/m.prom")
[ "$series" -le $((30 * N)) ] ||
	fail "$series series for $N disks, more than 30 a disk"

exec 3>&-
wait "$HOLD_PID" || fail "the idle guests did not close: $(cat "$WORK/hold.err")"
assert_daemon_alive
exit 0

#!/bin/sh
# Ring pages are paid from the grant mapping budget (--max-mapped-grants)
# and a device's queues x ring pages are capped (--max-ring-pages-per-disk,
# 128 unless told). Against --max-queues 64: a device offers 8 queues of
# 16-page rings, not 64, and a frontend asking for 64 queues is refused.
# Eight guests holding 8 queues of 16-page rings each map 1,024 ring
# pages, the whole budget; a ninth is refused with an error node and a
# journal line that name the budget and the option to raise, while the
# others map no more than the budget and the daemon's memory stays within
# a bound. Once they leave, their pages are paid back and the ninth
# connects. A smaller cap offers fewer queues first, then smaller rings.
. "$top_srcdir/tests/lib.sh"
xensim_setup
BUDGET=1024
start_daemon --max-queues 64 --max-mapped-grants $BUDGET

# rss_kib: the daemon's resident memory.
rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON_PID/status"; }

for d in 1 2 3 4 5 6 7 8; do
	guest $d 4M
	attach $d
done
guest 9 4M 64
attach 9
assert_node "$(be_path 1)/multi-queue-max-queues" 8
assert_node "$(be_path 1)/max-ring-page-order" 4
blkfront_refused 9 --queues 64 --ring-order 4 --persistent no --ops 10
rss_before=$(rss_kib)

# Eight guests hold their rings until the fifo's writer closes.
mkfifo "$WORK/hold" || fail "mkfifo"
pids=
for d in 1 2 3 4 5 6 7 8; do
	: >"$WORK/front-$d.out"
	"$BLKFRONT" --domid $d --queues 8 --ring-order 4 --persistent no \
		--hold <"$WORK/hold" >"$WORK/front-$d.out" 2>&1 &
	track_pid $!
	pids="$pids $!"
done
exec 3>"$WORK/hold"
for d in 1 2 3 4 5 6 7 8; do
	wait_file_line "$WORK/front-$d.out" CONNECTED 60 || {
		cat "$WORK/front-$d.out" >&2
		fail "guest $d did not connect 8 queues of 16-page rings"
	}
done

# mapped_all: the grants the daemon maps for guests 1 to 9 together.
mapped_all() {
	"$XENSIM_STAT" "$XENSIM_DIR" 1 2 3 4 5 6 7 8 9 2>/dev/null |
		sed -n 's/.*mapped_grants=\([0-9]*\).*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}
mapped=$(mapped_all)
[ "$mapped" -eq $BUDGET ] ||
	fail "8 guests x 8 queues x 16 pages: $mapped pages mapped, not $BUDGET"

# The ninth does not fit: refused, and told why.
blkfront_refused 9 --queues 8 --ring-order 4 --persistent no --ops 10
err=$(xs_read "$(be_path 9)/error")
case $err in
*max-mapped-grants*) ;;
*) fail "guest 9's error node does not name max-mapped-grants: $err" ;;
esac
grep -q "vbd 9/51712: .*grant mapping budget.*raise max-mapped-grants" \
	"$WORK/blkbackd.log" ||
	fail "no journal line names the budget and the option to raise"
mapped=$(mapped_all)
[ "$mapped" -le $BUDGET ] ||
	fail "$mapped pages mapped after guest 9 tried, over the budget of $BUDGET"

if [ -n "${BLKBACKD_VALGRIND:-}" ]; then
	note "resident memory not measured under valgrind"
else
	rss_after=$(rss_kib)
	grown=$((rss_after - rss_before))
	note "64 rings of 16 pages: the daemon's RSS grew by $grown KiB" \
		"($rss_before to $rss_after)"
	# A ring's slots, answers and journal: well under 256 KiB each.
	[ "$grown" -lt $((64 * 256)) ] ||
		fail "64 rings grew the daemon by $grown KiB"
fi

# They leave: their pages are paid back, and the ninth fits.
exec 3>&-
wait_fronts "a holding guest failed" $pids
n=100
while [ "$(mapped_all)" -gt 0 ]; do
	n=$((n - 1))
	[ $n -gt 0 ] || fail "rings still mapped after their guests left"
	sleep 0.1
done
"$TOOLSTACK" detach 9 xvda $SCRIPT_OPT >>"$WORK/toolstack.log" 2>&1
attach 9
blkfront 9 --queues 8 --ring-order 4 --persistent no --ops 300 \
	--verify >/dev/null

# A cap of 8 pages: one queue of an 8-page ring.
restart_daemon --max-queues 64 --max-ring-pages-per-disk 8
guest 10 4M
attach 10
assert_node "$(be_path 10)/multi-queue-max-queues" 1
assert_node "$(be_path 10)/max-ring-page-order" 3
blkfront_refused 10 --queues 1 --ring-order 4 --ops 10
assert_still_serving 11
exit 0

#!/bin/sh
# Multi-queue: with --workers 2 the backend offers two queues per device;
# frontends with 2 queues (and 4, against --max-queues 4) write
# queue-N/ring-ref and queue-N/event-channel, drive every queue from its
# own thread with verified data, and the daemon spreads the queues over
# its workers. One queue more than offered is refused.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon --workers 2

sectors=$((32 * 2048))
write_pattern "$WORK/expected" "$sectors" 8

guest 1 32M 64
attach 1
be=$(be_path 1)
fe=$(fe_path 1)
assert_node "$be/multi-queue-max-queues" 2
hold_start 1 --queues 2 --fill --bs 32768 --depth 16 --ops 4000 --verify \
	--seed 8 --hold
hold_wait CONNECTED 60
assert_node "$fe/multi-queue-num-queues" 2
for q in 0 1; do
	xs_read "$fe/queue-$q/event-channel" >/dev/null ||
		fail "no queue-$q/event-channel"
	xs_read "$fe/queue-$q/ring-ref0" >/dev/null ||
		xs_read "$fe/queue-$q/ring-ref" >/dev/null ||
		fail "no queue-$q ring reference"
done
xs_read "$fe/event-channel" >/dev/null &&
	fail "top-level event-channel written with 2 queues"
case $(stat_of 1) in
*bound_ports=2*) ;;
*) fail "backend did not bind both queues' ports: $(stat_of 1)" ;;
esac
hold_end
grep -q "(bs 32768, depth 16 x 2 queues" "$WORK/front-1.out" ||
	fail "the run did not use 2 queues at depth 16"
expect_verified "$WORK/front-1.out" "2 queues"
cmp "$WORK/expected" "$WORK/d1.img" ||
	fail "image written through 2 queues differs from the pattern"
# The daemon spreads a device's queues over its workers and its log says
# which worker got which queue ("queue N ... worker M"): two queues, two
# workers.
grep -i "queue [0-9]" "$WORK/blkbackd.log" >"$WORK/queues.txt"
workers=$(sed -n 's/.*queue [0-9][0-9]*.* worker \([0-9][0-9]*\).*/\1/p' \
	"$WORK/queues.txt" | sort -u | wc -l)
[ "$workers" -ge 2 ] || {
	cat "$WORK/queues.txt"
	fail "the daemon log does not show the 2 queues on 2 workers" \
		"(wanted a line per queue like 'queue 0 on worker 1')"
}
detach 1

# 4 queues against --max-queues 4, on the same 2 workers.
restart_daemon --workers 2 --max-queues 4
guest 2 32M 64
attach 2
assert_node "$(be_path 2)/multi-queue-max-queues" 4
blkfront 2 --queues 4 --fill --bs 16384 --depth 8 --ops 4000 --verify \
	--seed 8 >/dev/null
grep -q "(bs 16384, depth 8 x 4 queues" "$WORK/front-2.out" ||
	fail "the run did not use 4 queues at depth 8"
expect_verified "$WORK/front-2.out" "4 queues"
cmp "$WORK/expected" "$WORK/d2.img" ||
	fail "image written through 4 queues differs from the pattern"

# 5 queues: more than offered, refused.
blkfront_refused 2 --queues 5 --ops 10
detach 2
assert_still_serving 3
exit 0

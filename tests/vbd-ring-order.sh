#!/bin/sh
# Multi-page rings: frontends with ring orders 0, 1 and 4 (ring-ref0..N-1
# and ring-page-order) move verified data with as many requests in flight
# as the ring holds; a frontend asking for order 5 (beyond the offered
# max-ring-page-order=4) is refused: the backend goes to Closing with an
# `error` node, and keeps serving others.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

guest 1 32M 64
attach 1
be=$(be_path 1)
fe=$(fe_path 1)
assert_node "$be/max-ring-page-order" 4
for order in 0 1 4; do
	slots=$((32 << order))
	hold_start 1 --ring-order $order --queues 1 --fill --partial \
		--bs 16384 --depth $slots --ops 3000 --verify --seed 3 --hold
	hold_wait CONNECTED 60
	case $order in
	0)
		xs_read "$fe/ring-ref" >/dev/null ||
			fail "order 0: no ring-ref node"
		xs_read "$fe/ring-page-order" >/dev/null &&
			fail "order 0: ring-page-order written"
		;;
	*)
		assert_node "$fe/ring-page-order" $order
		last=$(((1 << order) - 1))
		xs_read "$fe/ring-ref$last" >/dev/null ||
			fail "order $order: no ring-ref$last"
		xs_read "$fe/ring-ref" >/dev/null &&
			fail "order $order: a ring-ref node besides ring-refN"
		;;
	esac
	assert_node "$be/state" 4
	# The backend maps the whole ring (plus the persistent data grants).
	m=$(mapped_of 1)
	[ "${m:-0}" -ge $((1 << order)) ] ||
		fail "order $order: only $m grants mapped"
	hold_end
	grep -q "ring order $order, 1 queue," "$WORK/front-1.out" ||
		fail "order $order not negotiated: $(connected_line 1)"
	grep -q "(bs 16384, depth $slots x 1 queue" "$WORK/front-1.out" ||
		fail "order $order: the run was not at depth $slots"
	expect_verified "$WORK/front-1.out" "order $order"
done
detach 1

# Order 5: refused.
guest 2 4M
attach 2
blkfront_refused 2 --ring-order 5 --queues 1 --ops 10
note "order 5 refused: $(xs_read "$(be_path 2)/error")"
assert_still_serving 3
exit 0

#!/bin/sh
# Barriers and flushes that carry data: for a write, a barrier write to
# the same sectors and a later write (or read) queued together, the
# responses come in that order, all OKAY (the barrier is offered, so
# never EOPNOTSUPP), and the disk holds the last write's data (a read
# after the barrier sees the barrier's). Checked on every ring shape; the
# guest reports what happened (facts), barrier_facts and flush_data_facts
# in lib.sh say what must have.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

sectors=$((8 * 2048))
guest 1 8M
attach 1
assert_node "$(be_path 1)/feature-barrier" 1
for args in "--abi x86_64" "--abi x86_32 --ring-order 0 --queues 1" \
	"--ring-order 2 --queues 2 --persistent no"; do
	# shellcheck disable=SC2086
	blkfront 1 $args --check barrier --check flush-data --seed 6 \
		>/dev/null
	expect_check "$WORK/front-1.out" barrier "$args" barrier_facts
	expect_check "$WORK/front-1.out" flush-data "$args" flush_data_facts
done
# Everything the checks wrote carries the pattern of seed 6: compare the
# written ranges with the host's image.
write_pattern "$WORK/expected" "$sectors" 6
cmp -i $((200 * 512)):$((200 * 512)) -n $((4 * 4096)) \
	"$WORK/expected" "$WORK/d1.img" ||
	fail "the flush with data did not land in the image"
i=0
while [ $i -lt 24 ]; do
	off=$(((512 + i * 64) * 512))
	cmp -i $off:$off -n $(((1 + i % 4) * 4096)) "$WORK/expected" \
		"$WORK/d1.img" ||
		fail "barrier round $i: the image does not hold the last write"
	i=$((i + 1))
done
detach 1
assert_daemon_alive
exit 0

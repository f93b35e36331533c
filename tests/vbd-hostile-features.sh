#!/bin/sh
# A hostile guest against the protocol features: indirect requests with
# more segments than offered, ungranted indirect pages or segments, wrong
# indirect operations, requests and discards past the end; a ring order
# or queue count beyond what was offered (--max-queues 4). Each gets the
# error docs/security.md promises (bad_indirect_facts, bad_requests_facts
# in lib.sh) or the device is refused, and the daemon keeps serving that
# guest and others.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon --max-queues 4

guest 1 8M
guest 2 8M
attach 1
attach 2
for abi in x86_64 x86_32; do
	blkfront 1 --abi $abi --check bad-indirect --check bad-requests \
		>/dev/null
	expect_check "$WORK/front-1.out" bad-indirect "$abi" \
		bad_indirect_facts 1
	expect_check "$WORK/front-1.out" bad-requests "$abi" \
		bad_requests_facts 1
done
assert_daemon_alive
blkfront 2 --ops 300 --verify >/dev/null
detach 1

for bad in "--ring-order 5" "--queues 5"; do
	attach 1
	# shellcheck disable=SC2086 # word splitting is the point
	blkfront_refused 1 $bad --ops 10
	assert_daemon_alive
	blkfront 2 --ops 200 --verify >/dev/null
	detach 1
done
# The refused guest can come back with sane settings.
attach 1
blkfront 1 --ops 300 --verify >/dev/null
detach 1
assert_daemon_alive
exit 0

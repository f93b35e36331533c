#!/bin/sh
# Malformed requests from a hostile guest (unknown operation, too many or
# no segments, sector indexes outside the page, first > last, ungranted
# grant references, barrier without feature-barrier) each get the error
# docs/security.md promises (bad_requests_facts in lib.sh); the daemon
# survives and keeps serving that guest and others.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

guest 1 4M
guest 2 4M
attach 1
attach 2
for abi in x86_64 x86_32; do
	blkfront 1 --abi $abi --check bad-requests >/dev/null
	expect_check "$WORK/front-1.out" bad-requests "$abi" bad_requests_facts 1
done
assert_daemon_alive
blkfront 2 --ops 300 --verify >/dev/null
assert_daemon_alive
exit 0

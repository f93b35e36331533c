#!/bin/sh
# Persistent-grant mappings registered as io_uring buffers: test-pgrant and
# test-engine with the simulated guest's memory on tmpfs, as a real guest's
# RAM is memory and not a file on disk. There the kernel pins a mapping,
# READ_FIXED fills it, and a one-page request on a persistent grant reaches
# the backend as its registered buffer. (On a disk filesystem Linux refuses
# long-term pins of shared file pages, and the two check the fall-back.)
. "$top_srcdir/tests/lib.sh"

[ -d /dev/shm ] && [ -w /dev/shm ] || skip "no writable /dev/shm"
for t in test-pgrant test-engine; do
	out=$(TMPDIR=/dev/shm "$top_builddir/tests/$t" 2>&1) ||
		fail_later "$t on tmpfs failed: $out"
	case $out in
	*"did not register"* | *"not checked"*)
		fail_later "$t on tmpfs: the kernel did not register: $out" ;;
	esac
done
finish

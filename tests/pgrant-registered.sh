#!/bin/sh
# Persistent-grant mappings registered as io_uring buffers, and filled by
# READ_FIXED: test-pgrant with the simulated guest's memory on tmpfs, as a
# real guest's RAM is memory and not a file on disk. (On a disk filesystem
# Linux refuses long-term pins of shared file pages, and test-pgrant checks
# the fall-back instead.)
. "$top_srcdir/tests/lib.sh"

[ -d /dev/shm ] && [ -w /dev/shm ] || skip "no writable /dev/shm"
out=$(TMPDIR=/dev/shm "$top_builddir/tests/test-pgrant" 2>&1) ||
	fail "test-pgrant on tmpfs failed: $out"
case $out in
*"did not register"*)
	fail "the kernel refused to register a mapping of tmpfs memory" ;;
esac
finish

#!/bin/sh
# Bounce memory is bounded per ring and for the whole daemon. With no
# budget beyond each ring's first MiB, two guests that each want far more
# (copy mode, 1 MiB indirect requests, 8 in flight) are slowed, not
# failed: both verified workloads finish without an error, and their
# requests are seen waiting for buffers.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon --buffer-mib 0 --ring-buffer-mib 2

for d in 1 2; do
	guest $d 32M 40
	attach $d
	"$BLKFRONT" --domid $d --seconds 3 --depth 8 --bs 1048576 --verify \
		--queues 1 --indirect 256 --persistent no \
		>"$WORK/front-$d.out" 2>&1 &
	eval "front$d=\$!"
	track_pid $!
done
for d in 1 2; do
	eval "pid=\$front$d"
	wait "$pid" || {
		cat "$WORK/front-$d.out" >&2
		fail "guest $d failed under the buffer budget"
	}
	expect_verified "$WORK/front-$d.out" "guest $d under the buffer budget"
done
for d in 1 2; do
	wait_file_line "$WORK/blkbackd.log" \
		"vbd $d/51712: .* [1-9][0-9]* waited for buffers" 10 ||
		fail "guest $d never waited for buffers: the budget was not hit"
done
assert_daemon_alive
exit 0

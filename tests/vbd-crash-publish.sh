#!/bin/sh
# A daemon that dies after writing a push's answers into the shared ring
# but before publishing them must not leave its successor reading those
# answers as requests (request i and answer i share ring slot i). The
# first daemon runs under gdb, which kills it at exactly that point, in
# the middle of a guest's verified workload; a second daemon must finish
# the push from the ring's journal, resume the ring and serve the guest to
# the end without an error.
. "$top_srcdir/tests/lib.sh"
requires gdb
xensim_setup

# blk_ring_push_responses() is entered after the slots were written and
# before rsp_prod moves. Let a few hundred pushes by, then kill there.
LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
	-ex 'break blk_ring_push_responses' -ex 'run' \
	-ex 'ignore 1 300' -ex 'continue' -ex 'bt 3' -ex 'kill' \
	--args "$BLKBACKD" --log-level debug --state-dir "$WORK/state" \
	>"$WORK/gdb.log" 2>>"$WORK/blkbackd.log" &
gdb_pid=$!
BG_PIDS="$BG_PIDS $gdb_pid"

guest 1 64M
attach 1

"$BLKFRONT" --domid 1 --seconds 8 --depth 16 --verify --queues 1 \
	>"$WORK/front-1.out" 2>&1 &
front=$!
BG_PIDS="$BG_PIDS $front"

wait "$gdb_pid"
grep -q "blk_ring_push_responses" "$WORK/gdb.log" || {
	cat "$WORK/gdb.log" >&2
	fail "gdb never stopped the daemon at the push"
}
pid_alive "$front" || fail "the guest ended before the daemon was killed"
note "daemon killed between writing answers and publishing them"

start_daemon
wait "$front" || {
	cat "$WORK/front-1.out" >&2
	fail "the guest failed after the daemon died mid-push"
}
grep -q "verified OK" "$WORK/front-1.out" || fail "guest 1 not verified"
assert_daemon_alive
exit 0

#!/bin/sh
# A daemon killed while a local process has a blocking read lock queued on
# a guest's image (any user who can read it can): once the dead daemon's
# lock goes, that process holds the image, and the restarted daemon cannot
# take it. It must not wait on the main thread (the stall probe allows
# 100 ms) while it tries again for a few seconds, and must then tell the
# guest (backend Closing, its error node naming the holder's pid) and the
# operator (the journal line of the disk, `blkbackctl list`: failed). Four
# other guests, resumed too, run verified I/O throughout.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-bystanders.sh"
requires python3
xensim_setup
start_daemon
LOG=$WORK/blkbackd.log
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
img=$WORK/d1.img
BE=$(be_path 1)

guest 1 16M
attach 1
blkfront_bg 1 --seconds 30 --depth 4 --verify
VICTIM=$BG_PID
wait_node "$BE/state" 4 15 || fail "guest 1 did not connect"
bystanders_start 11 25

python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
print("queued", flush=True)
fcntl.lockf(fd, fcntl.LOCK_SH)
print("locked", flush=True)
time.sleep(600)' "$img" >"$WORK/locker.out" 2>&1 &
LOCKER=$!
track_pid $LOCKER
wait_file_line "$WORK/locker.out" queued 5 || hard_error "python did not start"
sleep 1
grep -q locked "$WORK/locker.out" && hard_error "the read lock was granted"

stop_daemon KILL
start_daemon
# Its start-up (resuming five disks) is not what is measured: the wait
# for the lock that follows is, from when the bystanders are back.
i=0
until [ "$(grep -c "vbd 1[1-4]/51712: connected" "$LOG")" -ge 8 ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the restarted daemon did not start"
	sleep 0.1
done
stall_probe_start
wait_file_line "$WORK/locker.out" locked 10 ||
	fail "the queued read lock was never granted"
wait_node "$BE/state" 5 15 ||
	fail "the resumed device is at state '$(xs_read "$BE/state")', not Closing"
xs_read "$BE/error" | grep -q "process $LOCKER (python3) holds a read lock" ||
	fail "its error node says '$(xs_read "$BE/error")'"
grep -q "vbd 1/51712: cannot open image $img: .*trying again for 5 s" \
	"$LOG" || fail "no word that the resumed device waits for its lock"
grep -q "<3>.*vbd 1/51712: .*process $LOCKER\|err: vbd 1/51712: .*process $LOCKER" \
	"$LOG" || fail "the failure was not logged as an error"
$CTL --json list >"$WORK/list.json" || fail "blkbackctl list failed"
[ "$(json "$WORK/list.json" \
	"[x['state'] for x in d['devices'] if x['domid'] == 1][0]")" = failed ] ||
	fail "blkbackctl list: $(cat "$WORK/list.json")"
wait "$VICTIM" && fail "guest 1 was served without its image"
# The probe covers the lock's wait and the failure; the attach below
# is timed by its own bounds.
stall_probe_stop 100
note "worst main-loop stall: $STALL_WORST_MS ms"

bystanders_wait
assert_still_serving 5
assert_stops_within 5
exit 0

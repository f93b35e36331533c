#!/bin/sh
# Image locks and owner records, while four other guests run verified I/O
# and the stall probe watches the main loop (at most 100 ms):
# - a local process holding a POSIX read lock on an image (any user who
#   can read it can): the attach fails at once, naming its pid and the
#   fix; the daemon and the other guests are untouched;
# - the same with a stale owner record naming the guest's own VM: still
#   refused, the record never stands for a lock's holder alone;
# - a world-readable image: one warning per attach, naming the image and
#   chmod o-r; none once it is not;
# - the owner record (user.blkbackd.owner) is there while the disk is
#   attached and gone once it is detached; a stale one alone blocks
#   nothing and is replaced.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-bystanders.sh"
requires python3
xensim_setup
start_daemon
LOG=$WORK/blkbackd.log
VM=/vm/5e1f0000-0000-4000-8000-000000000001
img=$WORK/d1.img

# owner_of FILE: its user.blkbackd.owner, or nothing.
owner_of() {
	python3 -c 'import os, sys
try:
    print(os.getxattr(sys.argv[1], "user.blkbackd.owner").decode())
except OSError:
    pass' "$1"
}

set_owner() {
	python3 -c 'import os, sys
os.setxattr(sys.argv[1], "user.blkbackd.owner", sys.argv[2].encode())' \
		"$1" "$2" || skip "no user extended attributes on $WORK"
}

guest 1 4M
xenstore-write /local/domain/1/vm "$VM" || hard_error "xenstore-write failed"
bystanders_start 11 25
stall_probe_start

python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.lockf(fd, fcntl.LOCK_SH)
print("locked", flush=True)
time.sleep(600)' "$img" >"$WORK/locker.out" 2>&1 &
LOCKER=$!
track_pid $LOCKER
wait_file_line "$WORK/locker.out" locked 5 || hard_error "python did not lock"

t0=$(date +%s)
attach_must_fail 1 "$img" xvda "process $LOCKER (python3) holds a read lock"
[ $(($(date +%s) - t0)) -le 3 ] || fail "the refused attach took over 3 s"
grep -q "vbd 1/51712: .*process $LOCKER (python3) holds a read lock on it; .*chmod o-r" \
	"$LOG" || fail "the log does not name the lock's holder and the fix"
detach 1

# A stale record naming this very VM does not make it wait for a
# migration that is not there: the holder is a local process.
set_owner "$img" "$VM"
attach_must_fail 1 "$img" xvda "process $LOCKER (python3) holds a read lock"
detach 1
kill "$LOCKER"
wait "$LOCKER" 2>/dev/null

# The record alone blocks nothing, and is replaced by the new holder's.
set_owner "$img" /vm/stale-from-a-dead-daemon
attach 1
blkfront 1 --ops 100 --verify >/dev/null
[ "$(owner_of "$img")" = "$VM" ] ||
	fail "while attached the image names '$(owner_of "$img")', not $VM"
[ "$(grep -c "vbd 1/51712: image $img is readable by every local user.*chmod o-r $img" "$LOG")" -eq 1 ] ||
	fail "not one world-readable warning for the attach"
detach 1
[ -z "$(owner_of "$img")" ] ||
	fail "the owner record '$(owner_of "$img")' stayed after the detach"

chmod o-r "$img" || hard_error "chmod failed"
attach 1
blkfront 1 --ops 50 --verify >/dev/null
detach 1
[ "$(grep -c "image $img is readable by every local user" "$LOG")" -eq 1 ] ||
	fail "a warning for an image no other user can read"

assert_still_serving 5
bystanders_wait
stall_probe_stop 100
note "worst main-loop stall: $STALL_WORST_MS ms"
assert_stops_within 5
exit 0

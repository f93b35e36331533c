#!/bin/sh
# An operator deletes or truncates an image under a running guest: the
# daemon says so in its log, once per device, naming the disk and what
# happens next, and the guest keeps being served (deleted: its data is
# still there until detach; truncated: reads past the new end fail). The
# daemon looks every 5 s (VBD_IMAGE_CHECK_MS).
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

guest 1 8M
attach 1
guest 2 8M
attach 2
hold_start 1 --hold
hold_wait CONNECTED 10
exec 3>&-
blkfront_wait 1 "$HOLD_PID"

note "an image deleted under its guest"
rm "$WORK/d1.img"
wait_file_line "$WORK/blkbackd.log" \
	"vbd 1/51712: image $WORK/d1.img was deleted while in use" 15 ||
	fail "no log line for the deleted image"
blkfront 1 --ops 200 --verify --seed 5 >/dev/null

note "an image cut short under its guest"
truncate -s 4M "$WORK/d2.img"
wait_file_line "$WORK/blkbackd.log" \
	"vbd 2/51712: image $WORK/d2.img shrank to 4194304 bytes under the running guest, which sees 8388608" 15 ||
	fail "no log line for the truncated image"

note "each said once"
sleep 6
for what in "was deleted" "shrank to"; do
	n=$(grep -c "$what" "$WORK/blkbackd.log")
	[ "$n" -eq 1 ] || fail "'$what' logged $n times"
done
detach 1
detach 2
assert_daemon_alive
exit 0

#!/bin/sh
# A restarted daemon honours the records of moves (blkbackd/move-record.h)
# as a killed one left them, made here by hand so that every case is met
# for certain (tests/vbd-move-kill.sh meets them by chance):
#   - switched, its source not marked yet (killed between record and
#     mark): the guest goes on on the destination, and the source is marked;
#   - copying (a move of the disk moved before): the copy is removed, the
#     guest stays on its image, and the record still says where that is;
#   - damaged: not trusted; the disk named by params, marked, is refused
#     with the mark's message;
#   - of devices that are gone: removed at start-up, an unfinished copy
#     with it, a switched source marked;
#   - of a disk detached: removed.
# A guest writes numbered pages throughout the restarts; in the end its
# image holds every write it saw answered.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
. "$top_srcdir/tests/lib-move.sh"
requires python3 cp
xensim_setup
IMG=$WORK/images
xattr_dir "$IMG"
CHECK="python3 $top_srcdir/tests/move-kill-check.py"
MOVES=$WORK/state/moves

# record DOMID PHASE SOURCE DEST: a record of device DOMID/51712, as
# move_record_save() writes it.
record() {
	mkdir -p "$MOVES" || hard_error "mkdir $MOVES"
	printf 'blkbackd-move-record 1\ndomid %s\ndevid 51712\nphase %s\nsource %s\ndest %s\nend\n' \
		"$1" "$2" "$3" "$4" >"$MOVES/$1-51712"
}

# mark FILE DEST: FILE marked as moved to DEST, as a finished move does.
mark() {
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.blkbackd.moved-to", sys.argv[2].encode())' \
		"$1" "$2" || hard_error "cannot mark $1"
}

# served: the image under $IMG the daemon holds open for dom 1's disk.
served() {
	for sv_fd in /proc/"$DAEMON_PID"/fd/*; do
		sv_to=$(readlink "$sv_fd" 2>/dev/null) || continue
		case $sv_to in
		"$IMG"/d*) echo "$sv_to" ;;
		esac
	done
}

truncate -s 16M "$IMG/d0.img" || hard_error "cannot make the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
start_daemon
attach 1 xvda "$IMG/d0.img"
numbered_start 1
sleep 0.3

# Switched, the source not marked: killed between the record and the mark.
switch_by_hand() {
	cp --sparse=always "$IMG/d0.img" "$IMG/d1.img" || fail "cp"
	record 1 switched "$IMG/d0.img" "$IMG/d1.img"
}
restart_killed switch_by_hand
[ "$(served)" = "$IMG/d1.img" ] ||
	fail "a switched move: the daemon serves '$(served)', not d1.img"
$CHECK images "$IMG/d1.img" "$IMG/d0.img" "$IMG/d1.img" >"$WORK/check.out" ||
	fail "a switched move: $(cat "$WORK/check.out")"
grep -q "vbd 1/51712: serving $IMG/d1.img, to which a move switched the disk before the restart (its params still names $IMG/d0.img" \
	"$WORK/blkbackd.log" || fail "the journal does not say the disk moved"
grep -q "vbd 1/51712: marked $IMG/d0.img as moved to $IMG/d1.img: the restart came before" \
	"$WORK/blkbackd.log" || fail "the journal does not say the source was marked"
sleep 0.3

# Copying from d1 (the disk moved before) to d2: the copy goes; the record
# still sends a restart to d1, which params does not name.
copy_by_hand() {
	truncate -s 16M "$IMG/d2.img" || hard_error "truncate"
	record 1 copying "$IMG/d1.img" "$IMG/d2.img"
}
restart_killed copy_by_hand
[ "$(served)" = "$IMG/d1.img" ] ||
	fail "an abandoned move: the daemon serves '$(served)', not d1.img"
$CHECK images "$IMG/d1.img" "$IMG/d0.img" "$IMG/d1.img" "$IMG/d2.img" \
	>"$WORK/check.out" || fail "an abandoned move: $(cat "$WORK/check.out")"
grep -q "vbd 1/51712: move to $IMG/d2.img abandoned by a restart; the source $IMG/d1.img stays authoritative; run it again" \
	"$WORK/blkbackd.log" || fail "the journal does not say the move was abandoned"
grep -qx "phase switched" "$MOVES/1-51712" &&
	grep -qx "dest $IMG/d1.img" "$MOVES/1-51712" ||
	fail "the record after the abandoned move: $(cat "$MOVES/1-51712")"
sleep 0.3
# And a plain restart still finds d1.
restart_killed
[ "$(served)" = "$IMG/d1.img" ] ||
	fail "a restart after the abandoned move serves '$(served)'"
sleep 0.3
numbered_stop

# Damaged: not trusted. The disk params names, marked, is refused when the
# guest connects, with where the disk went.
truncate -s 4M "$IMG/e0.img" "$IMG/e1.img" || hard_error "truncate"
"$TOOLSTACK" create 3 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 3"
attach 3 xvda "$IMG/e0.img"
# Of devices that are gone: dom 8's move had switched (its source not
# marked yet), dom 9's was copying.
truncate -s 4M "$IMG/g0.img" "$IMG/g1.img" "$IMG/h0.img" "$IMG/h1.img" ||
	hard_error "truncate"
stop_daemon KILL
mark "$IMG/e0.img" "$IMG/e1.img"
record 3 switched "$IMG/e0.img" "$IMG/e1.img"
head -c 60 "$MOVES/3-51712" >"$MOVES/3-51712.cut" || hard_error "head"
mv "$MOVES/3-51712.cut" "$MOVES/3-51712" || hard_error "mv"
record 8 switched "$IMG/g0.img" "$IMG/g1.img"
record 9 copying "$IMG/h0.img" "$IMG/h1.img"
start_daemon
blkfront_refused 3 --ops 10
xs_read "$(be_path 3)/error" | grep -q "$IMG/e0.img was moved to $IMG/e1.img by blkbackd" ||
	fail "the refusal of a marked image: $(xs_read "$(be_path 3)/error")"
grep -q "vbd 3/51712: the record of its move, $MOVES/3-51712, is damaged" \
	"$WORK/blkbackd.log" || fail "the journal does not name the damaged record"
[ -e "$MOVES/3-51712" ] || fail "the damaged record was removed"
for gone in 8 9; do
	[ ! -e "$MOVES/$gone-51712" ] ||
		fail "the record of dom $gone's gone device is still there"
done
$CHECK images "$IMG/g1.img" "$IMG/g0.img" "$IMG/g1.img" >"$WORK/check.out" ||
	fail "a gone device's switched move: $(cat "$WORK/check.out")"
[ -e "$IMG/h0.img" ] && [ ! -e "$IMG/h1.img" ] ||
	fail "a gone device's unfinished copy is not removed, or its source is"

# A detached disk leaves no record, even one a restart resumed it from:
# the next disk of that domain and number is another.
detach 1
n=50
while [ -e "$MOVES/1-51712" ] && [ "$n" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
[ ! -e "$MOVES/1-51712" ] ||
	fail "the detached disk's record is still there: $(cat "$MOVES/1-51712")"

# Every write the guest saw answered is in d1.
read_back 2 "$IMG/d1.img"
$CHECK writes - "$WORK/front-1.out" "$WORK/front-2.out" >"$WORK/data.out" ||
	fail "d1.img after the restarts: $(cat "$WORK/data.out")"
assert_daemon_alive
note "$(cat "$WORK/data.out")"
exit 0

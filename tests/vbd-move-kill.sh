#!/bin/sh
# Live moves survive SIGKILL of the daemon at any point. Round after
# round, a guest writes numbered pages throughout while a move of its disk
# starts and the daemon is killed after a random delay (before the copy,
# during it, around the switch, after it), then started again, and the
# guest goes on. After each restart the daemon serves the image the move
# switched to, or the one it was on; the marks lead from the first image
# to the served one, and every abandoned copy is gone
# (tests/move-kill-check.py). Then the guest stops, the disk is attached
# again from the image the daemon served (as an operator points the
# configuration at a move's DEST: what is read back is that file, not
# what a record makes of it), and it holds every write the guest saw
# answered; the guest saw no error.
#
# BLKBACKD_MOVE_KILLS sets the number of kills (30 unless given, for make
# check's time; 100 for the full run).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-snapshot.sh"
. "$top_srcdir/tests/lib-move.sh"
requires python3 od
xensim_setup
KILLS=${BLKBACKD_MOVE_KILLS:-30}
case $KILLS in
'' | *[!0-9]*) hard_error "BLKBACKD_MOVE_KILLS must be a number" ;;
esac
IMG=$WORK/images
xattr_dir "$IMG"
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
CHECK="python3 $top_srcdir/tests/move-kill-check.py"
t0=$(now_ms)

# served: the image file under $IMG the daemon holds open for the disk.
served() {
	for sv_fd in /proc/"$DAEMON_PID"/fd/*; do
		sv_to=$(readlink "$sv_fd" 2>/dev/null) || continue
		case $sv_to in
		"$IMG"/*) echo "$sv_to" ;;
		esac
	done
}

# random_below N: a random whole number in [0, N).
random_below() {
	echo $(($(od -An -N4 -tu4 /dev/urandom) % $1))
}

# connects: how many times a daemon connected the disk so far.
connects() { grep -c 'vbd 1/51712: connected' "$WORK/blkbackd.log"; }

truncate -s 16M "$IMG/d0.img" || hard_error "cannot make the image"
"$TOOLSTACK" create 1 >>"$WORK/toolstack.log" 2>&1 || fail "create dom 1"
start_daemon
attach 1 xvda "$IMG/d0.img"

# limit_guest: the guest writes at most ~2 MiB/s (an I/O limit, kept
# across restarts, not across attaches), so that a move at the default
# rate converges at once, however busy the host.
limit_guest() {
	$CTL limit 1/xvda --iops 500 >/dev/null || fail "blkbackctl limit"
}

# round_end N IMAGE: the guest stops; its disk, attached again from IMAGE
# and read back, holds every write of round N, and what the last round
# left where this one wrote nothing.
round_end() {
	numbered_stop
	cp "$WORK/front-1.out" "$WORK/writes-$1.out"
	detach 1
	attach 1 xvda "$2"
	blkfront 1 --check numbered-read >/dev/null
	cp "$WORK/front-1.out" "$WORK/read-$1.out"
	$CHECK writes "$read_before" "$WORK/writes-$1.out" "$WORK/read-$1.out" \
		>"$WORK/data-check.out" ||
		fail "round $1: $(cat "$WORK/data-check.out")"
	read_before=$WORK/read-$1.out
	limit_guest
}
read_before=-

# Round 0, unkilled: how long a move takes here, once the guest has
# written all its blocks; the kills are spread over that.
numbered_start 1
sleep 0.5
limit_guest
images="$IMG/d0.img $IMG/d1.img"
m0=$(now_ms)
$CTL move --wait 1/xvda "$IMG/d1.img" >"$WORK/move-1.out" 2>&1 ||
	fail "the first move: $(cat "$WORK/move-1.out")"
MOVE_MS=$(($(now_ms) - m0))
note "an unkilled move takes $MOVE_MS ms"
round_end 0 "$IMG/d1.img"
cur=$IMG/d1.img

switched=0
abandoned=0
unrecorded=0
i=1
while [ "$i" -le "$KILLS" ]; do
	dest=$IMG/d$((i + 1)).img
	images="$images $dest"
	# A third of the kills while the move starts (DEST being made and
	# recorded), a third anywhere in it and a little past it, a third
	# around its switch (its last fifth and a little after), where most
	# can go wrong.
	numbered_start 1
	sleep 0.1
	before=$(connects)
	move_out=$WORK/move-$((i + 1)).out
	case $((i % 3)) in
	0)
		delay=$(random_below 40)
		$CTL move 1/xvda "$dest" >"$move_out" 2>&1 3>&- &
		move_pid=$!
		track_pid $move_pid
		;;
	1)
		delay=$(random_below $((MOVE_MS * 3 / 2 + 1)))
		$CTL move 1/xvda "$dest" >"$move_out" 2>&1 ||
			fail "kill $i: the move did not start: $(cat "$move_out")"
		;;
	2)
		delay=$((MOVE_MS * 4 / 5 + $(random_below $((MOVE_MS * 2 / 5 + 1)))))
		$CTL move 1/xvda "$dest" >"$move_out" 2>&1 ||
			fail "kill $i: the move did not start: $(cat "$move_out")"
		;;
	esac
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	stop_daemon KILL
	echo "--- kill $i, $delay ms into the move to $dest" >>"$WORK/blkbackd.log"
	start_daemon 3>&- # not the held guest's stdin: it must see it closed
	n=100
	while [ "$(connects)" -le "$before" ] && [ "$n" -gt 0 ]; do
		assert_daemon_alive
		sleep 0.1
		n=$((n - 1))
	done
	[ "$(connects)" -gt "$before" ] ||
		fail "kill $i: the restarted daemon did not resume the disk"
	now=$(served)
	# A kill between DEST's creation and its record (the command had
	# not returned) leaves a copy no record names, which no daemon may
	# remove as its own: counted, and removed here.
	if [ $((i % 3)) = 0 ] && ! wait "$move_pid" && [ -e "$dest" ] &&
		[ "$now" != "$dest" ] && [ -z "$(moved_to "$dest")" ] &&
		! grep -qsx "dest $dest" "$WORK/state/moves/1-51712"; then
		unrecorded=$((unrecorded + 1))
		rm -f "$dest"
	fi
	case $now in
	"$dest") switched=$((switched + 1)) ;;
	"$cur") abandoned=$((abandoned + 1)) ;;
	*) fail "kill $i: the daemon serves '$now', neither $cur nor $dest" ;;
	esac
	# shellcheck disable=SC2086 # the images are words
	$CHECK images "$now" $images >"$WORK/check-kill.out" ||
		fail "kill $i, $delay ms into the move: $(cat "$WORK/check-kill.out")"
	sleep 0.1 # the guest goes on
	round_end "$i" "$now"
	cur=$now
	i=$((i + 1))
done
assert_daemon_alive
note "$KILLS kills in $(($(now_ms) - t0)) ms: $switched after a move's" \
	"switch, $abandoned before it ($unrecorded between DEST's creation" \
	"and its record); $(cat "$WORK/check-kill.out");" \
	"the last round: $(cat "$WORK/data-check.out")"
exit 0

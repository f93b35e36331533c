# Helpers of the live-move tests (sourced after lib.sh and lib-snapshot.sh):
# a directory whose files take user extended attributes (the mark a moved
# source carries), and the move requests.

# xattr_dir DIR: make DIR; skip unless its files take user attributes.
xattr_dir() {
	mkdir -p "$1" || hard_error "mkdir $1"
	: >"$1/.xattr-probe" || hard_error "cannot write in $1"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.blkbackd.probe", b"1")' \
		"$1/.xattr-probe" 2>"$1/.xattr-err" ||
		skip "the file system of $1 takes no user extended attributes" \
			"(a moved image's mark): $(tail -n 1 "$1/.xattr-err")"
	rm -f "$1/.xattr-probe" "$1/.xattr-err"
}

# files_gone PATH...: wait up to 5 s until none of PATH... exists (the
# daemon lets a detached disk go just after the toolstack saw it closed).
files_gone() {
	fg_n=50
	while [ "$fg_n" -gt 0 ]; do
		fg_left=
		for fg_p in "$@"; do
			[ -e "$fg_p" ] && fg_left=1
		done
		[ -z "$fg_left" ] && return 0
		sleep 0.1
		fg_n=$((fg_n - 1))
	done
	return 1
}

# moved_to FILE: the mark a moved source carries ("" when none).
moved_to() {
	python3 -c 'import os, sys
try:
    print(os.getxattr(sys.argv[1], "user.blkbackd.moved-to").decode())
except OSError:
    pass' "$1"
}

# move_json DISK: the "move" of DISK in blkbackctl --json stats.
move_json() {
	$CTL --json stats "$1" >"$WORK/move-stats.json" || fail "stats $1"
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))["devices"][0]["move"]
print(json.dumps(d))' "$WORK/move-stats.json"
}

# move_field DISK EXPR: EXPR (Python, over the move as m) printed.
move_field() {
	move_json "$1" >"$WORK/move.json"
	python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print($2)" \
		"$WORK/move.json"
}

# daemon_has_open FILE: the daemon holds FILE open (/proc/PID/fd).
daemon_has_open() {
	for dho_fd in /proc/"$DAEMON_PID"/fd/*; do
		[ "$(readlink "$dho_fd" 2>/dev/null)" = "$1" ] && return 0
	done
	return 1
}

# mono_ns: CLOCK_MONOTONIC now, as the numbered writer's times are.
mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# all_writes_in WRITES READ OUT: every write the numbered writer saw
# answered (WRITES, its log, all of them ended) is what READ (the image
# read back, --check numbered-read) holds at its block
# (tests/snapshot-check.py with a "pause" after the last write).
all_writes_in() {
	awi_now=$(mono_ns)
	printf '{"monotonic_ns": {"stopped": %s, "drained": %s}}\n' \
		"$awi_now" "$awi_now" >"$WORK/after-all.json"
	python3 "$top_srcdir/tests/snapshot-check.py" "$1" \
		"$WORK/after-all.json" "$2" >"$3"
}

# writes_in WRITER READER IMAGE: every write guest WRITER (stopped) saw
# answered is in IMAGE, read back by a new guest READER; its count noted.
writes_in() {
	read_back "$2" "$3"
	all_writes_in "$WORK/front-$1.out" "$WORK/front-$2.out" \
		"$WORK/check-$2.out" ||
		fail "$3: $(cat "$WORK/check-$2.out")"
	note "$3: $(cat "$WORK/check-$2.out")"
}

# move_under_writer DOMID IMAGE DEST: a new guest DOMID on IMAGE writes
# numbered pages while its disk moves to DEST (move --wait, which must
# switch); the writer stops, the disk stays attached.
move_under_writer() {
	"$TOOLSTACK" create "$1" >>"$WORK/toolstack.log" 2>&1 ||
		fail "create dom $1"
	attach "$1" xvda "$2"
	numbered_start "$1"
	sleep 0.5
	$CTL move --wait "$1/xvda" "$3" >"$WORK/move-$1.txt" 2>&1 ||
		fail "move $2 to $3: $(cat "$WORK/move-$1.txt")"
	grep -q "^moved to $3 after" "$WORK/move-$1.txt" ||
		fail "move $2 to $3 printed: $(cat "$WORK/move-$1.txt")"
	sleep 0.5
	numbered_stop
}

# restart_killed [CMD ARGS...]: SIGKILL the daemon, run CMD (between the
# two daemons), and start another, which must resume dom 1's disk.
restart_killed() {
	rk_before=$(grep -c 'vbd 1/51712: connected' "$WORK/blkbackd.log")
	stop_daemon KILL
	"$@"
	start_daemon 3>&- # not the held guest's stdin: it must see it closed
	n=100
	while [ "$(grep -c 'vbd 1/51712: connected' "$WORK/blkbackd.log")" -le "$rk_before" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "the restarted daemon did not resume dom 1"
		sleep 0.1
	done
}

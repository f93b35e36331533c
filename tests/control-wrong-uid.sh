#!/bin/sh
# Who may use the control socket: root, the daemon's user and the members
# of control-group. The socket's mode was the only guard: loosened by hand
# to 0666, it let any user change the daemon's settings. Now the user
# nobody is refused by its credentials, cannot change the log level, and
# the log names its uid and pid, while guests run verified I/O. With
# control-group = users the socket is 0660 with that group, and nobody in
# that group is answered while nobody outside it is still refused; a
# member may not have the daemon write a snapshot, nor move a disk.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-control.sh"
requires python3 setpriv
[ "$(id -u)" -eq 0 ] ||
	skip "running as another user than root needs root (setpriv)"
getent group users >/dev/null || skip "no group 'users' to allow"
getent passwd nobody >/dev/null || skip "no user 'nobody' to refuse"
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup"
# A python3 that nobody may run (root's own may be under /root).
for py in /usr/bin/python3 python3 ""; do
	[ -n "$py" ] && $AS_NOBODY --clear-groups "$py" -c pass 2>/dev/null &&
		break
done
[ -n "$py" ] || skip "no python3 that the user nobody may run"
NOBODY="$AS_NOBODY --clear-groups $py $top_srcdir/tests/control-client.py"
MEMBER="$AS_NOBODY --groups=users $py $top_srcdir/tests/control-client.py"
UID_NOBODY=$(id -u nobody)

# assert_refused WHAT: nobody, outside any allowed group, asks to change
# the log level through a socket loosened to 0666: refused and logged.
assert_refused() {
	chmod 0666 "$SOCK" || hard_error "chmod the socket"
	: >"$WORK/nobody.out"
	$NOBODY ask "$SOCK" "log-level err" >"$WORK/nobody.out" 2>&1
	grep -q '"error":"permission denied' "$WORK/nobody.out" ||
		fail_later "$1: nobody was not refused: $(cat "$WORK/nobody.out")"
	$CLIENT ask "$SOCK" log-level | grep -q '"log_level":"debug"' ||
		fail_later "$1: nobody changed the log level"
	wait_file_line "$WORK/blkbackd.log" \
		"refused uid $UID_NOBODY (pid [0-9]*)" 2 ||
		fail_later "$1: no log line names uid $UID_NOBODY and its pid"
}

control_setup 8
# Let nobody reach the socket's directory (the test's own, 0700).
chmod 0711 "$WORK" "$WORK/state" || hard_error "chmod"
mode=$(stat -c '%a' "$SOCK")
[ "$mode" = 600 ] || fail_later "the socket is mode $mode, wanted 600"
assert_refused "no control-group"
control_new_guest
control_verdict

: >"$WORK/blkbackd.log"
rm -f "$SOCK" # so that wait_control waits for the new one
start_daemon --control-group users
mode=$(stat -c '%a %G' "$SOCK")
[ "$mode" = "660 users" ] ||
	fail_later "the socket is '$mode', wanted mode 660, group users"
$MEMBER ask "$SOCK" log-level >"$WORK/member.out" 2>&1
grep -q '"log_level":"debug"' "$WORK/member.out" ||
	fail_later "a member of control-group was not answered:" \
		"$(cat "$WORK/member.out")"
# A snapshot writes a file as the daemon, of a guest's content: root's.
$MEMBER ask "$SOCK" "snapshot 1/51712 /tmp/planted" >"$WORK/member.out" 2>&1
grep -q '"error":"permission denied: a snapshot writes a file as the daemon' \
	"$WORK/member.out" ||
	fail_later "a member of control-group may take a snapshot:" \
		"$(cat "$WORK/member.out")"
# So does a move; and a member may not cancel one either.
$MEMBER ask "$SOCK" "move 1/51712 /tmp/planted" >"$WORK/member.out" 2>&1
grep -q '"error":"permission denied: a move writes a new image as the daemon' \
	"$WORK/member.out" ||
	fail_later "a member of control-group may move a disk:" \
		"$(cat "$WORK/member.out")"
$MEMBER ask "$SOCK" "move-cancel 1/51712" >"$WORK/member.out" 2>&1
grep -q '"error":"permission denied: only root' "$WORK/member.out" ||
	fail_later "a member of control-group may cancel a move:" \
		"$(cat "$WORK/member.out")"
assert_refused "control-group = users"
stop_daemon

# As under the shipped unit, without CAP_CHOWN: the socket takes its group
# from a setgid directory of that group, and without one the log says so.
REAL_BLKBACKD=$BLKBACKD
BLKBACKD=$WORK/no-chown
printf '#!/bin/sh\nexec setpriv --bounding-set=-chown %s "$@"\n' \
	"$REAL_BLKBACKD" >"$BLKBACKD"
chmod +x "$BLKBACKD"
mkdir "$WORK/ctl" && chgrp users "$WORK/ctl" && chmod 2751 "$WORK/ctl" ||
	hard_error "cannot make a setgid directory of group users"
# (Not start_daemon: it would wait for the socket that cannot be made.)
LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$BLKBACKD" --log-level debug --state-dir "$WORK/state" \
	--control-group users 2>>"$WORK/blkbackd.log" &
DAEMON_PID=$!
wait_file_line "$WORK/blkbackd.log" "put it in a directory of that group" 5 ||
	fail_later "no CAP_CHOWN, no setgid directory: no hint in the log"
stop_daemon
ln -s "$WORK/ctl/control" "$SOCK" # for wait_control
start_daemon --control-group users --control-socket "$WORK/ctl/control"
mode=$(stat -c '%a %G' "$WORK/ctl/control")
[ "$mode" = "660 users" ] ||
	fail_later "in a setgid directory without CAP_CHOWN, the socket is" \
		"'$mode', wanted mode 660, group users"
$MEMBER ask "$SOCK" log-level | grep -q '"log_level":"debug"' ||
	fail_later "a member of control-group was not answered there"
finish "nobody refused and logged, a member of control-group answered," \
	"a setgid directory gives the socket its group; $VERDICT"

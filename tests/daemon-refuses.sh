#!/bin/sh
# blkbackd refuses to start, with a message that says what to do, when the
# kernel's xen-blkback is bound, and rejects bad options and a
# control-group that does not exist: exit status 3, which the unit does
# not restart (RestartPreventExitStatus=3: a restart would only refuse
# again).
. "$top_srcdir/tests/lib.sh"

[ -x "$BLKBACKD" ] || fail "daemon not built at $BLKBACKD"
scratch_dir

mkdir -p "$WORK/sys/bus/xen-backend/drivers/vbd"
BLKBACKD_SYSFS="$WORK/sys" "$BLKBACKD" >"$WORK/out" 2>&1
rc=$?
[ "$rc" -eq 3 ] ||
	fail_later "with xen-blkback bound, exit status $rc, expected 3"
grep -q "blkbackd-takeover on" "$WORK/out" ||
	fail_later "the refusal does not name the command that unloads" \
		"xen-blkback: $(cat "$WORK/out")"
grep -q "serve = vbd3" "$WORK/out" ||
	fail_later "the refusal does not name the way beside xen-blkback:" \
		"$(cat "$WORK/out")"

for bad in "--workers 0" "--workers x" "--cache sometimes" \
	"--log-level loud" "--domid -1" "extra-argument"; do
	# shellcheck disable=SC2086 # word splitting is the point
	"$BLKBACKD" $bad >"$WORK/out" 2>&1
	rc=$?
	if [ "$rc" -ne 3 ] || ! grep -q "blkbackd" "$WORK/out"; then
		fail_later "'blkbackd $bad' exited $rc with: $(cat "$WORK/out")"
	fi
done

# A control-group that does not exist: refused before xenstore or Xen
# (serve vbd3: whether or not this host has a kernel backend).
mkdir "$WORK/state"
"$BLKBACKD" --serve vbd3 --state-dir "$WORK/state" \
	--control-group blkbackd-no-such-group >"$WORK/out" 2>&1
rc=$?
[ "$rc" -eq 3 ] && grep -q "control-group names 'blkbackd-no-such-group'" \
	"$WORK/out" ||
	fail_later "an unknown control-group: exit $rc, $(cat "$WORK/out")"
[ -e "$WORK/state/control" ] &&
	fail_later "an unknown control-group left a control socket"

"$BLKBACKD" --version | grep -q "^blkbackd [0-9]" || fail_later "--version"
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# `blkbackd --check-config` as an operator runs it: exit 0 and the settings
# in effect for a good file, exit 1 and one message per mistake (file, line,
# setting and fix) for a bad one, with the journal's error priority under
# systemd; and the daemon itself refuses to start on a bad file.
. "$top_srcdir/tests/lib.sh"

[ -x "$BLKBACKD" ] || skip "daemon not built at $BLKBACKD"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/blkbackd-$T.XXXXXX") || fail "mktemp failed"
trap cleanup EXIT

# check_config ARGS...: run it, stdout in check.out, stderr in check.err
check_config() {
	"$BLKBACKD" --check-config "$@" >"$WORK/check.out" 2>"$WORK/check.err"
}

expect_line() { # FILE TEXT
	grep -qF -- "$2" "$1" || fail "no '$2' in $(basename "$1"):
$(cat "$1")"
}

cat >"$WORK/good.conf" <<'CONF'
# a good file
workers = 3
cache = writeback
max-queues = 2
persistent-grants = no
CONF
check_config --config "$WORK/good.conf" --max-queues 5 ||
	fail "a good file was refused: $(cat "$WORK/check.err")"
expect_line "$WORK/check.out" "workers = 3"
expect_line "$WORK/check.out" "cache = writeback"
expect_line "$WORK/check.out" "persistent-grants = no"
# the command line wins over the file
expect_line "$WORK/check.out" "max-queues = 5"
[ -s "$WORK/check.err" ] && fail "a good file gave errors: $(cat "$WORK/check.err")"

cat >"$WORK/bad.conf" <<'CONF'
workers = 0
cache = sometimes
wrokers = 4
max-ring-page-order = 5
CONF
check_config --config "$WORK/bad.conf" && fail "a bad file was accepted"
expect_line "$WORK/check.err" "bad.conf:1: 'workers = 0': out of range, it must be a number from 1 to 1024"
expect_line "$WORK/check.err" "bad.conf:2: 'cache = sometimes': not valid, it must be 'none' or 'writeback'"
expect_line "$WORK/check.err" "bad.conf:3: unknown setting 'wrokers'"
expect_line "$WORK/check.err" "bad.conf:4: 'max-ring-page-order = 5': out of range, it must be a number from 0 to 4"
expect_line "$WORK/check.err" "delete the line to use the default"
[ "$(wc -l <"$WORK/check.err")" -eq 4 ] ||
	fail "expected one message per bad line: $(cat "$WORK/check.err")"

# Under systemd, stderr is the journal: errors carry priority 3 (err).
JOURNAL_STREAM=8:1 check_config --config "$WORK/bad.conf" &&
	fail "a bad file was accepted under systemd"
[ "$(grep -c '^<3>' "$WORK/check.err")" -eq 4 ] ||
	fail "errors do not reach the journal as errors: $(cat "$WORK/check.err")"

# A file named with --config must exist; the default one need not.
check_config --config "$WORK/absent.conf" &&
	fail "a missing --config file was accepted"
expect_line "$WORK/check.err" "absent.conf: No such file or directory"

# The daemon refuses a bad file before it touches xenstore or Xen.
"$BLKBACKD" --config "$WORK/bad.conf" >"$WORK/daemon.out" 2>&1
rc=$?
[ "$rc" -eq 3 ] || fail "the daemon exited $rc on a bad file, expected 3"
expect_line "$WORK/daemon.out" "bad.conf:3: unknown setting 'wrokers'"

# The shipped /etc/blkbackd.conf lists every setting, commented out, with
# the default the daemon really has; uncommented, it is a valid file.
sample=$top_srcdir/tools/blkbackd.conf
check_config --config /dev/null || fail "no file at all was refused"
mv "$WORK/check.out" "$WORK/defaults.out"
sed -n 's/^#\([a-z-]* = .*\)/\1/p' "$sample" >"$WORK/sample.conf"
check_config --config "$WORK/sample.conf" ||
	fail "the sample's settings are refused: $(cat "$WORK/check.err")"
for name in $(sed -n 's/^\([a-z-]*\) = .*/\1/p; s/^# \([a-z-]*\): .*/\1/p' \
	"$WORK/defaults.out"); do
	grep -q "^#$name = " "$sample" || fail "$sample does not show '$name'"
done
grep -v '^#' "$WORK/defaults.out" | while read -r line; do
	grep -qxF "#$line" "$sample" ||
		fail "$sample does not show the default '$line'"
done || exit 1

note "bad configurations are reported and refused"

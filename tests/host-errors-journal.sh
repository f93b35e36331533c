#!/bin/sh
# Under systemd, a host I/O error reaches the journal with the disk in
# structured fields, so that `journalctl DOMID=1` finds it: the daemon runs
# with JOURNAL_STREAM set (as systemd sets it), in a mount namespace whose
# /run holds a socket at journald's address, and what the daemon sends
# there is read as journald reads it (the native protocol: KEY=VALUE
# lines). The record must carry MESSAGE, PRIORITY=3, DOMID, VBD, VDEV,
# ERRNO and SYSLOG_IDENTIFIER, and the line must not reach stderr as well.
# A disk refused for a missing image is found the same way (DOMID, VBD):
# the real-Xen test's driver domain reads it back with journalctl. So is
# every other message about a disk (log.h's promise): its attach and its
# detach are found by DOMID and VBD, every journal record named after a
# disk carries that disk's fields, and no such line goes to stderr.
# A private /run needs root (unshare -m): elsewhere this test is skipped.
. "$top_srcdir/tests/lib.sh"
requires python3 unshare
[ "$(id -u)" -eq 0 ] || skip "a private /run (unshare -m) needs root"
unshare -m true 2>/dev/null || skip "unshare -m is not allowed here"
xensim_setup
LINE="vbd 1/51712 (xvda): read failed: Input/output error"

cat >"$WORK/journald.py" <<'PY'
# A stand-in for journald's socket: each datagram, as JSON, one a line.
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[3], "w").write(str(os.getpid()))
with open(sys.argv[2], "a") as out:
    while True:
        fields = {}
        for line in s.recv(1 << 20).decode().split("\n"):
            if "=" in line:
                key, value = line.split("=", 1)
                fields[key] = value
        out.write(json.dumps(fields) + "\n")
        out.flush()
PY
# The daemon in its own mount namespace, /run a fresh tmpfs holding the
# listener's socket; the daemon keeps the shell's pid (exec), so
# DAEMON_PID stops it.
LD_LIBRARY_PATH="$XENSIM_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	JOURNAL_STREAM=0:0 unshare -m sh -c '
	mount -t tmpfs blkbackd-test-run /run &&
		mkdir -p /run/systemd/journal || exit 1
	python3 "$1/journald.py" /run/systemd/journal/socket \
		"$1/journal.json" "$1/journald.pid" &
	while [ ! -S /run/systemd/journal/socket ]; do sleep 0.1; done
	shift
	exec "$@"' sh "$WORK" "$BLKBACKD" --log-level debug \
	--state-dir "$WORK/state" 2>>"$WORK/blkbackd.log" &
DAEMON_PID=$!
wait_file_line "$WORK/blkbackd.log" "serving" 10 ||
	fail "the daemon did not start"
track_pid $(cat "$WORK/journald.pid")

guest 1 8M
attach 1
wait_node "$(be_path 1)/state" 2 15 || fail "the backend did not reach InitWait"
truncate -s 4096 "$WORK/d1.img" || hard_error "truncate failed"
if "$BLKFRONT" --domid 1 --ops 200 --depth 8 --preexisting \
	>"$WORK/front-1.out" 2>&1; then
	fail "the guest read past the image's end without an error"
fi

wait_file_line "$WORK/journal.json" "read failed" 5 ||
	fail "nothing reached the journal's socket"
# journal_has MESSAGE KEY=VALUE...: the socket got a record with MESSAGE
# and these fields.
journal_has() {
	python3 - "$WORK/journal.json" "$@" <<'PY'
import json, sys
want = dict(kv.split("=", 1) for kv in sys.argv[3:])
want["MESSAGE"] = sys.argv[2]
want["SYSLOG_IDENTIFIER"] = "blkbackd"
records = [json.loads(l) for l in open(sys.argv[1])]
for r in records:
    if r.get("MESSAGE") == want["MESSAGE"]:
        bad = {k: r.get(k) for k in want if r.get(k) != want[k]}
        if bad:
            sys.exit("the record has %s, wanted %s" % (bad, want))
        sys.exit(0)
sys.exit("no record of %r in %s" % (want["MESSAGE"], records))
PY
}
journal_has "$LINE" PRIORITY=3 DOMID=1 VBD=51712 VDEV=xvda ERRNO=5 ||
	fail "the journal record is wrong"
grep -q "$LINE" "$WORK/blkbackd.log" &&
	fail "the error went to stderr as well as to the journal"

# A disk whose image is missing: refused, and the refusal is the disk's.
guest 2 8M
attach_must_fail 2 "$WORK/missing.img" xvda "cannot open image"
REFUSAL="vbd 2/51712: cannot open image $WORK/missing.img"
wait_file_line "$WORK/journal.json" "cannot open image" 10 ||
	fail "the refusal did not reach the journal's socket"
msg=$(grep -o "\"$REFUSAL[^\"]*\"" "$WORK/journal.json" | head -n 1 | tr -d '"')
journal_has "$msg" PRIORITY=3 DOMID=2 VBD=51712 ||
	fail "the refusal's journal record is wrong"

# Attach and detach: what the disk's life logs is the disk's too.
journal_line() { # the first MESSAGE starting with $1
	python3 - "$WORK/journal.json" "$1" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    m = json.loads(l).get("MESSAGE", "")
    if m.startswith(sys.argv[2]):
        print(m)
        break
PY
}
msg=$(journal_line "vbd 1/51712: image $WORK/d1.img, ")
[ -n "$msg" ] || fail "the image's opening did not reach the journal"
journal_has "$msg" PRIORITY=6 DOMID=1 VBD=51712 ||
	fail "the image's opening has the wrong journal fields"
msg=$(journal_line "vbd 1/51712: connected (")
[ -n "$msg" ] || fail "the connection did not reach the journal"
journal_has "$msg" PRIORITY=6 DOMID=1 VBD=51712 VDEV=xvda ||
	fail "the connection has the wrong journal fields"
detach 1
wait_file_line "$WORK/journal.json" "vbd 1/51712: released" 10 ||
	fail "the detach did not reach the journal"
journal_has "vbd 1/51712: released" PRIORITY=6 DOMID=1 VBD=51712 \
	VDEV=xvda || fail "the detach has the wrong journal fields"
# Every record named after a disk is that disk's: "vbd D/V" or
# "vbd3 D/V" is DOMID=D, VBD=V.
python3 - "$WORK/journal.json" <<'PY' || fail "a disk's message lacks its fields"
import json, re, sys
n = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    m = re.match(r"vbd3? (\d+)/(\d+)[: ]", r.get("MESSAGE", ""))
    if not m:
        continue
    n += 1
    if (r.get("DOMID"), r.get("VBD")) != m.groups():
        sys.exit("%r has DOMID=%s VBD=%s" % (r["MESSAGE"], r.get("DOMID"),
                                               r.get("VBD")))
if n < 5:
    sys.exit("only %d messages about a disk reached the journal" % n)
PY
# Under systemd they go to the journal alone, not to stderr as well.
if grep -E '^<[0-7]>vbd3? [0-9]+/[0-9]+' "$WORK/blkbackd.log"; then
	fail "messages about a disk went to stderr, without their fields"
fi
assert_daemon_alive
exit 0

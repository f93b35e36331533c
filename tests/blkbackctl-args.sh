#!/bin/sh
# blkbackctl takes a disk as people type it, in every command: DOMID/DEVID,
# DOMID/xvdX (and the other names Xen accepts) and the domain's name from
# xenstore (NAME/xvdX, as xl takes it) all name the same disk. It checks
# what it is given itself: a mistake exits 2 with the command's usage and
# asks the daemon nothing. `list` names the VM, in columns as wide as
# their content, and shows "-" for the size of a disk whose guest has not
# connected (its sector size is not known), never 0. `limit` answers in
# the unit the limit was typed in, `resize` says old -> new, and every
# command answers JSON with --json.
. "$top_srcdir/tests/lib.sh"
requires python3
xensim_setup
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

# The simulated toolstack names its domains as xl would: /local/domain/N/name.
guest 1 64M
attach 1
guest 2 16M
attach 2 xvdb
NAME1=$(xs_read /local/domain/1/name) || fail "domain 1 has no name node"
[ -n "$NAME1" ] || fail "domain 1's name is empty"
wait_node "$(be_path 2 51728)/state" 2 15 || fail "dom 2 not at InitWait"

# usage_error ARGS...: blkbackctl ARGS exits 2 and shows a usage line.
usage_error() {
	ue_status=0
	$CTL "$@" >"$WORK/out" 2>"$WORK/err" || ue_status=$?
	[ "$ue_status" = 2 ] ||
		fail "blkbackctl $* exited $ue_status, wanted 2: $(cat "$WORK/err")"
	grep -q "^Usage: blkbackctl" "$WORK/err" ||
		fail "blkbackctl $*: no usage message: $(cat "$WORK/err")"
	[ -s "$WORK/out" ] && fail "blkbackctl $* printed: $(cat "$WORK/out")"
	return 0
}
usage_error stats 1
usage_error stats 1/floppy
usage_error stats /xvda
usage_error stats 1/xvda 2/xvdb
usage_error stats 40000/xvda
usage_error resize 1/
usage_error limit
usage_error limit 1:xvda
usage_error limit 1/xvda --bw 5X
usage_error snapshot 1/xvda
usage_error snapshot 1/xvda "/srv/a b.img"
usage_error snapshot 1/xvda "/$(printf '%0600d' 0)"
usage_error list 1/xvda
usage_error move 1/xvda
usage_error move --cancel 1/xvda "$WORK/m.img"
usage_error move --wait --cancel 1/xvda
usage_error move --cancel --bw 5M 1/xvda
usage_error move 1/xvda "$WORK/m.img" --bw 5X
usage_error move 1/xvda "/srv/a b.img"
usage_error stats --wait
usage_error snapshot --bw 5M 1/xvda "$WORK/s.img"
usage_error snapshot --copy 1/xvda
usage_error snapshot --copy 1/xvda "/srv/a b.img"
usage_error snapshot --copy --bw 5X 1/xvda "$WORK/s.img"
usage_error move --copy 1/xvda "$WORK/m.img"
usage_error stats --copy
usage_error frobnicate
usage_error --json --textfile "$WORK/m.prom" metrics
usage_error --timeout 5 stats
usage_error --iops 5 list
usage_error detach 1
usage_error detach 1/xvdb xvdb
usage_error attach 2/xvdc "$WORK/d2.img" xvdc
# A level the daemon does not know is the request's mistake too.
usage_error log-level loud
grep -q "unknown log level 'loud'" "$WORK/err" ||
	fail "log-level loud: $(cat "$WORK/err")"

# A name no domain has is no usage error, but an error all the same.
if $CTL stats nosuch/xvda 2>"$WORK/err"; then
	fail "stats of a domain that does not exist succeeded"
fi
grep -q "no domain named 'nosuch'" "$WORK/err" ||
	fail "stats nosuch/xvda: $(cat "$WORK/err")"

# `list` before the guest connects: the VM's name, and no size yet.
$CTL list >"$WORK/list0.txt" || fail "list failed"
note "$(cat "$WORK/list0.txt")"
row1=$(grep "^1 " "$WORK/list0.txt") || fail "list: no row for dom 1"
case $row1 in
*" $NAME1 "*) ;;
*) fail "list: dom 1's row does not name $NAME1: $row1" ;;
esac
[ "$(echo "$row1" | awk '{ print $10 }')" = - ] ||
	fail "list: a disk not connected has a size: $row1"
$CTL --json list >"$WORK/list0.json" || fail "list --json failed"
[ "$(json "$WORK/list0.json" "[x['sectors'] for x in d['devices'] if x['domid'] == 1][0]")" = None ] ||
	fail "list --json: a disk not connected has sectors: $(cat "$WORK/list0.json")"

hold_start 1 --hold
hold_wait CONNECTED 15

# Every form names the same disk.
for disk in 1/51712 1/xvda "$NAME1/xvda" "$NAME1/51712" 1/d0p0; do
	$CTL --json stats "$disk" >"$WORK/s.json" ||
		fail "stats $disk failed"
	[ "$(json "$WORK/s.json" "(len(d['devices']), d['devices'][0]['domid'], d['devices'][0]['devid'])")" = "(1, 1, 51712)" ] ||
		fail "stats $disk gave $(cat "$WORK/s.json")"
done
$CTL --json stats 2/xvdb >"$WORK/s.json" || fail "stats 2/xvdb failed"
[ "$(json "$WORK/s.json" "d['devices'][0]['devid']")" = 51728 ] ||
	fail "stats 2/xvdb gave $(cat "$WORK/s.json")"
$CTL stats "$NAME1/xvda" >"$WORK/s.txt" || fail "stats by name failed"
grep -q "^vbd 1/51712 (xvda of $NAME1)" "$WORK/s.txt" ||
	fail "stats does not name the VM: $(head -n1 "$WORK/s.txt")"
if $CTL stats 1/xvdc 2>"$WORK/err"; then
	fail "stats of a disk dom 1 does not have succeeded"
fi
grep -q "stats 1/xvdc: no such device" "$WORK/err" ||
	fail "stats 1/xvdc: $(cat "$WORK/err")"

# `list` once connected: aligned columns whatever their content, the size.
$CTL list >"$WORK/list.txt" || fail "list failed"
note "$(cat "$WORK/list.txt")"
python3 - "$WORK/list.txt" <<'PY' || fail "list is not aligned: $(cat "$WORK/list.txt")"
import sys
# The table ends at the first blank line; what waiting disks wait for follows.
lines = open(sys.argv[1]).read().split("\n\n")[0].splitlines()
head = lines[0]
starts = [i for i in range(len(head)) if head[i] != " " and (i == 0 or head[i - 1] == " ")]
for line in lines[1:]:
    for s in starts[1:]:
        # Each column starts where its header does, after a blank.
        if line[s - 1] != " " or line[s] == " ":
            sys.exit(1)
PY
row1=$(grep "^1 " "$WORK/list.txt")
[ "$(echo "$row1" | awk '{ print $5, $10, $11 }')" = "connected 64 MiB" ] ||
	fail "list: dom 1 connected, 64 MiB: $row1"
grep -q "^2/51728 (.*) waits for its guest to connect" "$WORK/list.txt" ||
	fail "list does not say what dom 2's disk waits for: $(cat "$WORK/list.txt")"

# `limit` answers in the unit typed; shown later, in the largest whole one.
$CTL limit "$NAME1/xvda" --bw 50M >"$WORK/limit.out" || fail "limit failed"
grep -q "^limit 50 MiB/s;" "$WORK/limit.out" ||
	fail "limit --bw 50M printed: $(cat "$WORK/limit.out")"
$CTL limit 1/xvda --bw 51200K --iops 300 >"$WORK/limit.out" ||
	fail "limit failed"
grep -q "^limit 300 requests/s, 51200 KiB/s;" "$WORK/limit.out" ||
	fail "limit --bw 51200K printed: $(cat "$WORK/limit.out")"
$CTL limit 1/51712 >"$WORK/limit.out" || fail "limit failed"
grep -q "^limit 300 requests/s, 50 MiB/s;" "$WORK/limit.out" ||
	fail "limit printed: $(cat "$WORK/limit.out")"
assert_node "$(be_path 1)/limit-bytes-per-second" 52428800
$CTL --json limit 1/xvda >"$WORK/limit.json" || fail "limit --json failed"
[ "$(json "$WORK/limit.json" "d['bytes_per_second']")" = 52428800 ] ||
	fail "limit --json: $(cat "$WORK/limit.json")"

# `resize` says old -> new, and what it cannot know.
truncate -s 96M "$WORK/d1.img" || hard_error "truncate failed"
$CTL resize "$NAME1/xvda" >"$WORK/resize.out" || fail "resize failed"
grep -q "^vbd 1/51712 (xvda of $NAME1): 64 MiB -> 96 MiB" "$WORK/resize.out" ||
	fail "resize printed: $(cat "$WORK/resize.out")"
$CTL --json resize 1/xvda >"$WORK/resize.json" || fail "resize --json failed"
[ "$(json "$WORK/resize.json" "(d['devices'][0]['old_sectors'], d['devices'][0]['sectors'])")" = "(196608, 196608)" ] ||
	fail "resize --json: $(cat "$WORK/resize.json")"
$CTL resize 1/xvda | grep -q "96 MiB, unchanged" ||
	fail "an unchanged size: $($CTL resize 1/xvda)"
$CTL resize 2/xvdb >"$WORK/resize.out" || fail "resize 2/xvdb failed"
grep -q "^vbd 2/51728 ($(xs_read /local/domain/2/name)): its guest has not connected yet" \
	"$WORK/resize.out" ||
	fail "resize of a disk not connected: $(cat "$WORK/resize.out")"

# --json everywhere else: log-level, reload, metrics, attach, detach.
truncate -s 4M "$WORK/d3.img" "$WORK/d4.img" || hard_error "truncate failed"
for args in log-level reload metrics "attach $NAME1/xvdc $WORK/d3.img" \
	"detach $NAME1 xvdc"; do
	# shellcheck disable=SC2086
	$CTL --json $args >"$WORK/any.json" || fail "--json $args failed"
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
		"$WORK/any.json" || fail "--json $args: $(cat "$WORK/any.json")"
done
grep -q '"detached":true' "$WORK/any.json" ||
	fail "detach --json: $(cat "$WORK/any.json")"
# attach and detach take a disk as the others do.
$CTL attach 2/xvdc "$WORK/d4.img" >"$WORK/attach.out" ||
	fail "attach 2/xvdc failed"
grep -q "vbd 2/51744: xvdc of domain 2 is $WORK/d4.img" "$WORK/attach.out" ||
	fail "attach 2/xvdc: $(cat "$WORK/attach.out")"
$CTL detach 2/xvdc >"$WORK/detach.out" || fail "detach 2/xvdc failed"
grep -q "vbd 2/51744: xvdc of domain 2 detached" "$WORK/detach.out" ||
	fail "detach 2/xvdc: $(cat "$WORK/detach.out")"

hold_end
assert_daemon_alive
exit 0

#!/bin/sh
# A backing store that fails under a connected guest. The image is a FUSE
# file (libnbd's nbdfuse over nbdkit) whose writes or reads fail with EIO
# while a trigger file exists (nbdkit's error filter: when), a read-only
# one whose reads fail in one region only (nbdkit's ddrescue filter:
# where); then an image on a file system that fills up, and an image
# truncated under the daemon; and writes and reads failing on an NBD
# server (nbdkit's error filter again) behind the daemon's NBD backend.
# Each time the guest gets error answers promptly (not a hang), the
# daemon counts them by disk and operation and keeps serving, the failing
# disk works again once the store does, and another guest does verified
# I/O throughout.
. "$top_srcdir/tests/lib.sh"
requires nbdkit nbdfuse fusermount3
[ -c /dev/fuse ] ||
	skip "no /dev/fuse: a failing image needs FUSE (modprobe fuse)"
xensim_setup
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

SEED=77
SECTORS=32768 # 16 MiB

# fuse_image NAME NBDKIT-ARGS...: $WORK/NAME/disk.img, served by nbdkit
# through nbdfuse, over a copy of the pattern (file plugin on
# $WORK/NAME.base).
fuse_image() {
	f_dir=$WORK/$1
	shift
	write_pattern "$f_dir.base" "$SECTORS" "$SEED"
	mkdir "$f_dir" || hard_error "mkdir $f_dir"
	nbdfuse "$f_dir/disk.img" --command nbdkit -s "$@" \
		>"$f_dir.log" 2>&1 &
	SCRATCH_MOUNTS="$SCRATCH_MOUNTS $f_dir"
	n=50
	while [ ! -e "$f_dir/disk.img" ] && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	[ -e "$f_dir/disk.img" ] ||
		skip "nbdfuse cannot mount here: $(cat "$f_dir.log")"
}

# guest_on DOMID IMAGE [toolstack options]: a domain whose disk is IMAGE.
guest_on() {
	g_dom=$1
	g_img=$2
	shift 2
	"$TOOLSTACK" create "$g_dom" >>"$WORK/toolstack.log" 2>&1 ||
		fail "create dom $g_dom failed"
	# shellcheck disable=SC2086 # SCRIPT_OPT is empty or one option
	"$TOOLSTACK" attach "$g_dom" "$g_img" xvda "$@" $SCRIPT_OPT \
		>>"$WORK/toolstack.log" 2>&1 || fail "attach dom $g_dom failed"
}

# fails_promptly DOMID OP WHAT BLKFRONT-ARGS...: the guest's run must end
# within 15 s with an error answer to an OP (READ or WRITE) request, not
# a timeout; while it still holds its connection, blkbackctl counts OP
# errors on that disk; once it is gone, the daemon's log line for the
# disk says so too.
fails_promptly() {
	p_dom=$1
	p_op=$2
	p_what=$3
	shift 3
	p_out=$WORK/front-$p_dom.out
	hold_start "$p_dom" --timeout-ms 20000 --hold "$@"
	wait_file_line "$p_out" "CONNECTED" 15 ||
		fail "$p_what: no answer within 15 s: $(cat "$p_out")"
	grep -q "^fact check=workload case=error-answer op=$p_op .* status=ERROR$" \
		"$p_out" || {
		cat "$p_out" >&2
		fail "$p_what: the guest did not get an error answer to a $p_op"
	}
	note "$p_what: $(sed -n 's/^fact check=workload case=//p' "$p_out")"
	p_op=$(echo "$p_op" | tr '[:upper:]' '[:lower:]')
	$CTL --json stats "$p_dom/51712" >"$WORK/stats.json" ||
		fail "blkbackctl stats $p_dom failed"
	p_n=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]));
print(d['devices'][0][sys.argv[2]]['errors'])" "$WORK/stats.json" "$p_op")
	[ "$p_n" -gt 0 ] ||
		fail "$p_what: blkbackctl counts no $p_op errors: $(cat \
			"$WORK/stats.json")"
	exec 3>&-
	wait "$HOLD_PID" && fail "$p_what: the guest's run succeeded"
	wait_file_line "$WORK/blkbackd.log" \
		"vbd $p_dom/51712: .*$p_op [0-9]* ([0-9]* sectors, $p_n errors)" 5 ||
		fail "$p_what: the daemon did not log $p_n $p_op errors for" \
			"vbd $p_dom/51712"
	# And the host's own error, by disk and operation, when it happened.
	grep -q "vbd $p_dom/51712 (xvda): $p_op failed: " "$WORK/blkbackd.log" ||
		fail "$p_what: no host error line for vbd $p_dom/51712's $p_op"
	note "$p_what: $p_n $p_op errors counted and logged"
	assert_daemon_alive
	assert_good_guest "$p_what"
}

guest 1 16M
attach 1
good_guest_start 1

# ---- when: writes, then reads, fail while a trigger file exists ----
fuse_image flaky --filter=error file "$WORK/flaky.base" \
	error-pwrite-rate=1 error-pwrite-file="$WORK/fail-writes" \
	error-pread-rate=1 error-pread-file="$WORK/fail-reads"
guest_on 2 "$WORK/flaky/disk.img"
blkfront 2 --seed "$SEED" --ops 200 --verify >/dev/null
touch "$WORK/fail-writes"
fails_promptly 2 WRITE "writes failing" --seed "$SEED" --ops 200 --verify
rm "$WORK/fail-writes"
blkfront 2 --seed "$SEED" --ops 200 --verify >/dev/null
touch "$WORK/fail-reads"
fails_promptly 2 READ "reads failing" --seed "$SEED" --ops 200 --preexisting
rm "$WORK/fail-reads"
blkfront 2 --seed "$SEED" --ops 200 --preexisting >/dev/null

# ---- where: a read-only disk whose reads fail in one region ----
# 1 MiB readable, then 64 KiB the mapfile marks bad, then the rest.
cat >"$WORK/bad.map" <<EOF
0x00000000 + 1
0x00000000 0x00100000 +
0x00100000 0x00010000 -
0x00110000 0x00EF0000 +
EOF
fuse_image bad --filter=ddrescue file "$WORK/bad.base" \
	ddrescue-mapfile="$WORK/bad.map"
guest_on 3 "$WORK/bad/disk.img" --mode r
fails_promptly 3 READ "a bad region" --seed "$SEED" --preexisting \
	--sequential --queues 1 --depth 1 --bs 4096 --ops 1000
grep -q "^fact check=workload case=error-answer op=READ sector=2048 " \
	"$WORK/front-3.out" ||
	fail "the first failed read is not at the bad region (sector 2048):" \
		"$(grep '^fact' "$WORK/front-3.out")"

# ---- the same, through the daemon's NBD backend ----
write_pattern "$WORK/nbd.base" "$SECTORS" "$SEED"
nbdkit --unix "$WORK/nbd.sock" --pidfile "$WORK/nbd.pid" --filter=error \
	file "$WORK/nbd.base" error-pwrite-rate=1 \
	error-pwrite-file="$WORK/fail-writes" error-pread-rate=1 \
	error-pread-file="$WORK/fail-reads" >"$WORK/nbd.log" 2>&1 ||
	fail "nbdkit did not start: $(cat "$WORK/nbd.log")"
track_pid $(cat "$WORK/nbd.pid")
guest_on 6 "nbd+unix:///?socket=$WORK/nbd.sock"
touch "$WORK/fail-writes"
fails_promptly 6 WRITE "NBD writes failing" --seed "$SEED" --ops 200 --verify
rm "$WORK/fail-writes"
touch "$WORK/fail-reads"
fails_promptly 6 READ "NBD reads failing" --seed "$SEED" --ops 200 \
	--preexisting
rm "$WORK/fail-reads"
blkfront 6 --seed "$SEED" --ops 200 --verify >/dev/null

# ---- a full file system ----
mkdir "$WORK/small"
if mount -t tmpfs -o size=4m tmpfs "$WORK/small" 2>"$WORK/mount.err"; then
	SCRATCH_MOUNTS="$SCRATCH_MOUNTS $WORK/small"
	full_img=$WORK/small/disk.img
	truncate -s 16M "$full_img"
	fill_more() { mount -o remount,size=32m "$WORK/small"; }
	note "a full file system: a 4 MiB tmpfs"
else
	# No mount here: a FUSE file whose writes fail with ENOSPC.
	fuse_image full --filter=error file "$WORK/full.base" \
		error-pwrite=ENOSPC error-pwrite-rate=1 \
		error-pwrite-file="$WORK/full-now"
	touch "$WORK/full-now"
	full_img=$WORK/full/disk.img
	fill_more() { rm "$WORK/full-now"; }
	note "a full file system: ENOSPC from nbdkit" \
		"(mount: $(cat "$WORK/mount.err"))"
fi
guest_on 4 "$full_img"
fails_promptly 4 WRITE "a full file system" --fill --ops 10 --bs 65536
fill_more
blkfront 4 --ops 300 --verify >/dev/null

# ---- an image truncated under the daemon ----
guest 5 16M
write_pattern "$WORK/d5.img" "$SECTORS" "$SEED"
attach 5
blkfront 5 --seed "$SEED" --ops 100 --preexisting >/dev/null
truncate -s 8M "$WORK/d5.img"
fails_promptly 5 READ "a truncated image" --seed "$SEED" --preexisting \
	--sequential --queues 1 --depth 1 --bs 65536 --ops 1000
grep -q "^fact check=workload case=error-answer op=READ sector=16384 " \
	"$WORK/front-5.out" ||
	fail "the first failed read is not at the new end (sector 16384):" \
		"$(grep '^fact' "$WORK/front-5.out")"
size=$(stat -c %s "$WORK/d5.img")
[ "$size" -eq 8388608 ] || fail "the truncated image grew to $size bytes"

good_guest_stop 1
assert_daemon_alive
note "the well-behaved guest completed $GOOD_RUNS verified runs"
exit 0

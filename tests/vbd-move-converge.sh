#!/bin/sh
# A live move converges under a guest writing random pages over the whole
# disk at a steady rate: 2000 random 4 KiB writes a second (the disk's I/O
# limit) over a 128 MiB image, moved at the default rate. Each pass leaves
# less dirty, the last well under half the first (the map tracks pages:
# with 64 KiB chunks each pass left most of the image dirty again, and the
# move never switched while the guest wrote), and the move switches within
# 12 s, while the guest still writes. The guest verifies what it reads
# back: no error, no wrong data.
#
# To measure at another size or rate, e.g. issue 31's 1 GiB:
#   MOVE_CONVERGE_IMAGE_MIB=1024 MOVE_CONVERGE_IOPS=2000 \
#     MOVE_CONVERGE_SECONDS=60 make -C build check TESTS=tests/vbd-move-converge.sh
# (the guest writes for SECONDS; the move must switch within SECONDS - 3)
# and read the passes and the pause in build/tests/vbd-move-converge.log.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-move.sh"
requires python3
MIB=${MOVE_CONVERGE_IMAGE_MIB:-128}
IOPS=${MOVE_CONVERGE_IOPS:-2000}
RUN_S=${MOVE_CONVERGE_SECONDS:-15}
xensim_setup
DIR=$WORK/images
xattr_dir "$DIR"
start_daemon
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"

# random_guest N MIB: guest N, writing and verifying random pages over
# an image of MIB MiB at $IOPS requests a second for $RUN_S s.
random_guest() {
	truncate -s "${2}M" "$DIR/d$1.img" || hard_error "truncate"
	"$TOOLSTACK" create "$1" >>"$WORK/toolstack.log" 2>&1 ||
		fail "create dom $1"
	attach "$1" xvda "$DIR/d$1.img"
	$CTL limit "$1/xvda" --iops "$IOPS" >/dev/null || fail "blkbackctl limit"
	blkfront_bg "$1" --seconds "$RUN_S" --depth 8 --bs 4096 --verify
	eval "GUEST_$1=\$BG_PID"
}

# The first: converges.
random_guest 1 "$MIB"
sleep 2
t0=$(now_ms)
timeout $((RUN_S - 3)) $CTL move --wait 1/xvda "$DIR/d1-new.img" >"$WORK/move1.out" 2>&1 ||
	fail "the move under $IOPS random writes a second did not switch" \
		"within $((RUN_S - 3)) s: $(cat "$WORK/move1.out"); $(grep 'pass [0-9]* ended' "$WORK/blkbackd.log" | tail -n 3)"
grep 'vbd 1/51712: move to .*: pass [0-9]* ended' "$WORK/blkbackd.log" \
	>"$WORK/passes1" || fail "no pass was logged"
# Converging: after the first pass (the whole image) some pages were
# dirty again, and the last pass left well under half as many.
python3 - "$WORK/passes1" <<'PY' || fail "the dirty bytes did not shrink: $(cat "$WORK/passes1")"
import re, sys
dirty = [float(m.group(1)) for m in
         (re.search(r"([0-9.]+) MiB dirty", l) for l in open(sys.argv[1])) if m]
print("dirty after each pass (MiB):", dirty)
sys.exit(0 if len(dirty) >= 2 and dirty[0] > 0 and dirty[-1] < dirty[0] / 2
         else 1)
PY
note "switched in $(($(now_ms) - t0)) ms after $(wc -l <"$WORK/passes1") passes: $(cat "$WORK/move1.out")"

kill -0 "$GUEST_1" 2>/dev/null ||
	fail "the guest stopped writing before the move switched: not judged"
blkfront_wait 1 "$GUEST_1" "the guest failed during the move"
exit 0

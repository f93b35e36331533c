#!/bin/sh
# Debian 13's own xentop, its libxenstat 4.20 unchanged, shows a vbd3
# disk served by blkbackd with its read and write counters moving while
# the guest works. The Debian 13 packages (libxenmisc4.20, xen-utils-4.20,
# libxen-dev and the libraries they need, libc6 included) are unpacked
# into BLKBACKD_XENSTAT420_ROOT by tests/xenstat420-root.sh, which needs
# Debian's package archive; without it the test is skipped. There is no
# hypervisor here: tests/fake-xenctrl.c answers the few libxenctrl calls
# libxenstat makes (the domain list, from the simulator's xenstore), and
# the sysfs entry Linux's xenbus makes for every backend device
# (/sys/bus/xen-backend/devices/vbd3-DOMID-DEVID, where libxenstat looks
# for disks) is made in a mount namespace of its own. What libxenstat
# reads for the disk, the kthread-pid node and the statistics file, is
# the daemon's.
. "$top_srcdir/tests/lib.sh"
ROOT=${BLKBACKD_XENSTAT420_ROOT:-$top_builddir/tests/xenstat420-root}
if [ ! -x "$ROOT/usr/lib/xen-4.20/bin/xentop" ]; then
	sh "$top_srcdir/tests/xenstat420-root.sh" "$ROOT" >"${TMPDIR:-/tmp}/xenstat420-root.$$.log" 2>&1 ||
		skip "no Debian 13 xentop: tests/xenstat420-root.sh $ROOT failed ($(tail -n 1 "${TMPDIR:-/tmp}/xenstat420-root.$$.log"))"
	rm -f "${TMPDIR:-/tmp}/xenstat420-root.$$.log"
fi
requires unshare
unshare -m true 2>/dev/null || skip "cannot make a mount namespace (unshare -m)"
LDSO=$ROOT/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
[ -x "$LDSO" ] || LDSO=$ROOT/lib64/ld-linux-x86-64.so.2
xensim_setup
mkdir "$WORK/fake" || hard_error "mkdir failed"
${CC:-cc} -shared -fPIC -O2 -o "$WORK/fake/libxenctrl.so.4.20" \
	-Wl,-soname,libxenctrl.so.4.20 \
	-Wl,--version-script="$top_srcdir/tests/fake-xenctrl.map" \
	-I "$ROOT/usr/include" "$top_srcdir/tests/fake-xenctrl.c" \
	-L "$ROOT/usr/lib/x86_64-linux-gnu" -l:libxenstore.so.4 \
	2>"$WORK/cc.err" || fail "cannot build the fake libxenctrl: $(cat "$WORK/cc.err")"

start_daemon --serve vbd3
guest 2 32M
attach 2 xvda "$WORK/d2.img" --backendtype tap
blkfront_bg 2 --seconds 10 --depth 4 --bs 4096 --verify
wait_node /local/domain/0/backend/vbd3/2/51712/state 4 15 ||
	fail "guest 2 did not connect"
sleep 1

LIBS=$WORK/fake:$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m sh -c 'mount -t tmpfs blkbackd-test /sys/bus &&
	mkdir -p /sys/bus/xen-backend/devices/vbd3-2-51712 &&
	exec "$1" --library-path "$2" "$3" -b -i 2 -d 2 -x' sh \
	"$LDSO" "$LIBS" "$ROOT/usr/lib/xen-4.20/bin/xentop" \
	>"$WORK/xentop.txt" 2>"$WORK/xentop.err" ||
	fail "xentop failed: $(cat "$WORK/xentop.err")"
blkfront_wait 2 "$BG_PID"
cat "$WORK/xentop.txt"

# Two samples; in each the disk's line, "VBD Tapdisk3 51712 [ca: 0] OO: N
# RD: N WR: N RSECT: N WSECT: N"; reads and writes grew from one to the
# next, and the sectors are 8 a request (4 KiB).
grep "VBD Tapdisk3 *51712 " "$WORK/xentop.txt" |
	sed -n 's/.* RD: *\([0-9]*\) *WR: *\([0-9]*\) *RSECT: *\([0-9]*\) *WSECT: *\([0-9]*\).*/\1 \2 \3 \4/p' \
		>"$WORK/counts" || true
[ "$(wc -l <"$WORK/counts")" -eq 2 ] ||
	fail "xentop did not show the vbd3 disk twice: $(cat "$WORK/xentop.txt" "$WORK/xentop.err")"
{
	read -r rd0 wr0 _ _
	read -r rd1 wr1 rs1 ws1
} <"$WORK/counts"
note "xentop: RD $rd0 -> $rd1, WR $wr0 -> $wr1"
if ! [ "$rd0" -gt 0 ] || ! [ "$rd1" -gt "$rd0" ] || ! [ "$wr1" -gt "$wr0" ]; then
	fail "the counters did not move: $(cat "$WORK/counts")"
fi
if [ "$rs1" -ne $((8 * rd1)) ] || [ "$ws1" -ne $((8 * wr1)) ]; then
	fail "sectors are not 8 a request: $(cat "$WORK/counts")"
fi
assert_daemon_alive
exit 0

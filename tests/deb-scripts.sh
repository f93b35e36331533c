#!/bin/sh
# The Debian package's maintainer scripts, run as dpkg runs them (their
# own part: #DEBHELPER# left out, tests/deb-build.sh checks what
# debhelper adds) on a fake host (tests/lib-takeover.sh: the stubs and
# why). postinst on a new installation says that nothing changed and
# what serves the disks, and changes nothing; prerm refuses a removal
# while a real daemon on the simulated host serves a guest, naming it and
# the override, and lets an upgrade or BLKBACKD_FORCE_REMOVE=1 through;
# a daemon that does not answer is a refusal too, said as such;
# postrm's removal deletes the blacklist and loads xen-blkback again,
# but not under backend/vbd devices left behind.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-takeover.sh"

[ -d "$top_srcdir/debian" ] || skip "no debian/ in $top_srcdir (a dist tarball)"
xensim_setup
takeover_host
snippet=$ROOT/etc/modprobe.d/blkbackd.conf
for s in postinst prerm postrm; do
	sed '/^#DEBHELPER#$/d' "$top_srcdir/debian/blkbackd.$s" >"$WORK/$s"
	chmod +x "$WORK/$s"
	if command -v shellcheck >/dev/null; then
		shellcheck -s sh "$WORK/$s" ||
			fail_later "shellcheck finds fault with debian/blkbackd.$s"
	fi
done

# A new installation beside a loaded xen-blkback.
"$WORK/postinst" configure "" >"$WORK/postinst.out" 2>&1 ||
	fail_later "postinst configure failed"
for said in "nothing changed" "blkbackd-takeover on" "serve = vbd3" \
	"xen-blkback is loaded"; do
	grep -qF "$said" "$WORK/postinst.out" ||
		fail_later "postinst does not say '$said': $(cat "$WORK/postinst.out")"
done
[ -e "$snippet" ] && fail_later "postinst wrote $snippet"
grep -v "is-enabled\|is-active" "$WORK/calls" | grep -q . &&
	fail_later "postinst changed the host: $(cat "$WORK/calls")"
"$WORK/postinst" configure 0.1.0 >"$WORK/upgrade.out" 2>&1 ||
	fail_later "postinst configure 0.1.0 failed"
[ -s "$WORK/upgrade.out" ] &&
	fail_later "an upgrade repeats the message: $(cat "$WORK/upgrade.out")"

# No daemon: removal goes ahead.
"$WORK/prerm" remove >"$WORK/prerm0.out" 2>&1 ||
	fail_later "prerm refused with no daemon: $(cat "$WORK/prerm0.out")"

# The daemon serves domain 1: refused, naming it and the override.
start_daemon
guest 1 64M
attach 1
wait_node "$(be_path 1)/state" 2 15 || fail "guest 1 not at InitWait"
if "$WORK/prerm" remove >"$WORK/prerm.out" 2>&1; then
	fail_later "prerm remove succeeded while blkbackd serves domain 1"
fi
grep -q "$WORK/d1.img" "$WORK/prerm.out" &&
	grep -q "BLKBACKD_FORCE_REMOVE=1" "$WORK/prerm.out" ||
	fail_later "the refusal lacks the disk or the override: $(cat "$WORK/prerm.out")"
"$WORK/prerm" upgrade 0.1.1 >"$WORK/prerm-up.out" 2>&1 ||
	fail_later "prerm refused an upgrade: $(cat "$WORK/prerm-up.out")"
BLKBACKD_FORCE_REMOVE=1 "$WORK/prerm" remove >"$WORK/prerm-force.out" 2>&1 ||
	fail_later "BLKBACKD_FORCE_REMOVE=1 did not override"

# A daemon that does not answer (stopped): refused within blkbackd-takeover's
# 10 s, saying so rather than listing no guest.
kill -STOP "$DAEMON_PID"
t0=$(now_ms)
"$WORK/prerm" remove >"$WORK/prerm-hung.out" 2>&1 &&
	fail_later "prerm remove succeeded while blkbackd does not answer"
t=$(($(now_ms) - t0))
kill -CONT "$DAEMON_PID"
[ $t -lt 20000 ] || fail_later "prerm waited $t ms for a stopped daemon"
grep -q "did not say which disks it serves" "$WORK/prerm-hung.out" ||
	fail_later "prerm under a stopped daemon: $(cat "$WORK/prerm-hung.out")"

# Removal under a device left behind: the blacklist goes, xen-blkback is
# not loaded under it.
kernel_backend unload
mkdir "$ROOT/sys/bus/xen-backend/devices/vbd-1-51712"
echo "blacklist xen-blkback" >"$snippet"
: >"$WORK/calls"
"$WORK/postrm" remove >"$WORK/postrm1.out" 2>&1 || fail_later "postrm remove failed"
[ -e "$snippet" ] && fail_later "postrm remove left $snippet"
called "modprobe xen-blkback" &&
	fail_later "postrm loaded xen-blkback under a backend/vbd device"
grep -q "vbd-1-51712" "$WORK/postrm1.out" ||
	fail_later "postrm does not name the device left: $(cat "$WORK/postrm1.out")"

# A plain removal: blacklist gone, xen-blkback loaded again.
rmdir "$ROOT/sys/bus/xen-backend/devices/vbd-1-51712"
echo "blacklist xen-blkback" >"$snippet"
"$WORK/postrm" remove >"$WORK/postrm2.out" 2>&1 || fail_later "postrm remove failed"
[ -e "$snippet" ] && fail_later "postrm remove left $snippet"
called "modprobe xen-blkback" || fail_later "postrm did not load xen-blkback"
"$WORK/postrm" purge >"$WORK/purge.out" 2>&1 || fail_later "postrm purge failed"
finish "maintainer scripts: install says, removal refuses under guests and restores"

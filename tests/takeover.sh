#!/bin/sh
# blkbackd-takeover, the explicit step that hands backend/vbd from
# xen-blkback to blkbackd: `on` is refused while xen-blkback serves a
# guest's disk and names it, else writes the blacklist, unloads the driver
# and enables the service; `off` is refused while blkbackd serves a disk
# (a real daemon on the simulated host, asked by the real blkbackctl),
# else undoes all of it; `guests` lists blkbackd's disks. The commands it
# cannot run here are stubbed (tests/lib-takeover.sh says which and why).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-takeover.sh"

xensim_setup
takeover_host
tk=blkbackd-takeover
snippet=$ROOT/etc/modprobe.d/blkbackd.conf

if command -v shellcheck >/dev/null; then
	shellcheck -s sh "$top_srcdir/tools/blkbackd-takeover" ||
		fail_later "shellcheck finds fault with blkbackd-takeover"
else
	note "no shellcheck: the static check is left out"
fi

$tk >/dev/null 2>&1
[ $? -eq 2 ] || fail_later "no command: not a usage error (exit 2)"
$tk bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail_later "an unknown command: not a usage error (exit 2)"

# xen-blkback serves domain 3's disk: `on` refuses and names it.
mkdir "$ROOT/sys/bus/xen-backend/devices/vbd-3-51712"
ln -s ../../devices/vbd-3-51712 "$ROOT/sys/bus/xen-backend/drivers/vbd/vbd-3-51712"
$tk status >"$WORK/status.out" 2>&1 || fail_later "status failed"
grep -q "xen-blkback is loaded, serving these disks:" "$WORK/status.out" &&
	grep -q "domain 3 (vm3) device 51712" "$WORK/status.out" &&
	grep -q "not taken over" "$WORK/status.out" ||
	fail_later "status: $(cat "$WORK/status.out")"
if $tk on >"$WORK/on-refused.out" 2>&1; then
	fail_later "on succeeded while xen-blkback serves domain 3"
fi
grep -q "domain 3 (vm3) device 51712" "$WORK/on-refused.out" ||
	fail_later "the refusal does not name the guest: $(cat "$WORK/on-refused.out")"
[ -e "$snippet" ] && fail_later "a refused 'on' wrote $snippet"
called "modprobe -r xen-blkback" && fail_later "a refused 'on' unloaded xen-blkback"

# Once that guest is gone: blacklisted, unloaded, enabled, and said so.
rm "$ROOT/sys/bus/xen-backend/drivers/vbd/vbd-3-51712"
$tk on >"$WORK/on.out" 2>&1 || fail_later "on failed: $(cat "$WORK/on.out")"
grep -qx "blacklist xen-blkback" "$snippet" &&
	grep -qx "install xen-blkback /bin/false" "$snippet" ||
	fail_later "$snippet does not keep xen-blkback out"
called "modprobe -r xen-blkback" || fail_later "on did not unload xen-blkback"
called "systemctl enable blkbackd.service" || fail_later "on did not enable blkbackd"
for said in "wrote $snippet" "unloaded xen-blkback" "enabled blkbackd.service" \
	"start blkbackd yourself"; do
	grep -qF "$said" "$WORK/on.out" || fail_later "on did not say '$said'"
done
$tk status >"$WORK/status2.out" 2>&1
grep -q "(taken over)" "$WORK/status2.out" &&
	grep -q "xen-blkback is not loaded" "$WORK/status2.out" &&
	grep -q "blkbackd.service is enabled" "$WORK/status2.out" ||
	fail_later "status after on: $(cat "$WORK/status2.out")"

# No daemon yet: it serves nothing.
$tk guests >"$WORK/guests0.out" 2>&1 && [ ! -s "$WORK/guests0.out" ] ||
	fail_later "guests with no daemon: $(cat "$WORK/guests0.out")"

# The daemon serves domain 1's disk: `off` refuses and names it.
start_daemon
$tk guests >"$WORK/guests1.out" 2>&1 && [ ! -s "$WORK/guests1.out" ] ||
	fail_later "guests with a daemon serving nothing: $(cat "$WORK/guests1.out")"
guest 1 64M
attach 1
wait_node "$(be_path 1)/state" 2 15 || fail "guest 1 not at InitWait"
if $tk guests >"$WORK/guests.out" 2>&1; then
	fail_later "guests: exit 0 while blkbackd serves domain 1"
fi
# blkbackctl list's table (up to a blank line, after which it says what
# waiting disks wait for): its header, then domain 1's disk.
sed '/^$/,$d' "$WORK/guests.out" >"$WORK/guests-table.out"
[ "$(wc -l <"$WORK/guests-table.out")" -eq 2 ] &&
	sed -n 2p "$WORK/guests-table.out" | grep -q "$WORK/d1.img" ||
	fail_later "guests: not a header and domain 1's disk: $(cat "$WORK/guests.out")"
: >"$WORK/calls"
if $tk off >"$WORK/off-refused.out" 2>&1; then
	fail_later "off succeeded while blkbackd serves domain 1"
fi
grep -q "$WORK/d1.img" "$WORK/off-refused.out" ||
	fail_later "the refusal does not name the disk: $(cat "$WORK/off-refused.out")"
[ -e "$snippet" ] || fail_later "a refused 'off' removed $snippet"
[ -s "$WORK/calls" ] && fail_later "a refused 'off' ran: $(cat "$WORK/calls")"

# Detached and the daemon stopped: everything undone.
detach 1
stop_daemon
$tk off >"$WORK/off.out" 2>&1 || fail_later "off failed: $(cat "$WORK/off.out")"
[ -e "$snippet" ] && fail_later "off left $snippet"
called "systemctl disable blkbackd.service" || fail_later "off did not disable blkbackd"
called "modprobe xen-blkback" || fail_later "off did not load xen-blkback"
grep -q "loaded xen-blkback" "$WORK/off.out" || fail_later "off did not say so"

# Set for backend/vbd3 only, the daemon is no business of `off`, and `on`
# warns that it will not serve backend/vbd.
echo vbd3 >"$WORK/serve"
: >"$WORK/calls"
kernel_backend load
$tk off >"$WORK/off3.out" 2>&1 || fail_later "off (vbd3) failed"
grep -q "systemctl" "$WORK/calls" &&
	fail_later "off touched a daemon set to serve = vbd3: $(cat "$WORK/calls")"
$tk on >"$WORK/on3.out" 2>&1 || fail_later "on (vbd3) failed"
grep -q "warning: .*serve = vbd3" "$WORK/on3.out" ||
	fail_later "on did not warn about serve = vbd3: $(cat "$WORK/on3.out")"
finish "blkbackd-takeover refuses under guests, hands over and back"

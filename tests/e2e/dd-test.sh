#!/bin/sh
# The checks of the storage driver domain "blkbackd" of the real-Xen test
# (dom0-test.sh, part driverdomain), run by systemd (e2e-dd.service, after
# blkbackd.service and xldevd.service) in that domain, which booted with
# systemd as PID 1 from a copy of the dom0 root in which dom0 installed
# blkbackd's Debian package with dpkg and did what docs/driver-domain.md
# tells the domain's administrator (the `block` script taken over, the
# xldevd.service of the recipe, both units enabled).
#
# It checks that systemd runs blkbackd.service from the package with the
# unit's hardening in force (Type=notify ready, the capability bounding
# set, no new privileges, the system call filter, its own mount and
# network namespaces, /usr and /proc/sys read-only) and its watchdog fed,
# says E2E-DD-READY, waits for dom0 to ask for the checks (data/e2e-cmd =
# verify in its xenstore home, once the guests it served are gone), checks
# the images, that no loop device was made here, the journal's record of
# the disk dom0 asked for with a missing image (its DOMID and VBD fields),
# stops blkbackd with systemctl and powers off. Verdicts are
# "RESULT PASS|FAIL NAME DETAIL" lines on its console (hvc0).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
IMG=/srv/img
U=blkbackd.service
failed=0

result() {
	echo "RESULT $*"
	[ "$1" != FAIL ] || failed=$((failed + 1))
}

prop() { systemctl show -p "$2" --value "$1"; }

# The end, with or without a failure: what systemd says of the daemon, for
# dom0's record.
finish() {
	echo "E2E-DD-LOG ----- systemctl status $U"
	systemctl status --no-pager -l -n 30 $U 2>&1 | sed 's/^/E2E-DD-LOG /'
	echo "E2E-DONE failed=$failed"
	sync
	systemctl poweroff --force --force
}

# The kernel's view of the unit's sandbox around the running daemon.
hardening_in_force() { # PID
	p=$1 bad=""
	st=/proc/$p/status
	[ "$(sed -n 's/^CapBnd:[[:space:]]*//p' $st)" = 0000000000000002 ] ||
		bad="$bad CapBnd $(sed -n 's/^CapBnd:[[:space:]]*//p' $st) (want CAP_DAC_OVERRIDE alone);"
	[ "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' $st)" = 1 ] || bad="$bad NoNewPrivs unset;"
	[ "$(sed -n 's/^Seccomp:[[:space:]]*//p' $st)" = 2 ] || bad="$bad no seccomp filter;"
	[ "$(readlink /proc/$p/ns/net)" != "$(readlink /proc/1/ns/net)" ] ||
		bad="$bad the host's network namespace;"
	[ "$(readlink /proc/$p/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] ||
		bad="$bad the host's mount namespace;"
	for m in /usr /boot /etc /proc/sys; do
		awk -v m=$m '$5 == m && $6 ~ /(^|,)ro(,|$)/ { f = 1 } END { exit !f }' \
			/proc/$p/mountinfo || bad="$bad $m writable;"
	done
	if [ -z "$bad" ]; then
		result PASS dd-unit-hardening-in-force "pid $p: CapBnd=CAP_DAC_OVERRIDE NoNewPrivs=1 Seccomp=2, own mount and network namespaces, /usr /boot /etc /proc/sys read-only"
	else
		result FAIL dd-unit-hardening-in-force "pid $p:$bad"
	fi
}

if [ "$(cat /proc/1/comm)" = systemd ]; then
	result PASS dd-systemd-is-pid1 "$(systemctl --version | head -n 1), $(cut -d' ' -f1 /proc/uptime) s after the kernel started"
else
	result FAIL dd-systemd-is-pid1 "PID 1 is $(cat /proc/1/comm)"
fi
[ -L /etc/systemd/system/multi-user.target.wants/$U ] &&
	result PASS dd-unit-enabled "$(readlink /etc/systemd/system/multi-user.target.wants/$U)" ||
	result FAIL dd-unit-enabled "no multi-user.target.wants/$U"

state="$(prop $U ActiveState)/$(prop $U SubState)"
pid=$(prop $U MainPID)
if [ "$state" = active/running ] && [ "$(prop $U Type)" = notify ] &&
	[ "$pid" -gt 0 ]; then
	result PASS dd-blkbackd-started-by-systemd "$U $state (Type=notify: READY=1 came), pid $pid, $(prop $U FragmentPath)"
else
	result FAIL dd-blkbackd-started-by-systemd "$U $state, ConditionResult=$(prop $U ConditionResult): $(journalctl -u $U -n 5 -o cat --no-pager | tr '\n' ' ')"
	finish
fi
hardening_in_force "$pid"
if [ "$(systemctl is-active xldevd.service)" = active ]; then
	result PASS dd-xl-devd "xldevd.service active, pid $(prop xldevd.service MainPID)"
else
	result FAIL dd-xl-devd "xldevd.service $(systemctl is-active xldevd.service): $(journalctl -u xldevd.service -n 5 -o cat --no-pager | tr '\n' ' ')"
	finish
fi
wd0=$(prop $U WatchdogTimestampMonotonic)
echo "E2E-DD-READY domain $(xenstore-read domid)"

i=0
until [ "$(xenstore-read data/e2e-cmd 2>/dev/null)" = verify ]; do
	i=$((i + 1))
	[ $i -lt 3600 ] || finish
	sleep 0.5
done

# WatchdogSec=: the daemon's keep-alives reached systemd (the guests took
# longer than the 15 s between two of them) and it was not restarted.
wd1=$(prop $U WatchdogTimestampMonotonic)
if [ "$wd1" -gt "$wd0" ] && [ "$(prop $U NRestarts)" = 0 ] &&
	[ "$(prop $U MainPID)" = "$pid" ]; then
	result PASS dd-watchdog-fed "WatchdogUSec=$(prop $U WatchdogUSec), last keep-alive $(((wd1 - wd0) / 1000000)) s after the one at the checks' start, NRestarts=0"
else
	result FAIL dd-watchdog-fed "WatchdogTimestampMonotonic $wd0 -> $wd1, NRestarts=$(prop $U NRestarts), MainPID $pid -> $(prop $U MainPID)"
fi

# The guest's patterns in the images, and dom0's first one untouched.
for img in a b; do
	f=$IMG/dd-$img.img
	if out=$(e2e-check verify "$f" 40M 16M 22 -d -b 1M 2>&1); then
		result PASS "dd-$img/guest-pattern-in-image"
	else
		result FAIL "dd-$img/guest-pattern-in-image" "$out"
	fi
	if out=$(e2e-check verify "$f" 32M 8M 21 -b 1M 2>&1); then
		result PASS "dd-$img/first-pattern-untouched"
	else
		result FAIL "dd-$img/first-pattern-untouched" "$out"
	fi
	echo "E2E-DD-SUM $img $(dd if="$f" bs=1M skip=40 count=16 2>/dev/null | sha256sum | cut -d' ' -f1)"
done

# No loop device was set up here: none is bound to a file.
loops=$(for f in /sys/block/loop*/loop/backing_file; do
	[ -f "$f" ] && echo "${f#/sys/block/}=$(cat "$f")"
done)
if [ -z "$loops" ]; then
	result PASS dd-no-loop-devices "loop module $(grep -q '^loop ' /proc/modules && echo loaded || echo not loaded)"
else
	result FAIL dd-no-loop-devices "$(echo "$loops" | tr '\n' ' ')"
fi

# The disk dom0 asked for with a missing image: the daemon's refusal in
# the journal, with the disk's fields (data/e2e-refused: the guest's
# domain id as dom0's xl named it).
want=$(xenstore-read data/e2e-refused 2>/dev/null)
entry=$(journalctl -u $U -o json --no-pager \
	--output-fields=MESSAGE,DOMID,VBD,VDEV,ERRNO,PRIORITY |
	grep -F dd-missing.img | head -n 1)
field() { echo "$entry" | sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"; }
journalctl -u $U -o short-monotonic --no-pager | grep -F dd-missing.img |
	sed 's/^/E2E-DD-LOG journal: /'
if [ -n "$entry" ] && [ -n "$(field DOMID)" ] && [ -n "$(field VBD)" ] &&
	{ [ "$want" = unknown ] || [ "$(field DOMID)" = "$want" ]; }; then
	result PASS dd-journal-refused-image "DOMID=$(field DOMID) VBD=$(field VBD) VDEV=$(field VDEV) ERRNO=$(field ERRNO) PRIORITY=$(field PRIORITY): $(field MESSAGE)"
else
	result FAIL dd-journal-refused-image "dom0's guest '$want'; entry: ${entry:-none}"
fi

# systemctl stop: SIGTERM, a clean exit, and the unit says so.
t0=$(cut -d. -f1 /proc/uptime)
systemctl stop $U
res="Result=$(prop $U Result) ExecMainCode=$(prop $U ExecMainCode) ExecMainStatus=$(prop $U ExecMainStatus)"
if [ "$res" = "Result=success ExecMainCode=1 ExecMainStatus=0" ] &&
	[ "$(prop $U ActiveState)" = inactive ]; then
	result PASS dd-systemctl-stop "$res, $(($(cut -d. -f1 /proc/uptime) - t0)) s"
else
	result FAIL dd-systemctl-stop "$res, $(prop $U ActiveState)"
fi
errors=$(journalctl -u $U -p err -o cat --no-pager | grep -vF dd-missing.img)
if [ -n "$errors" ]; then
	result FAIL dd-blkbackd-logged-no-errors "$(echo "$errors" | head -n 5 | tr '\n' ' ')"
else
	result PASS dd-blkbackd-logged-no-errors "but the refusal of dd-missing.img"
fi
finish

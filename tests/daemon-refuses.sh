#!/bin/sh
# blkbackd refuses to start, with a message that says what to do, when the
# kernel's xen-blkback is bound, and rejects bad options.
set -u
daemon="$top_builddir/blkbackd/blkbackd"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

mkdir -p "$tmp/sys/bus/xen-backend/drivers/vbd"
BLKBACKD_SYSFS="$tmp/sys" "$daemon" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -ne 1 ]; then
	echo "FAIL: with xen-blkback bound, exit status $rc, expected 1"
	fail=1
fi
if ! grep -q "modprobe -r xen-blkback" "$tmp/out"; then
	echo "FAIL: the refusal does not say how to unload xen-blkback:"
	cat "$tmp/out"
	fail=1
fi

for bad in "--workers 0" "--workers x" "--cache sometimes" \
	"--log-level loud" "--domid -1" "extra-argument"; do
	# shellcheck disable=SC2086 # word splitting is the point
	"$daemon" $bad >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q "blkbackd" "$tmp/out"; then
		echo "FAIL: 'blkbackd $bad' exited $rc with: $(cat "$tmp/out")"
		fail=1
	fi
done

"$daemon" --version | grep -q "^blkbackd [0-9]" ||
	{ echo "FAIL: --version"; fail=1; }
exit $fail

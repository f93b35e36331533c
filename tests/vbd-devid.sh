#!/bin/sh
# The simulated toolstack numbers devices exactly as libxl does: the
# daemon's backend paths and the frontend's device directory depend on it.
. "$top_srcdir/tests/lib.sh"

[ -x "$TOOLSTACK" ] || fail "xensim-toolstack not built"
while read -r vdev want; do
	got=$("$TOOLSTACK" devid "$vdev") || fail "devid $vdev refused"
	[ "$got" = "$want" ] || fail "devid $vdev = $got, wanted $want"
done <<'LIST'
xvda 51712
xvdb 51728
xvda1 51713
xvdp15 51967
xvdq 268439552
xvdaa 268442112
xvda16 268435472
hda 768
hdb 832
hdc 5632
sda 2048
sdb1 2065
d0p0 51712
d1p2 51730
51712 51712
LIST
for bad in xvd xvdA xvda0 qqq hde xvda256; do
	"$TOOLSTACK" devid "$bad" >/dev/null 2>&1 &&
		fail "devid $bad accepted, libxl refuses it"
done
exit 0

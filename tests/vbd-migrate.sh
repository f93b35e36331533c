#!/bin/sh
# A migration's two ends in one host, as xl migrate to localhost makes
# them: the receiving domain's disk is set up while the sending domain
# still has it. A device of the same VM (/local/domain/N/vm) is offered
# at once and takes the image only when the sender's device lets it go,
# so the receiving guest finds the sender's data and there is never a
# second writer; a device of another VM is still refused. The same for
# an NBD export (nbdkit), where no lock stands between the two ends. And
# for a file between two hosts (two daemons, as on a shared filesystem
# whose locks reach across hosts): the other host's daemon finds the
# lock taken and the holder's name in the file's user.blkbackd.owner
# attribute, offers the disk to the same VM and takes the file once the
# sender let it go.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-nbd.sh"
. "$top_srcdir/tests/lib-migrate.sh"
xensim_setup
requires nbdkit
requires python3
start_daemon

note "an image file"
img=$WORK/d1.img
write_pattern "$img" $((8 * 2048)) 5
sender_and_receiver 1 2 "$img"
# Another VM is refused, as ever.
guest 3 4M
xenstore-write /local/domain/3/vm /vm/5e1f0000-0000-4000-8000-000000000003
attach_must_fail 3 "$img" xvda "holds it writable"
handover 1 2

note "an image file between two hosts (two daemons; its lock is the file's)"
write_pattern "$WORK/far.img" $((8 * 2048)) 6
other_host_start 20
# The sender holds on for 11 s: past 10 the other host says it still waits.
between_hosts 10 11 12 "$WORK/far.img" "holds it writable" 11
grep -q "vbd 11/51712: .* is still locked by the disk on the other host after 10 s" \
	"$WORK/blkbackd-b.log" ||
	fail "the other host did not warn of a hand-over that takes long"
owner=$(python3 -c 'import os, sys
print(os.getxattr(sys.argv[1], "user.blkbackd.owner").decode())' \
	"$WORK/far.img" 2>/dev/null)
[ "$owner" = /vm/5e1f0000-0000-4000-8000-000000000010 ] ||
	fail "the image names '$owner' as the VM that holds it"
other_host_alive

note "an NBD export"
write_pattern "$WORK/n.img" $((8 * 2048)) 5
nbd_server n file "$WORK/n.img"
sender_and_receiver 4 5 "$(uri n)"
handover 4 5
assert_daemon_alive
exit 0

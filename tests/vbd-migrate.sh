#!/bin/sh
# A migration's two ends in one host, as xl migrate to localhost makes
# them: the receiving domain's disk is set up while the sending domain
# still has it. A device of the same VM (/local/domain/N/vm) is offered
# at once and takes the image only when the sender's device lets it go,
# so the receiving guest finds the sender's data and there is never a
# second writer; a device of another VM is still refused. The same for
# an NBD export (nbdkit), where no lock stands between the two ends.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-nbd.sh"
. "$top_srcdir/tests/lib-migrate.sh"
xensim_setup
requires nbdkit
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

note "an NBD export"
write_pattern "$WORK/n.img" $((8 * 2048)) 5
nbd_server n file "$WORK/n.img"
sender_and_receiver 4 5 "$(uri n)"
handover 4 5
assert_daemon_alive
exit 0

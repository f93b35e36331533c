#!/bin/sh
# Disks on NBD servers, started here on unix sockets: nbdkit's file plugin
# (the guest's writes checked byte for byte in the file behind it, and the
# host's pattern read back by the guest), qemu-storage-daemon serving a
# qcow2 image (the guest's data checked after converting it to raw), a
# read-only export refused for a writable disk with the server's reason.
# A server that goes away: tests/vbd-nbd-reconnect.sh.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-nbd.sh"
xensim_setup
requires nbdkit qemu-img qemu-storage-daemon
start_daemon

size=8M
sectors=$((8 * 2048))

# Guest -> server: fill the disk, then compare the file behind the export.
note "nbdkit file plugin: the guest's writes land in the file"
truncate -s "$size" "$WORK/n1.img"
nbd_server n1 file "$WORK/n1.img"
guest 1 "$size"
attach 1 xvda "$(uri n1)"
blkfront 1 --fill --partial --bs 45056 --depth 16 --ops 200 --verify \
	--seed 7 --flush-every 8 >/dev/null
write_pattern "$WORK/expected-7" "$sectors" 7
cmp "$WORK/expected-7" "$WORK/n1.img" ||
	fail "the exported file differs from what the guest wrote"
grep -q "vbd 1/51712: image $(uri n1)," "$WORK/blkbackd.log" ||
	fail "the daemon did not log the NBD image it opened"
detach 1

# Server -> guest: the host's pattern, read and verified by the guest.
note "nbdkit file plugin: the guest reads what the host wrote"
write_pattern "$WORK/n2.img" "$sectors" 99
nbd_server n2 file "$WORK/n2.img"
guest 2 "$size"
attach 2 xvda "$(uri n2)"
blkfront 2 --preexisting --seed 99 --bs 4096 --depth 8 --ops 500 \
	--sequential >/dev/null
detach 2

# qcow2 through qemu-storage-daemon.
note "qemu-storage-daemon: a qcow2 image"
qemu-img create -q -f qcow2 "$WORK/q.qcow2" "$size" ||
	fail "qemu-img create failed"
qemu-storage-daemon \
	--blockdev driver=file,node-name=f,filename="$WORK/q.qcow2" \
	--blockdev driver=qcow2,node-name=q,file=f \
	--nbd-server addr.type=unix,addr.path="$WORK/qsd.sock" \
	--export type=nbd,id=e,node-name=q,name=disk,writable=on \
	>"$WORK/qsd.log" 2>&1 &
qsd_pid=$!
track_pid $qsd_pid
n=50
until [ -S "$WORK/qsd.sock" ]; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "qemu-storage-daemon did not start: $(cat "$WORK/qsd.log")"
	sleep 0.1
done
guest 3 "$size"
attach 3 xvda "nbd+unix:///disk?socket=$WORK/qsd.sock"
blkfront 3 --fill --bs 65536 --depth 8 --ops 128 --verify --seed 5 \
	--flush-every 4 >/dev/null
detach 3
kill "$qsd_pid"
wait "$qsd_pid" 2>/dev/null
qemu-img convert -f qcow2 -O raw "$WORK/q.qcow2" "$WORK/q.raw" ||
	fail "qemu-img convert failed"
write_pattern "$WORK/expected-5" "$sectors" 5
cmp "$WORK/expected-5" "$WORK/q.raw" ||
	fail "the qcow2 image does not hold what the guest wrote"

# A read-only export and a writable disk: refused, with the reason.
note "a read-only export refuses a writable disk"
write_pattern "$WORK/ro.img" "$sectors" 31
nbd_server ro --readonly file "$WORK/ro.img"
guest 4 "$size"
attach_must_fail 4 "$(uri ro)" xvda \
	"vbd 4/51712): cannot open image .*read-only; give the disk access=ro"
attach 4 xvdb "$(uri ro)" --mode r
blkfront 4 --vdev xvdb --check readonly --preexisting --seed 31 \
	--ops 100 >/dev/null
expect_check "$WORK/front-4.out" readonly "a read-only export" \
	readonly_facts 4 "$(be_path 4 51728)"
detach 4 xvdb

exit 0

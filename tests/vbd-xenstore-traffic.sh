#!/bin/sh
# What the daemon asks of xenstored for one device, from attach through
# I/O to detach. Every request walks xenstored's tables, so a backend
# that re-reads a device on each of the dozen events a connection causes
# slows every attach on the host as guests pile up. Counted from
# xenstored's own trace (-T), on the daemon's connection: the one that
# watches backend/vbd.
. "$top_srcdir/tests/lib.sh"

requires_xenstored
scratch_dir
real_xenstored=$XENSTORED_BIN
XENSTORED_BIN=$WORK/xenstored-traced
cat >"$XENSTORED_BIN" <<WRAP
#!/bin/sh
exec "$real_xenstored" -T "$WORK/xenstored.trace" "\$@"
WRAP
chmod +x "$XENSTORED_BIN"
xensim_setup
start_daemon

GUESTS="1 2 3 4"
for d in $GUESTS; do
	guest "$d" 4M
	attach "$d"
	blkfront "$d" --ops 50 --verify >/dev/null
	detach "$d"
done
assert_daemon_alive
stop_daemon

trace=$WORK/xenstored.trace
conn=$(sed -n 's|^IN \([^ ]*\) .* WATCH (/local/domain/0/backend/vbd backend ).*|\1|p' \
	"$trace" | head -n 1)
[ -n "$conn" ] || fail "no watch of backend/vbd in xenstored's trace"
reads=$(grep -c "^IN $conn .* READ " "$trace")
all=$(grep -c "^IN $conn " "$trace")
n=$(echo "$GUESTS" | wc -w)
note "daemon's requests for $n devices: $all, of them $reads reads"
# Measured: 87 reads a device, 150 when each event re-read the device.
# Of the 87, the frontend's ring refs are 32 (16 pages, 2 queues) and the
# device's nodes about 15; the rest are its states, read once for each
# batch of events. How events fall into batches depends on timing: some
# room above 87.
[ "$reads" -le $((110 * n)) ] ||
	fail "$reads reads for $n devices: more than 110 a device"
exit 0

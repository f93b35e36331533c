# A single-node Ceph cluster for the tests, sourced after tests/lib.sh:
# one monitor on a free loopback port and one OSD keeping its objects in
# memory (memstore, 512 MiB at most), no authentication, everything under
# $WORK/ceph and stopped at exit. About ten seconds to start.

CEPH_DIR=$WORK/ceph
CEPH_CONF=$CEPH_DIR/ceph.conf

# ceph_cmd ARGS...: the ceph CLI against the test cluster, never hanging.
ceph_cmd() { timeout 60 ceph -c "$CEPH_CONF" --connect-timeout 20 "$@"; }
rbd_cmd() { timeout 60 rbd -c "$CEPH_CONF" "$@"; }

ceph_write_conf() {
	cat >"$CEPH_CONF" <<EOF
[global]
fsid = $1
mon host = v2:127.0.0.1:$2
auth cluster required = none
auth service required = none
auth client required = none
run dir = $CEPH_DIR/run
admin socket = $CEPH_DIR/run/\$name.asok
log file = $CEPH_DIR/\$name.log
pid file = $CEPH_DIR/run/\$name.pid
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 536870912
osd memory target = 268435456
osd data = $CEPH_DIR/osd
mon data = $CEPH_DIR/mon
ms bind ipv6 = false
EOF
}

# A TCP port nothing listens on now.
ceph_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ceph_track NAME: the daemon NAME (mon.a, osd.0), which forked away, is
# stopped with the test's other background processes.
ceph_track() {
	n=100
	until [ -s "$CEPH_DIR/run/$1.pid" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "$1 wrote no pid file"
		sleep 0.1
	done
	BG_PIDS="$BG_PIDS $(cat "$CEPH_DIR/run/$1.pid")"
}

# ceph_start: the cluster, with an empty pool "rbd" initialised for RBD.
ceph_start() {
	requires ceph-mon ceph-osd ceph rbd monmaptool ceph-authtool python3
	mkdir -p "$CEPH_DIR/mon" "$CEPH_DIR/osd" "$CEPH_DIR/run" ||
		fail "cannot make $CEPH_DIR"
	fsid=$(cat /proc/sys/kernel/random/uuid)
	port=$(ceph_free_port) || fail "no free port for the monitor"
	ceph_write_conf "$fsid" "$port"
	monmaptool --create --addv a "[v2:127.0.0.1:$port]" --fsid "$fsid" \
		"$CEPH_DIR/monmap" >/dev/null || fail "monmaptool failed"
	ceph-authtool --create-keyring "$CEPH_DIR/keyring" --gen-key -n mon. \
		--cap mon 'allow *' >/dev/null || fail "ceph-authtool failed"
	ceph-mon --mkfs -i a --monmap "$CEPH_DIR/monmap" \
		--keyring "$CEPH_DIR/keyring" -c "$CEPH_CONF" ||
		fail "ceph-mon --mkfs failed"
	ceph-mon -i a -c "$CEPH_CONF" || fail "ceph-mon did not start"
	ceph_track mon.a
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	[ "$(ceph_cmd osd new "$osd_uuid" 2>/dev/null)" = 0 ] ||
		fail "the monitor did not create osd.0: $(tail -5 "$CEPH_DIR/mon.a.log")"
	ceph-osd -i 0 --mkfs --osd-uuid "$osd_uuid" -c "$CEPH_CONF" \
		>"$CEPH_DIR/osd-mkfs.log" 2>&1 || fail "ceph-osd --mkfs failed"
	ceph-osd -i 0 -c "$CEPH_CONF" >/dev/null 2>&1 || fail "ceph-osd did not start"
	ceph_track osd.0
	n=300
	until ceph_cmd osd stat 2>/dev/null | grep -q "1 up"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "osd.0 never came up: $(tail -5 "$CEPH_DIR/osd.0.log")"
		sleep 0.1
	done
	ceph_cmd osd pool create rbd 8 >/dev/null 2>&1 ||
		fail "cannot create the rbd pool"
	rbd_cmd pool init rbd || fail "rbd pool init failed"
}

# ceph_pid NAME: the pid of mon.a or osd.0
ceph_pid() { cat "$CEPH_DIR/run/$1.pid"; }

# A single-node Ceph cluster for the tests, sourced after tests/lib.sh:
# tools/ceph/ceph-cluster's (one monitor on loopback, one OSD in memory,
# no authentication) under $WORK/ceph, stopped at exit.

CEPH_DIR=$WORK/ceph
CEPH_CONF=$CEPH_DIR/ceph.conf
CEPH_CLUSTER=$top_builddir/tools/ceph/ceph-cluster

# ceph_cmd ARGS...: the ceph CLI against the test cluster, never hanging.
ceph_cmd() { timeout 60 ceph -c "$CEPH_CONF" --connect-timeout 20 "$@"; }
rbd_cmd() { timeout 60 rbd -c "$CEPH_CONF" "$@"; }

# ceph_pid NAME: the pid of mon.a or osd.0
ceph_pid() { "$CEPH_CLUSTER" pid "$CEPH_DIR" "$1"; }

# ceph_start: the cluster, with an empty pool "rbd" initialised for RBD;
# its daemons are stopped with the test's other background processes.
ceph_start() {
	requires ceph-mon ceph-osd ceph rbd monmaptool ceph-authtool python3
	"$CEPH_CLUSTER" start "$CEPH_DIR" || fail "the Ceph cluster did not start"
	track_pid $(ceph_pid mon.a) $(ceph_pid osd.0)
}

# The throw-away one-node Ceph cluster that tests/vbd-rbd.sh and
# blkback-bench's RBD arm start; installed next to xensim-host. Copied
# into the build tree, where the benchmark looks for it next to itself.
pkglibexec_SCRIPTS += tools/ceph/ceph-cluster
tools/ceph/ceph-cluster: $(srcdir)/tools/ceph/ceph-cluster.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools/ceph && \
	cp $(srcdir)/tools/ceph/ceph-cluster.in $@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += tools/ceph/ceph-cluster
EXTRA_DIST += tools/ceph/ceph-cluster.in

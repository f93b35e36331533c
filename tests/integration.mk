# Integration tests: the real daemon against xensim (tests/lib.sh).
INTEGRATION_TESTS = \
	tests/vbd-devid.sh \
	tests/vbd-connect.sh \
	tests/vbd-data.sh \
	tests/vbd-flush.sh \
	tests/vbd-detach.sh \
	tests/vbd-guest-dies.sh \
	tests/vbd-abi.sh \
	tests/vbd-past-end.sh \
	tests/vbd-hostile.sh \
	tests/vbd-four-guests.sh \
	tests/vbd-indirect.sh \
	tests/vbd-ring-order.sh \
	tests/vbd-multiqueue.sh \
	tests/vbd-persistent.sh \
	tests/vbd-discard.sh \
	tests/vbd-barrier.sh \
	tests/vbd-readonly.sh \
	tests/vbd-resize.sh \
	tests/vbd-reload.sh \
	tests/vbd-restart.sh \
	tests/vbd-stop.sh \
	tests/blkbackctl.sh \
	tests/blkbackctl-metrics.sh \
	tests/blkbackctl-log-level.sh \
	tests/blkbackctl-completion.sh \
	tests/blkbackctl-http.sh \
	tests/host-errors.sh \
	tests/host-errors-enospc.sh \
	tests/host-errors-journal.sh \
	tests/vbd-crash-points.sh \
	tests/vbd-crash-loop.sh \
	tests/vbd-buffer-budget.sh \
	tests/vbd-image-errors.sh \
	tests/vbd-nbd.sh \
	tests/vbd-rbd.sh \
	tests/vbd-hotplug-order.sh \
	tests/vbd-recover.sh \
	tests/vbd-driver-domain.sh \
	tests/vbd-large-sectors.sh \
	tests/vbd-hostile-features.sh \
	tests/vbd-attacks.sh \
	tests/vbd-failing-store.sh \
	tests/vbd-soak.sh \
	tests/vbd-detach-quiet.sh \
	tests/vbd-image-gone.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/lib.sh tests/lib-ceph.sh

# cachestat(2) probe for tests/vbd-flush.sh.
check_PROGRAMS += tests/it-cachestat
tests_it_cachestat_SOURCES = tests/it-cachestat.c

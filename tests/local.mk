# Unit tests of libblk's pure logic.
TESTS += tests/test-request tests/test-ring tests/test-ring-random \
	tests/test-parse tests/test-throttle
check_PROGRAMS += tests/test-request tests/test-ring tests/test-ring-random \
	tests/test-parse tests/test-throttle
EXTRA_DIST += tests/check.h
tests_test_request_SOURCES = tests/test-request.c tests/check.h
tests_test_request_LDADD = libblk/libblk.la
tests_test_ring_SOURCES = tests/test-ring.c tests/check.h
tests_test_ring_LDADD = libblk/libblk.la
tests_test_ring_random_SOURCES = tests/test-ring-random.c tests/check.h
tests_test_ring_random_LDADD = libblk/libblk.la
tests_test_parse_SOURCES = tests/test-parse.c tests/check.h
tests_test_parse_LDADD = libblk/libblk.la
tests_test_throttle_SOURCES = tests/test-throttle.c tests/check.h
tests_test_throttle_LDADD = libblk/libblk.la

# The dirty-block map of a live move, with markers on threads.
TESTS += tests/test-dirty
check_PROGRAMS += tests/test-dirty
tests_test_dirty_SOURCES = tests/test-dirty.c tests/check.h
tests_test_dirty_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_dirty_LDADD = libblk/libblk.la -lpthread

# Copying an image into a new one, holes kept, and the moved-to mark
# (files on a filesystem with user attributes: /var/tmp).
TESTS += tests/test-image-copy
check_PROGRAMS += tests/test-image-copy
tests_test_image_copy_SOURCES = tests/test-image-copy.c tests/check.h
tests_test_image_copy_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_image_copy_LDADD = libblk/libblk.la -lpthread
TESTS += tests/image-copy-rbd.sh tests/image-copy-blockdev.sh
EXTRA_DIST += tests/image-copy-rbd.sh tests/image-copy-blockdev.sh

# The capabilities each kind of image declares (libblk/backend.h).
TESTS += tests/test-image-caps
check_PROGRAMS += tests/test-image-caps
tests_test_image_caps_SOURCES = tests/test-image-caps.c tests/check.h
tests_test_image_caps_LDADD = libblk/libblk.la

# blkback-bench's plot axes: round ticks, plain labels.
TESTS += tests/test-bench-axis
check_PROGRAMS += tests/test-bench-axis
tests_test_bench_axis_SOURCES = tests/test-bench-axis.c tests/check.h \
	tools/bench/axis.c tools/bench/axis.h
tests_test_bench_axis_LDADD = -lm

# blkback-bench's output holds no number that cannot be true.
TESTS += tests/bench-honest.sh
EXTRA_DIST += tests/bench-honest.sh

# The xenstore module's readers and parsers, against the real xenstored.
TESTS += tests/xenbus-nodes.sh
EXTRA_DIST += tests/xenbus-nodes.sh
check_PROGRAMS += tests/test-xenbus
tests_test_xenbus_SOURCES = tests/test-xenbus.c tests/check.h
tests_test_xenbus_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tests_test_xenbus_LDADD = libblk/libblk.la $(XENSTORE_LIBS)

# The device state machine (blkbackd/vbd.c) as a unit, against the real
# xenstored: the daemon's device code with tests/fake-worker.c linked
# instead of blkbackd/worker.c, its one seam (tests/fake-worker.h).
TESTS += tests/vbd-states.sh
EXTRA_DIST += tests/vbd-states.sh
check_PROGRAMS += tests/test-vbd
VBD_UNIT_SOURCES = tests/fake-worker.c tests/fake-worker.h \
	tests/vbd-rig.c tests/vbd-rig.h \
	blkbackd/vbd.c blkbackd/vbd-registry.c blkbackd/vbd-image.c \
	blkbackd/vbd-rings.c blkbackd/vbd-watch.c blkbackd/vbd-limits.c \
	blkbackd/vbd-stats.c blkbackd/vbd-xenstat.c blkbackd/vbd-quiesce.c \
	blkbackd/vbd-quiesce.h blkbackd/opener.c blkbackd/host-errors.c \
	blkbackd/stats-log.c blkbackd/limits.c blkbackd/log.c \
	blkbackd/options.c blkbackd/config-file.c blkbackd/config-read.c \
	blkbackd/vbd-move.c blkbackd/vbd-move.h blkbackd/move-record.c \
	blkbackd/move-record.h blkbackd/vbd-move-resume.c
tests_test_vbd_SOURCES = tests/test-vbd.c tests/check.h \
	tools/xensim/toolstack.c tools/xensim/toolstack.h $(VBD_UNIT_SOURCES)
tests_test_vbd_CPPFLAGS = $(AM_CPPFLAGS) $(BLKBACKD_CONFIG_CPPFLAGS)
tests_test_vbd_CFLAGS = $(AM_CFLAGS) -pthread $(XENSTORE_CFLAGS) \
	$(XENGNTTAB_CFLAGS) $(XENEVTCHN_CFLAGS) $(URING_CFLAGS) \
	$(SYSTEMD_CFLAGS) $(INIH_CFLAGS)
tests_test_vbd_LDADD = libblk/libblk.la tools/xensim/libxensim.la \
	$(XENSTORE_LIBS) $(SYSTEMD_LIBS) $(INIH_LIBS) -lpthread

# A live move's record: durable, and never read from a damaged file.
TESTS += tests/test-move-record
check_PROGRAMS += tests/test-move-record
tests_test_move_record_SOURCES = tests/test-move-record.c tests/check.h \
	blkbackd/move-record.c blkbackd/move-record.h
tests_test_move_record_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS) \
	$(XENGNTTAB_CFLAGS)
tests_test_move_record_LDADD = libblk/libblk.la

# The daemon's refusals, without a hypervisor.
TESTS += tests/daemon-refuses.sh
EXTRA_DIST += tests/daemon-refuses.sh

# The persistent-grant cache, against the simulator's grant table.
TESTS += tests/test-pgrant
check_PROGRAMS += tests/test-pgrant
tests_test_pgrant_SOURCES = tests/test-pgrant.c tests/check.h
tests_test_pgrant_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS)
tests_test_pgrant_LDADD = libblk/libblk.la tools/xensim/libxengnttab.la \
	tools/xensim/libxensim.la
# test-pgrant and test-engine with guest memory the kernel can pin, so
# that persistent-grant mappings are registered buffers.
TESTS += tests/registered-buffers.sh
EXTRA_DIST += tests/registered-buffers.sh

# The engine's pass loop, against the simulator's grant table and event
# channels.
TESTS += tests/test-engine
check_PROGRAMS += tests/test-engine
tests_test_engine_SOURCES = tests/test-engine.c tests/check.h
tests_test_engine_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS) \
	$(XENEVTCHN_CFLAGS)
tests_test_engine_LDADD = libblk/libblk.la tools/xensim/libxengnttab.la \
	tools/xensim/libxenevtchn.la tools/xensim/libxensim-ring.la \
	tools/xensim/libxensim.la

# The option table and blkbackd.conf, through options_parse().
TESTS += tests/test-options
check_PROGRAMS += tests/test-options
tests_test_options_SOURCES = tests/test-options.c tests/check.h \
	blkbackd/options.c blkbackd/config-file.c blkbackd/config-read.c \
	blkbackd/log.c
tests_test_options_CPPFLAGS = $(AM_CPPFLAGS) $(BLKBACKD_CONFIG_CPPFLAGS)
tests_test_options_CFLAGS = $(AM_CFLAGS) -pthread $(INIH_CFLAGS) \
	$(SYSTEMD_CFLAGS)
tests_test_options_LDADD = libblk/libblk.la $(INIH_LIBS) $(SYSTEMD_LIBS) \
	-lpthread
TESTS += tests/check-config.sh
EXTRA_DIST += tests/check-config.sh

# The check `make dist` runs (dist-hook in Makefile.am): every file that a
# shipped file cites is shipped too.
TESTS += tests/dist-docs-test.sh
EXTRA_DIST += tests/dist-docs.sh tests/dist-docs-test.sh

# Integration tests: the real daemon against xensim (tests/lib.sh).
INTEGRATION_TESTS = \
	tests/vbd-devid.sh \
	tests/vbd-vbd3.sh \
	tests/vbd-migrate.sh \
	tests/vbd-xenstore-traffic.sh \
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
	tests/vbd-ring-budget.sh \
	tests/vbd-log-flood.sh \
	tests/vbd-persistent.sh \
	tests/vbd-discard.sh \
	tests/vbd-barrier.sh \
	tests/vbd-readonly.sh \
	tests/vbd-null.sh \
	tests/vbd-resize.sh \
	tests/vbd-limits.sh \
	tests/vbd-reload.sh \
	tests/vbd-restart.sh \
	tests/vbd-ring-move.sh \
	tests/vbd-pin-workers.sh \
	tests/vbd-stop.sh \
	tests/blkbackctl.sh \
	tests/blkbackctl-attach.sh \
	tests/blkbackctl-args.sh \
	tests/blkbackctl-metrics.sh \
	tests/blkbackctl-log-level.sh \
	tests/blkbackctl-completion.sh \
	tests/blkbackctl-http.sh \
	tests/blkbackctl-deadline.sh \
	tests/host-errors.sh \
	tests/host-errors-enospc.sh \
	tests/host-errors-journal.sh \
	tests/vbd-crash-points.sh \
	tests/vbd-crash-loop.sh \
	tests/vbd-buffer-budget.sh \
	tests/vbd-grant-budget.sh \
	tests/vbd-image-errors.sh \
	tests/vbd-hvm-emulated-disk.sh \
	tests/vbd-nbd.sh \
	tests/vbd-nbd-reconnect.sh \
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
	tests/vbd-detach-slow-store.sh \
	tests/vbd-image-gone.sh \
	tests/daemon-watchdog.sh \
	tests/control-slow-client.sh \
	tests/control-no-read.sh \
	tests/control-many-clients.sh \
	tests/control-wrong-uid.sh \
	tests/control-second-daemon.sh \
	tests/store-away-nbd-attach.sh \
	tests/store-away-nbd-restart.sh \
	tests/store-away-nbd-queue.sh \
	tests/store-away-ceph.sh \
	tests/vbd-snapshot.sh \
	tests/vbd-snapshot-refusals.sh \
	tests/vbd-snapshot-copy.sh \
	tests/snapshot-pause.sh
# Live moves (blkbackctl move).
INTEGRATION_TESTS += tests/vbd-move.sh tests/vbd-move-cancel.sh \
	tests/vbd-move-converge.sh \
	tests/vbd-move-rbd.sh \
	tests/move-pause.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/lib.sh tests/stall-probe.py \
	tests/lib-control.sh tests/control-client.py \
	tests/lib-snapshot.sh tests/snapshot-check.py \
	tests/lib-move.sh \
	tests/lib-ceph.sh \
	tests/lib-migrate.sh tests/lib-nbd.sh tests/lib-store-away.sh

# Live moves across SIGKILLs of the daemon: records made by hand, then
# BLKBACKD_MOVE_KILLS kills during moves.
INTEGRATION_TESTS += tests/vbd-move-resume.sh tests/vbd-move-kill.sh
EXTRA_DIST += tests/move-kill-check.py

# cachestat(2) probe for tests/vbd-flush.sh.
check_PROGRAMS += tests/it-cachestat
tests_it_cachestat_SOURCES = tests/it-cachestat.c

# make check-valgrind: a representative part of the integration tests with
# the daemon under valgrind's memcheck (tests/lib.sh, valgrind_prefix); any
# error or leak fails the test. vg-uring-wait.so makes valgrind before 3.23
# able to run the daemon at all (tests/vg-uring-wait.c).
check_LTLIBRARIES = tests/vg-uring-wait.la
tests_vg_uring_wait_la_SOURCES = tests/vg-uring-wait.c
tests_vg_uring_wait_la_CFLAGS = $(AM_CFLAGS) $(URING_CFLAGS)
tests_vg_uring_wait_la_LIBADD = $(URING_LIBS) -ldl
# -rpath: a shared object, although it is never installed.
tests_vg_uring_wait_la_LDFLAGS = -module -avoid-version -shared \
	-no-undefined -rpath '$(abs_builddir)'
VALGRIND_TESTS = \
	tests/vbd-data.sh \
	tests/vbd-flush.sh \
	tests/vbd-multiqueue.sh \
	tests/vbd-detach.sh \
	tests/vbd-detach-slow-store.sh \
	tests/vbd-restart.sh \
	tests/vbd-ring-move.sh \
	tests/vbd-attacks.sh

EXTRA_DIST += tests/valgrind.supp

check-valgrind:
	BLKBACKD_VALGRIND=1 $(MAKE) $(AM_MAKEFLAGS) check \
		TESTS='$(VALGRIND_TESTS)'
.PHONY: check-valgrind

# Issue 29, no shared fate: the configuration file, image locks and owner
# records, each while four other guests run verified I/O
# (tests/lib-bystanders.sh) and under the main loop's stall probe.
SHARED_FATE_CFG_TESTS = \
	tests/config-not-a-file.sh \
	tests/config-hung-fs.sh \
	tests/image-locks.sh \
	tests/image-lock-restart.sh \
	tests/rbd-owner-lock.sh
TESTS += $(SHARED_FATE_CFG_TESTS)
EXTRA_DIST += $(SHARED_FATE_CFG_TESTS) tests/lib-bystanders.sh

# Issue 30: the metrics' size per disk and their cost with many guests,
# blkbackctl top, and the statistics xentop reads for vbd3 disks.
METRICS_TESTS = \
	tests/metrics-series.sh \
	tests/metrics-many-guests.sh \
	tests/blkbackctl-top.sh \
	tests/xentop-vbd3.sh \
	tests/xentop-real.sh
TESTS += $(METRICS_TESTS)
# Debian 13's xentop for xentop-real.sh, unpacked by xenstat420-root.sh
# once (into the build tree) and run against the fake libxenctrl.
EXTRA_DIST += $(METRICS_TESTS) tests/xenstat420-root.sh \
	tests/fake-xenctrl.c tests/fake-xenctrl.map
clean-local: clean-xenstat420-root
clean-xenstat420-root:
	rm -rf tests/xenstat420-root tests/xenstat420-root.apt \
		tests/xenstat420-root.new
.PHONY: clean-xenstat420-root
# Many idle simulated guests in one process (tests/metrics-many-guests.sh).
check_PROGRAMS += tests/idle-hold
tests_idle_hold_SOURCES = tests/idle-hold.c \
	tools/xensim/idle-guests.c tools/xensim/idle-guests.h
tests_idle_hold_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tests_idle_hold_LDADD = tools/xensim/libxensim-guest.la $(XENSTORE_LIBS) \
	-lpthread

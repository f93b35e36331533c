# The fuzz harnesses of the guest-facing parsers (tests/fuzz/README.md).
#
# Each harness is built twice. tests/fuzz/replay-NAME, with the project's
# compiler, feeds it the committed seed corpus in every `make check`
# (tests/fuzz/replay.sh). tests/fuzz/fuzz-NAME, with clang's libFuzzer,
# ASan and UBSan, is built when configure found them (--enable-fuzz):
# `make check` then fuzzes each for a short while (tests/fuzz/fuzz.sh),
# `make fuzz` for longer (FUZZ_SECONDS each, keeping what it finds in
# tests/fuzz/corpus-NAME).

# One per directory of seeds, tests/fuzz/corpus/NAME.
check_PROGRAMS += tests/fuzz/replay-request tests/fuzz/replay-ring \
	tests/fuzz/replay-xenbus tests/fuzz/replay-pgrant \
	tests/fuzz/replay-control tests/fuzz/replay-config \
	tests/fuzz/replay-vbd
tests_fuzz_replay_request_SOURCES = tests/fuzz/request.c \
	tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_request_LDADD = libblk/libblk.la
tests_fuzz_replay_ring_SOURCES = tests/fuzz/ring.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h
tests_fuzz_replay_ring_LDADD = libblk/libblk.la
tests_fuzz_replay_xenbus_SOURCES = tests/fuzz/xenbus.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h
tests_fuzz_replay_xenbus_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tests_fuzz_replay_xenbus_LDADD = libblk/libblk.la
tests_fuzz_replay_pgrant_SOURCES = tests/fuzz/pgrant.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h
tests_fuzz_replay_pgrant_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS)
tests_fuzz_replay_pgrant_LDADD = libblk/libblk.la \
	tools/xensim/libxengnttab.la tools/xensim/libxensim.la
tests_fuzz_replay_control_SOURCES = tests/fuzz/control.c \
	tests/fuzz/replay.c tests/fuzz/fuzz.h blkbackd/control-request.c \
	blkbackd/control-request.h
tests_fuzz_replay_control_LDADD = libblk/libblk.la

# blkbackd.conf's parser with the option table; log_msg() is the harness's.
tests_fuzz_replay_config_SOURCES = tests/fuzz/config.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h blkbackd/config-file.c blkbackd/config-read.c \
	blkbackd/options.c
tests_fuzz_replay_config_CPPFLAGS = $(AM_CPPFLAGS) $(BLKBACKD_CONFIG_CPPFLAGS)
tests_fuzz_replay_config_CFLAGS = $(AM_CFLAGS) -pthread $(INIH_CFLAGS)
tests_fuzz_replay_config_LDADD = libblk/libblk.la $(INIH_LIBS) -lpthread

# The device state machine on xenstore events: the daemon's device code
# (VBD_UNIT_SOURCES, tests/local.mk) with the in-process store, whose
# xs_*() take precedence over libxenstore's (tests/fuzz/xs-store.h).
tests_fuzz_replay_vbd_SOURCES = tests/fuzz/vbd.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h tests/fuzz/xs-store.c tests/fuzz/xs-store.h \
	$(VBD_UNIT_SOURCES)
tests_fuzz_replay_vbd_CPPFLAGS = $(AM_CPPFLAGS) $(BLKBACKD_CONFIG_CPPFLAGS)
tests_fuzz_replay_vbd_CFLAGS = $(AM_CFLAGS) -pthread $(XENSTORE_CFLAGS) \
	$(XENGNTTAB_CFLAGS) $(XENEVTCHN_CFLAGS) $(URING_CFLAGS) \
	$(SYSTEMD_CFLAGS) $(INIH_CFLAGS)
tests_fuzz_replay_vbd_LDADD = libblk/libblk.la $(SYSTEMD_LIBS) $(INIH_LIBS) \
	-lpthread

TESTS += tests/fuzz/fuzz.sh tests/fuzz/replay.sh
EXTRA_DIST += tests/fuzz/replay.sh tests/fuzz/fuzz.sh tests/fuzz/README.md \
	tests/fuzz/make-seeds.py tests/fuzz/corpus

FUZZ_SECONDS = 300
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_LINK = $(FUZZ_CC) $(FUZZ_CFLAGS) $(WARN_CFLAGS) $(AM_CPPFLAGS) \
	$(CPPFLAGS) -o $@
FUZZ_DEPS = $(srcdir)/tests/fuzz/fuzz.h $(srcdir)/libblk/blkif_abi.h \
	$(srcdir)/libblk/request.h $(srcdir)/libblk/ring.h config.h

if HAVE_FUZZ
FUZZ_BINS = tests/fuzz/fuzz-request tests/fuzz/fuzz-ring \
	tests/fuzz/fuzz-xenbus tests/fuzz/fuzz-pgrant tests/fuzz/fuzz-control \
	tests/fuzz/fuzz-config tests/fuzz/fuzz-vbd
check_SCRIPTS = $(FUZZ_BINS)
CLEANFILES += $(FUZZ_BINS)

tests/fuzz/fuzz-request: $(srcdir)/tests/fuzz/request.c \
		$(srcdir)/libblk/request.c $(srcdir)/libblk/ring.c $(FUZZ_DEPS)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_LINK) $(srcdir)/tests/fuzz/request.c \
		$(srcdir)/libblk/request.c $(srcdir)/libblk/ring.c

tests/fuzz/fuzz-ring: $(srcdir)/tests/fuzz/ring.c $(srcdir)/libblk/ring.c \
		$(FUZZ_DEPS)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_LINK) $(srcdir)/tests/fuzz/ring.c \
		$(srcdir)/libblk/ring.c

# Its xs_read() takes precedence over libxenstore's (see the harness).
tests/fuzz/fuzz-xenbus: $(srcdir)/tests/fuzz/xenbus.c \
		$(srcdir)/libblk/xenbus.c $(srcdir)/libblk/xenbus.h \
		$(srcdir)/libblk/parse.c $(srcdir)/libblk/parse.h $(FUZZ_DEPS)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_LINK) $(XENSTORE_CFLAGS) \
		$(srcdir)/tests/fuzz/xenbus.c $(srcdir)/libblk/xenbus.c \
		$(srcdir)/libblk/parse.c $(XENSTORE_LIBS)

# The simulated hypervisor's grant table and the fake libxengnttab, as the
# daemon meets them in the integration tests.
FUZZ_XENSIM_GRANT = $(srcdir)/tools/xensim/fake-gnttab.c \
	$(srcdir)/tools/xensim/sim-state.c $(srcdir)/tools/xensim/sim-grant.c \
	$(srcdir)/tools/xensim/sim-ledger.c \
	$(srcdir)/tools/xensim/sim-evtchn.c \
	$(srcdir)/tools/xensim/sim-domain.c $(srcdir)/tools/xensim/sim-guest.c \
	$(srcdir)/libblk/parse.c
tests/fuzz/fuzz-pgrant: $(srcdir)/tests/fuzz/pgrant.c \
		$(srcdir)/libblk/pgrant.c $(srcdir)/libblk/pgrant.h \
		$(srcdir)/libblk/fixed.c $(srcdir)/libblk/fixed.h \
		$(FUZZ_XENSIM_GRANT) $(FUZZ_DEPS)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_LINK) $(XENGNTTAB_CFLAGS) $(URING_CFLAGS) \
		$(srcdir)/tests/fuzz/pgrant.c $(srcdir)/libblk/pgrant.c \
		$(srcdir)/libblk/fixed.c $(FUZZ_XENSIM_GRANT) $(URING_LIBS)

# The control socket's request line (blkbackd/control-request.c).
tests/fuzz/fuzz-control: $(srcdir)/tests/fuzz/control.c \
		$(srcdir)/blkbackd/control-request.c \
		$(srcdir)/blkbackd/control-request.h \
		$(srcdir)/libblk/parse.c $(srcdir)/libblk/parse.h $(FUZZ_DEPS)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_LINK) $(srcdir)/tests/fuzz/control.c \
		$(srcdir)/blkbackd/control-request.c $(srcdir)/libblk/parse.c

tests/fuzz/fuzz-config: $(srcdir)/tests/fuzz/config.c \
		$(srcdir)/blkbackd/config-file.c $(srcdir)/blkbackd/config-file.h \
		$(srcdir)/blkbackd/config-read.c $(srcdir)/blkbackd/config-read.h \
		$(srcdir)/blkbackd/options.c $(srcdir)/blkbackd/options.h \
		$(srcdir)/libblk/parse.c $(srcdir)/libblk/parse.h $(FUZZ_DEPS)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_LINK) $(BLKBACKD_CONFIG_CPPFLAGS) $(INIH_CFLAGS) \
		$(srcdir)/tests/fuzz/config.c $(srcdir)/blkbackd/config-file.c \
		$(srcdir)/blkbackd/config-read.c $(srcdir)/blkbackd/options.c \
		$(srcdir)/libblk/parse.c $(INIH_LIBS) -lpthread

# The whole of libblk and the daemon's device code, without libxenstore:
# the store's functions are the only xs_*() there are, so that one
# missing is a link error rather than a call into libxenstore.
FUZZ_LIBBLK = $(srcdir)/libblk/request.c $(srcdir)/libblk/ring.c \
	$(srcdir)/libblk/image.c $(srcdir)/libblk/grant_copy.c \
	$(srcdir)/libblk/bounce.c $(srcdir)/libblk/fixed.c \
	$(srcdir)/libblk/pgrant.c $(srcdir)/libblk/engine.c \
	$(srcdir)/libblk/evtchn.c $(srcdir)/libblk/poll.c \
	$(srcdir)/libblk/journal.c $(srcdir)/libblk/stats.c \
	$(srcdir)/libblk/throttle.c $(srcdir)/libblk/dirty.c \
	$(srcdir)/libblk/conn.c \
	$(srcdir)/libblk/io.c $(srcdir)/libblk/backend-file.c \
	$(srcdir)/libblk/backend-nbd.c $(srcdir)/libblk/backend-rbd.c \
	$(srcdir)/libblk/backend-null.c $(srcdir)/libblk/parse.c \
	$(srcdir)/libblk/dynlib.c $(srcdir)/libblk/xenbus.c \
	$(srcdir)/libblk/xenbus-toolstack.c
FUZZ_VBD = $(srcdir)/tests/fuzz/vbd.c $(srcdir)/tests/fuzz/xs-store.c \
	$(srcdir)/tests/fake-worker.c $(srcdir)/tests/vbd-rig.c \
	$(srcdir)/blkbackd/vbd.c $(srcdir)/blkbackd/vbd-registry.c \
	$(srcdir)/blkbackd/vbd-image.c $(srcdir)/blkbackd/vbd-rings.c \
	$(srcdir)/blkbackd/vbd-watch.c $(srcdir)/blkbackd/vbd-limits.c \
	$(srcdir)/blkbackd/vbd-stats.c $(srcdir)/blkbackd/vbd-xenstat.c \
	$(srcdir)/blkbackd/vbd-quiesce.c $(srcdir)/blkbackd/opener.c \
	$(srcdir)/blkbackd/host-errors.c $(srcdir)/blkbackd/stats-log.c \
	$(srcdir)/blkbackd/limits.c $(srcdir)/blkbackd/log.c \
	$(srcdir)/blkbackd/options.c $(srcdir)/blkbackd/config-file.c \
	$(srcdir)/blkbackd/config-read.c \
	$(srcdir)/blkbackd/vbd-move.c $(srcdir)/blkbackd/move-record.c \
	$(srcdir)/blkbackd/vbd-move-resume.c $(srcdir)/libblk/image-copy.c
tests/fuzz/fuzz-vbd: $(FUZZ_VBD) $(FUZZ_LIBBLK) \
		$(srcdir)/tests/fuzz/xs-store.h $(srcdir)/tests/fake-worker.h \
		$(srcdir)/tests/vbd-rig.h $(srcdir)/blkbackd/vbd-internal.h \
		$(srcdir)/blkbackd/vbd.h $(srcdir)/blkbackd/vbd-quiesce.h \
		$(FUZZ_DEPS)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_LINK) -pthread $(BLKBACKD_CONFIG_CPPFLAGS) \
		$(XENSTORE_CFLAGS) $(XENGNTTAB_CFLAGS) $(XENEVTCHN_CFLAGS) \
		$(URING_CFLAGS) $(NBD_CFLAGS) $(SYSTEMD_CFLAGS) $(INIH_CFLAGS) \
		$(FUZZ_VBD) $(FUZZ_LIBBLK) $(XENGNTTAB_LIBS) $(XENEVTCHN_LIBS) \
		$(URING_LIBS) $(SYSTEMD_LIBS) $(INIH_LIBS) -ldl -lpthread

fuzz: $(FUZZ_BINS)
	BLKBACKD_FUZZ_SECONDS=$(FUZZ_SECONDS) BLKBACKD_FUZZ_KEEP=1 \
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/fuzz/fuzz.sh
else
fuzz:
	@echo "make fuzz: configure found no clang with libFuzzer;" \
		"apt-get install clang libclang-rt-14-dev, then rerun" \
		"configure with --enable-fuzz" >&2; exit 1
endif
.PHONY: fuzz

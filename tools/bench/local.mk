# blkback-bench: N concurrent guests through raw io_uring, the loop device
# (buffered and direct I/O) and blkbackd under xensim, in one run.
# Installed, it finds the daemon in $(sbindir) and the simulated host in
# $(pkglibexecdir); run from the build tree, it uses the ones built here.

bin_PROGRAMS += tools/bench/blkback-bench
tools_bench_blkback_bench_SOURCES = \
	tools/bench/blkback-bench.c \
	tools/bench/options.c tools/bench/options.h \
	tools/bench/job.c tools/bench/job.h \
	tools/bench/latency.c tools/bench/latency.h \
	tools/bench/format.c tools/bench/format.h \
	tools/bench/progress.c tools/bench/progress.h \
	tools/bench/axis.c tools/bench/axis.h \
	tools/bench/handoff.c tools/bench/handoff.h \
	tools/bench/engine.h \
	tools/bench/engine-uring.c tools/bench/engine-uring.h \
	tools/bench/engine-blkif.c tools/bench/engine-blkif.h \
	tools/bench/runner.c tools/bench/runner.h \
	tools/bench/guests.c tools/bench/guests.h \
	tools/bench/cleanup.c tools/bench/cleanup.h \
	tools/bench/cpu.c tools/bench/cpu.h \
	tools/bench/diskstat.c tools/bench/diskstat.h \
	tools/bench/procinfo.c tools/bench/procinfo.h \
	tools/bench/syscount.c tools/bench/syscount.h \
	tools/bench/idle.c tools/bench/idle.h \
	tools/xensim/idle-guests.c tools/xensim/idle-guests.h \
	tools/bench/loopdev.c tools/bench/loopdev.h \
	tools/bench/nbdserve.c tools/bench/nbdserve.h \
	tools/bench/rbdserve.c tools/bench/rbdserve.h \
	tools/bench/images.c tools/bench/images.h \
	tools/bench/xenhost.c tools/bench/xenhost.h \
	tools/bench/results.c tools/bench/results.h \
	tools/bench/report.c tools/bench/report-json.c \
	tools/bench/report-svg.c tools/bench/report.h
tools_bench_blkback_bench_CPPFLAGS = $(AM_CPPFLAGS) \
	-DBENCH_SBINDIR='"$(sbindir)"' \
	-DBENCH_PKGLIBEXECDIR='"$(pkglibexecdir)"'
tools_bench_blkback_bench_CFLAGS = $(AM_CFLAGS) $(URING_CFLAGS) \
	$(JSONC_CFLAGS) $(XENSTORE_CFLAGS)
tools_bench_blkback_bench_LDADD = tools/xensim/libxensim-guest.la \
	$(URING_LIBS) $(JSONC_LIBS) $(XENSTORE_LIBS) -lm -lpthread

dist_man_MANS += man/blkback-bench.1

# A short run of every job and arm that checks the outputs, not timings.
TESTS += tests/bench-smoke.sh
EXTRA_DIST += tests/bench-smoke.sh

# What the `make demo` run of the benchmark writes into the build tree.
CLEANFILES += tools/bench/demo.csv tools/bench/demo.json tools/bench/demo.svg

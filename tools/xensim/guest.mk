# xensim guest side: the simulated toolstack (xl), the simulated blkfront
# with its workloads, and `xensim`, the one command that runs a whole
# simulated host. Nothing here is installed: it exists for tests and demos.

noinst_LTLIBRARIES += tools/xensim/libxensim-guest.la
tools_xensim_libxensim_guest_la_SOURCES = \
	libblk/xenbus.c libblk/xenbus.h \
	tools/xensim/toolstack.c tools/xensim/toolstack.h \
	tools/xensim/frontend.c tools/xensim/frontend.h \
	tools/xensim/workload.c tools/xensim/workload-checks.c \
	tools/xensim/workload-attacks.c tools/xensim/workload-check.h \
	tools/xensim/workload.h
tools_xensim_libxensim_guest_la_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tools_xensim_libxensim_guest_la_LIBADD = -lpthread \
	tools/xensim/libxensim.la $(XENSTORE_LIBS)

noinst_PROGRAMS += tools/xensim/xensim-toolstack tools/xensim/xensim-blkfront
tools_xensim_xensim_toolstack_SOURCES = tools/xensim/xensim-toolstack.c
tools_xensim_xensim_toolstack_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tools_xensim_xensim_toolstack_LDADD = tools/xensim/libxensim-guest.la
tools_xensim_xensim_blkfront_SOURCES = tools/xensim/xensim-blkfront.c
tools_xensim_xensim_blkfront_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tools_xensim_xensim_blkfront_LDADD = tools/xensim/libxensim-guest.la

# The one command and the feature benchmark, with the build and source
# trees baked in.
noinst_SCRIPTS = tools/xensim/xensim tools/xensim/xensim-featbench
EXTRA_DIST += tools/xensim/xensim.in tools/xensim/xensim-featbench.in
CLEANFILES += tools/xensim/xensim tools/xensim/xensim-featbench
xensim_bake = $(MKDIR_P) $(@D) && \
	sed -e 's|@abs_top_builddir[@]|$(abs_top_builddir)|g' \
	    -e 's|@abs_top_srcdir[@]|$(abs_top_srcdir)|g' \
	    -e 's|@XENSTORED[@]|$(XENSTORED)|g' \
		$(srcdir)/$@.in >$@.tmp && \
	chmod +x $@.tmp && mv -f $@.tmp $@
tools/xensim/xensim: $(srcdir)/tools/xensim/xensim.in Makefile
	$(AM_V_GEN)$(xensim_bake)
tools/xensim/xensim-featbench: $(srcdir)/tools/xensim/xensim-featbench.in \
		Makefile
	$(AM_V_GEN)$(xensim_bake)

# `make demo`: four guests, verified I/O for a few seconds each, sparse
# images in a temporary directory; then a short concurrent-guest benchmark
# (the loop arms need root to make loop devices).
demo: all
	$(SHELL) tools/xensim/xensim run --guests 4 --size 256M --seconds 5
	arms=raw,blkbackd; [ "$$(id -u)" -ne 0 ] || arms=raw,loop,loop-dio,blkbackd; \
	tools/bench/blkback-bench --guests 1,4,10 --size 16M --arms $$arms \
		--out tools/bench/demo

# `make featbench`: what each protocol feature buys (not a test).
featbench: all
	$(SHELL) tools/xensim/xensim-featbench
.PHONY: demo featbench

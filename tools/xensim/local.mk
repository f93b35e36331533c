# xensim, hypervisor side: the simulated host's shared state (libxensim),
# the fake libxengnttab.so.1/libxenevtchn.so.1 the backend loads through
# LD_LIBRARY_PATH, the xenstored shim, xensim-host and xensim-stat.
# The fakes and the shim go to $(xensimlibdir), off the library path.

xensimlibdir = $(pkglibdir)/xensim

# The simulated host itself (xensim.h), linked into everything below and
# into the simulated guests and toolstack.
noinst_LTLIBRARIES += tools/xensim/libxensim.la
tools_xensim_libxensim_la_SOURCES = \
	tools/xensim/xensim.h \
	tools/xensim/sim-internal.h \
	tools/xensim/sim-state.c \
	tools/xensim/sim-grant.c \
	tools/xensim/sim-ledger.c \
	tools/xensim/sim-evtchn.c \
	tools/xensim/sim-domain.c \
	tools/xensim/sim-guest.c \
	libblk/parse.c libblk/parse.h
tools_xensim_libxensim_la_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS)

xensimlib_LTLIBRARIES = \
	tools/xensim/libxengnttab.la \
	tools/xensim/libxenevtchn.la \
	tools/xensim/xsdshim.la

# Same SONAMEs as the real libraries (libtool: current - age = 1).
XENSIM_FAKE_LDFLAGS = -version-info 1:2:0 -no-undefined

tools_xensim_libxengnttab_la_SOURCES = tools/xensim/fake-gnttab.c
tools_xensim_libxengnttab_la_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS)
tools_xensim_libxengnttab_la_LIBADD = tools/xensim/libxensim.la
tools_xensim_libxengnttab_la_LDFLAGS = $(XENSIM_FAKE_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/tools/xensim/fake-gnttab.map
EXTRA_tools_xensim_libxengnttab_la_DEPENDENCIES = \
	$(srcdir)/tools/xensim/fake-gnttab.map

tools_xensim_libxenevtchn_la_SOURCES = tools/xensim/fake-evtchn.c
tools_xensim_libxenevtchn_la_CFLAGS = $(AM_CFLAGS) $(XENEVTCHN_CFLAGS)
tools_xensim_libxenevtchn_la_LIBADD = tools/xensim/libxensim.la
tools_xensim_libxenevtchn_la_LDFLAGS = $(XENSIM_FAKE_LDFLAGS) \
	-Wl,--version-script=$(srcdir)/tools/xensim/fake-evtchn.map
EXTRA_tools_xensim_libxenevtchn_la_DEPENDENCIES = \
	$(srcdir)/tools/xensim/fake-evtchn.map

tools_xensim_xsdshim_la_SOURCES = tools/xensim/xsdshim.c
tools_xensim_xsdshim_la_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS) \
	$(XENEVTCHN_CFLAGS)
tools_xensim_xsdshim_la_LIBADD = tools/xensim/libxensim.la
tools_xensim_xsdshim_la_LDFLAGS = -module -avoid-version -shared \
	-no-undefined -Wl,--version-script=$(srcdir)/tools/xensim/xsdshim.map
EXTRA_tools_xensim_xsdshim_la_DEPENDENCIES = \
	$(srcdir)/tools/xensim/xsdshim.map

pkglibexec_PROGRAMS += tools/xensim/xensim-stat
tools_xensim_xensim_stat_SOURCES = tools/xensim/xensim-stat.c
tools_xensim_xensim_stat_LDADD = tools/xensim/libxensim.la

pkglibexec_SCRIPTS = tools/xensim/xensim-host
tools/xensim/xensim-host: $(srcdir)/tools/xensim/xensim-host.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools/xensim && \
	sed -e 's|@XENSTORED[@]|$(XENSTORED)|g' \
	    -e 's|@xensimlibdir[@]|$(xensimlibdir)|g' \
	    -e 's|@pkglibexecdir[@]|$(pkglibexecdir)|g' \
	    $(srcdir)/tools/xensim/xensim-host.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += tools/xensim/xensim-host

EXTRA_DIST += \
	tools/xensim/xensim-host.in \
	tools/xensim/fake-gnttab.map \
	tools/xensim/fake-evtchn.map \
	tools/xensim/xsdshim.map

# Unit tests: the backend side through the fake libraries, the guest side
# through libxensim.
check_PROGRAMS += tests/xensim-grant tests/xensim-evtchn \
	tests/xensim-xsintro tests/xensim-reallink
TESTS += tests/xensim-grant tests/xensim-evtchn tests/xensim-host.sh
EXTRA_DIST += tests/xensim-host.sh

tests_xensim_grant_SOURCES = tests/xensim-grant.c tests/check.h
tests_xensim_grant_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS)
tests_xensim_grant_LDADD = tools/xensim/libxengnttab.la \
	tools/xensim/libxensim.la

tests_xensim_evtchn_SOURCES = tests/xensim-evtchn.c tests/check.h
tests_xensim_evtchn_CFLAGS = $(AM_CFLAGS) $(XENEVTCHN_CFLAGS)
tests_xensim_evtchn_LDADD = tools/xensim/libxenevtchn.la \
	tools/xensim/libxensim.la

# Talks to xenstored under the shim; run by xensim-host.sh.
tests_xensim_xsintro_SOURCES = tests/xensim-xsintro.c tests/check.h
tests_xensim_xsintro_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tests_xensim_xsintro_LDADD = tools/xensim/libxensim.la $(XENSTORE_LIBS)

# Linked against the REAL libraries, run with the fakes in their place.
tests_xensim_reallink_SOURCES = tests/xensim-reallink.c
tests_xensim_reallink_CFLAGS = $(AM_CFLAGS) $(XENGNTTAB_CFLAGS) \
	$(XENEVTCHN_CFLAGS)
tests_xensim_reallink_LDADD = $(XENGNTTAB_LIBS) $(XENEVTCHN_LIBS)

# xensim guest side: the simulated toolstack (xl), the simulated blkfront
# with its workloads, and `xensim`, the one command that runs a whole
# simulated host. Nothing here is installed: it exists for tests and demos.

# The shared test guest: one blkif ring as a guest keeps it, for the
# simulated blkfront and for C tests that drive a backend themselves.
noinst_LTLIBRARIES += tools/xensim/libxensim-ring.la
tools_xensim_libxensim_ring_la_SOURCES = \
	tools/xensim/guest-ring.c tools/xensim/guest-ring.h

noinst_LTLIBRARIES += tools/xensim/libxensim-guest.la
tools_xensim_libxensim_guest_la_SOURCES = \
	libblk/xenbus.c libblk/xenbus.h \
	libblk/toolstack.c libblk/toolstack.h \
	tools/xensim/toolstack.c tools/xensim/toolstack.h \
	tools/xensim/frontend.h tools/xensim/frontend-internal.h \
	tools/xensim/frontend.c tools/xensim/frontend-io.c \
	tools/xensim/frontend-hostile.c tools/xensim/frontend-close.c \
	tools/xensim/workload.c tools/xensim/workload-checks.c \
	tools/xensim/workload-facts.c \
	tools/xensim/workload-attacks.c tools/xensim/workload-check.h \
	tools/xensim/workload-numbered.c \
	tools/xensim/workload.h
tools_xensim_libxensim_guest_la_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
tools_xensim_libxensim_guest_la_LIBADD = -lpthread \
	tools/xensim/libxensim-ring.la tools/xensim/libxensim.la \
	$(XENSTORE_LIBS)

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
# images in a temporary directory; then a short concurrent-guest benchmark,
# with the floor (the loop arms need root to make loop devices).
demo: all
	$(SHELL) tools/xensim/xensim run --guests 4 --size 256M --seconds 5
	arms=raw,blkbackd,floor; [ "$$(id -u)" -ne 0 ] || \
		arms=raw,loop,loop-dio,blkbackd,floor; \
	tools/bench/blkback-bench --guests 1,4,10 --size 16M \
		--arms $$arms --out tools/bench/demo

# `make featbench`: what each protocol feature buys (not a test).
featbench: all
	$(SHELL) tools/xensim/xensim-featbench
.PHONY: demo featbench

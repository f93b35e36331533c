# tools: the xl hotplug script and the systemd unit (programs may follow).

# libxl runs /etc/xen/scripts/<script=> for each disk; it must be executable.
dist_xenscript_SCRIPTS = tools/hotplug/blkbackd

# The explicit step that hands backend/vbd from xen-blkback to blkbackd and
# back; the Debian package's maintainer scripts use it too.
dist_sbin_SCRIPTS = tools/blkbackd-takeover

# The sample /etc/blkbackd.conf: every setting, commented out, at its
# default. Not installed by `make install`, which must not overwrite an
# operator's file; the Debian package ships it as a conffile.
EXTRA_DIST += tools/blkbackd.conf

# The unit names the daemon by its installed path.  Substituted at make time,
# not by configure, so that `make install prefix=...` stays consistent.
systemdsystemunit_DATA = tools/systemd/blkbackd.service
EXTRA_DIST += tools/systemd/blkbackd.service.in
CLEANFILES += tools/systemd/blkbackd.service

# The optional HTTP metrics endpoint: a socket and a service per scrape.
systemdsystemunit_DATA += tools/systemd/blkbackd-metrics@.service
dist_systemdsystemunit_DATA = tools/systemd/blkbackd-metrics.socket
EXTRA_DIST += tools/systemd/blkbackd-metrics@.service.in
CLEANFILES += tools/systemd/blkbackd-metrics@.service

subst_unit = $(AM_V_GEN)$(MKDIR_P) $(@D) && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' $(srcdir)/$@.in >$@.tmp && \
	mv -f $@.tmp $@
tools/systemd/blkbackd.service: $(srcdir)/tools/systemd/blkbackd.service.in Makefile
	$(subst_unit)
tools/systemd/blkbackd-metrics@.service: \
		$(srcdir)/tools/systemd/blkbackd-metrics@.service.in Makefile
	$(subst_unit)

# Packaging tests: the install layout, the hotplug script, and the unit's
# validity and hardening.
TESTS += tests/install.sh tests/hotplug.sh tests/unit-security.sh \
	tests/takeover.sh tests/deb-scripts.sh
EXTRA_DIST += tests/install.sh tests/hotplug.sh tests/unit-security.sh \
	tests/takeover.sh tests/deb-scripts.sh tests/lib-takeover.sh

# blkbackctl: the control socket's client.
sbin_PROGRAMS += tools/blkbackctl/blkbackctl
tools_blkbackctl_blkbackctl_SOURCES = tools/blkbackctl/blkbackctl.c \
	tools/blkbackctl/metrics.h tools/blkbackctl/metrics.c \
	tools/blkbackctl/metrics-json.h tools/blkbackctl/metrics-json.c \
	tools/blkbackctl/http.h tools/blkbackctl/http.c \
	tools/blkbackctl/attach.h tools/blkbackctl/attach.c \
	tools/blkbackctl/disk-arg.h tools/blkbackctl/disk-arg.c \
	tools/blkbackctl/deadline.h tools/blkbackctl/deadline.c \
	tools/blkbackctl/request.h tools/blkbackctl/request.c \
	tools/blkbackctl/show.h tools/blkbackctl/show.c \
	tools/blkbackctl/snapshot.h tools/blkbackctl/snapshot.c \
	tools/blkbackctl/move.h tools/blkbackctl/move.c \
	tools/blkbackctl/table.h tools/blkbackctl/table.c \
	tools/blkbackctl/top.h tools/blkbackctl/top.c \
	libblk/toolstack.h libblk/toolstack.c \
	libblk/xenbus.h libblk/xenbus.c libblk/parse.h libblk/parse.c
tools_blkbackctl_blkbackctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) \
	$(XENSTORE_CFLAGS) \
	-DBLKBACKD_CONTROL_SOCKET='"$(runstatedir)/blkbackd/control"'
tools_blkbackctl_blkbackctl_LDADD = $(JSONC_LIBS) $(XENSTORE_LIBS) -lm
# Installed as "blkbackctl", the name bash-completion loads it by.
dist_bashcompletion_DATA = tools/blkbackctl/completion/blkbackctl

# The Debian packages, built from a copy of the source tree and checked
# (tests/deb-build.sh). Not part of `make check`: it builds everything
# again and needs debhelper and lintian; CI runs it as a step of its own.
EXTRA_DIST += tests/deb-build.sh tests/build-debs.sh
check-deb:
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/deb-build.sh
.PHONY: check-deb

# blkbackd: the daemon.
sbin_PROGRAMS += blkbackd/blkbackd
blkbackd_blkbackd_SOURCES = \
	blkbackd/main.c \
	blkbackd/daemon.h \
	blkbackd/log.h blkbackd/log.c blkbackd/rate.h \
	blkbackd/options.h blkbackd/options.c \
	blkbackd/stats-log.h blkbackd/stats-log.c \
	blkbackd/control.h blkbackd/control.c \
	blkbackd/control-request.h blkbackd/control-request.c \
	blkbackd/control-server.h blkbackd/control-server.c \
	blkbackd/host-errors.h blkbackd/host-errors.c \
	blkbackd/reload.h blkbackd/reload.c \
	blkbackd/config-file.h blkbackd/config-file.c \
	blkbackd/config-read.h blkbackd/config-read.c \
	blkbackd/worker.h blkbackd/worker.c \
	blkbackd/cpu-affinity.h blkbackd/cpu-affinity.c \
	blkbackd/balance.h blkbackd/balance.c \
	blkbackd/limits.h blkbackd/limits.c \
	blkbackd/vbd.h blkbackd/vbd-internal.h blkbackd/vbd.c \
	blkbackd/vbd-registry.c blkbackd/vbd-image.c blkbackd/vbd-rings.c \
	blkbackd/vbd-watch.c blkbackd/vbd-limits.c blkbackd/vbd-stats.c \
	blkbackd/vbd-xenstat.c \
	blkbackd/vbd-quiesce.h blkbackd/vbd-quiesce.c blkbackd/vbd-snapshot.c \
	blkbackd/vbd-move.h blkbackd/vbd-move.c \
	blkbackd/opener.h blkbackd/opener.c \
	blkbackd/move-record.h blkbackd/move-record.c \
	blkbackd/vbd-move-resume.c
blkbackd_blkbackd_CPPFLAGS = $(AM_CPPFLAGS) $(BLKBACKD_CONFIG_CPPFLAGS)
blkbackd_blkbackd_CFLAGS = $(AM_CFLAGS) -pthread $(XENSTORE_CFLAGS) \
	$(XENEVTCHN_CFLAGS) $(XENGNTTAB_CFLAGS) $(URING_CFLAGS) \
	$(SYSTEMD_CFLAGS) $(JSONC_CFLAGS) $(INIH_CFLAGS)
blkbackd_blkbackd_LDADD = libblk/libblk.la $(SYSTEMD_LIBS) $(JSONC_LIBS) \
	$(INIH_LIBS) -lpthread

# Where the daemon looks for blkbackd.conf(5) unless --config says otherwise:
# /etc/blkbackd.conf when configured with --sysconfdir=/etc.
BLKBACKD_CONFIG_CPPFLAGS = \
	-DBLKBACKD_CONFIG_PATH='"$(sysconfdir)/blkbackd.conf"'

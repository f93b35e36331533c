# libblk: the blkif engine, a library with no process policy.
noinst_LTLIBRARIES += libblk/libblk.la
libblk_libblk_la_SOURCES = \
	libblk/blkif_abi.h \
	libblk/request.h libblk/request.c \
	libblk/ring.h libblk/ring.c \
	libblk/image.h libblk/image.c libblk/image-snapshot.c \
	libblk/image-internal.h libblk/image-copy.h libblk/image-copy.c \
	libblk/grant_copy.h libblk/grant_copy.c \
	libblk/bounce.h libblk/bounce.c libblk/budget.h \
	libblk/fixed.h libblk/fixed.c \
	libblk/pgrant.h libblk/pgrant.c \
	libblk/engine.h libblk/engine-internal.h libblk/engine.c \
	libblk/evtchn.h libblk/evtchn.c \
	libblk/poll.h libblk/poll.c \
	libblk/journal.h libblk/journal.c \
	libblk/stats.h libblk/stats.c \
	libblk/throttle.h libblk/throttle.c \
	libblk/dirty.h libblk/dirty.c \
	libblk/conn.c libblk/io.c \
	libblk/backend.h libblk/backend-file.c \
	libblk/backend-nbd.h libblk/backend-nbd.c \
	libblk/backend-rbd.h libblk/backend-rbd.c \
	libblk/backend-null.h libblk/backend-null.c \
	libblk/parse.h libblk/parse.c \
	libblk/dynlib.h libblk/dynlib.c \
	libblk/xenbus.h libblk/xenbus.c libblk/xenbus-toolstack.c \
	libblk/toolstack.h libblk/toolstack.c
libblk_libblk_la_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS) \
	$(XENEVTCHN_CFLAGS) $(XENGNTTAB_CFLAGS) $(URING_CFLAGS) $(NBD_CFLAGS)
libblk_libblk_la_LIBADD = $(XENSTORE_LIBS) $(XENEVTCHN_LIBS) \
	$(XENGNTTAB_LIBS) $(URING_LIBS)

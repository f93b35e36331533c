# The real-Xen end-to-end test (tests/e2e/README.md): `make check-xen`.
# Not part of `make check`: it boots Xen in QEMU and needs root, several
# minutes and about 3 GB of disk.

# The guest-side checker, static so that it runs in a busybox initramfs.
# Built only for check-xen (EXTRA_PROGRAMS), with the project's warnings.
EXTRA_PROGRAMS = tests/e2e/e2e-check
# The hand-off probe is blkback-bench's own (tools/bench/handoff.c).
tests_e2e_e2e_check_SOURCES = tests/e2e/e2e-check.c \
	tools/bench/handoff.c tools/bench/handoff.h
tests_e2e_e2e_check_LDFLAGS = -all-static
tests_e2e_e2e_check_LDADD = -lpthread
CLEANFILES += tests/e2e/e2e-check

E2E_FILES = \
	tests/e2e/run.sh \
	tests/e2e/build-dom0.sh \
	tests/e2e/extract-vmlinux.sh \
	tests/e2e/dom0-init.sh \
	tests/e2e/dom0-test.sh \
	tests/e2e/dom0-test-xen420.sh \
	tests/e2e/xen420.sh \
	tests/e2e/hvm-boot-area-host.sh \
	tests/e2e/hvm-boot-area.sh \
	tests/e2e/concurrency.sh \
	tests/e2e/stage-split.py \
	tests/e2e/dd-test.sh \
	tests/e2e/nbd.sh \
	tests/e2e/rbd.sh \
	tests/e2e/snapshot.sh \
	tests/e2e/package.sh \
	tests/e2e/guest-init.sh
EXTRA_DIST += $(E2E_FILES) tests/e2e/README.md tests/e2e/local.mk

# Exit 77 (cannot run here) is reported as a skip, unless
# BLKBACKD_E2E_REQUIRE=1 (CI) makes it a failure.
check-xen: all tests/e2e/e2e-check$(EXEEXT)
	@rc=0; \
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	E2E_CHECK='$(abs_top_builddir)/tests/e2e/e2e-check$(EXEEXT)' \
		bash $(srcdir)/tests/e2e/run.sh || rc=$$?; \
	if test $$rc -eq 77 && test "$${BLKBACKD_E2E_REQUIRE:-0}" != 1; then \
		echo "check-xen: SKIPPED (see the reason above)"; exit 0; \
	fi; \
	exit $$rc

.PHONY: check-xen

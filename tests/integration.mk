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
	tests/vbd-four-guests.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/lib.sh

# cachestat(2) probe for tests/vbd-flush.sh.
check_PROGRAMS += tests/it-cachestat
tests_it_cachestat_SOURCES = tests/it-cachestat.c

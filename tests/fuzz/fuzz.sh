#!/bin/sh
# Fuzz each harness (libFuzzer, ASan, UBSan) for a bounded time, starting
# from its committed seeds, and report executions and coverage.
#
#   fuzz.sh [HARNESS...]   (default: every one with seeds in corpus/)
#
# BLKBACKD_FUZZ_SECONDS  time per harness (default 15, `make fuzz`: 300)
# BLKBACKD_FUZZ_KEEP=1   grow tests/fuzz/corpus-NAME in the build tree and
#                        keep it (`make fuzz`); else a scratch corpus
# BLKBACKD_FUZZ_REQUIRE=1  fail instead of skipping (exit 77) when the
#                        harnesses were not built (CI sets it)
#
# One fuzzing process at a time (-jobs is not used): the machine is shared.
set -u
: "${top_builddir:?run through make check (top_builddir unset)}"
: "${top_srcdir:?run through make check (top_srcdir unset)}"
T=fuzz
seconds=${BLKBACKD_FUZZ_SECONDS:-15}
if [ $# -eq 0 ]; then
	for d in "$top_srcdir"/tests/fuzz/corpus/*; do
		set -- "$@" "$(basename "$d")"
	done
fi

for h in "$@"; do
	[ -x "$top_builddir/tests/fuzz/fuzz-$h" ] && continue
	why="tests/fuzz/fuzz-$h was not built: configure found no clang with \
libFuzzer (apt-get install clang libclang-rt-14-dev, then configure again)"
	if [ "${BLKBACKD_FUZZ_REQUIRE:-0}" = 1 ]; then
		echo "FAIL: $T: $why" >&2
		exit 1
	fi
	echo "SKIP: $T: $why"
	exit 77
done

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

for h in "$@"; do
	corpus=$tmp/corpus-$h
	[ "${BLKBACKD_FUZZ_KEEP:-0}" = 1 ] &&
		corpus=$top_builddir/tests/fuzz/corpus-$h
	mkdir -p "$corpus" "$tmp/crash-$h"
	# New inputs go to the first directory; the seeds are only read.
	"$top_builddir/tests/fuzz/fuzz-$h" -max_total_time="$seconds" \
		-timeout=10 -print_final_stats=1 \
		-artifact_prefix="$tmp/crash-$h/" \
		"$corpus" "$top_srcdir/tests/fuzz/corpus/$h" \
		>"$tmp/$h.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$h.log")
	cov=$(grep -E '^#[0-9]+.*cov: ' "$tmp/$h.log" | tail -n 1 |
		sed 's/.*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/\1 edges, \2 features, corpus \3/')
	if [ "$rc" -eq 0 ]; then
		echo "fuzz-$h: ${runs:-?} executions in ${seconds}s, ${cov:-?}"
		continue
	fi
	fail=1
	echo "FAIL: fuzz-$h (exit $rc) after ${runs:-?} executions:"
	grep -E 'invariant broken|ERROR|SUMMARY|#[0-9]+ in ' "$tmp/$h.log" |
		head -n 30
	for a in "$tmp/crash-$h"/*; do
		[ -f "$a" ] || continue
		echo "input ($(basename "$a")), base64:"
		base64 "$a"
		mkdir -p "$top_builddir/tests/fuzz/crashes"
		cp "$a" "$top_builddir/tests/fuzz/crashes/$h-$(basename "$a")"
		echo "kept in $top_builddir/tests/fuzz/crashes/; once fixed," \
			"add it to tests/fuzz/corpus/$h as a regression seed"
	done
done
exit $fail

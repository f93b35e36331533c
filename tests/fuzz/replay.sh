#!/bin/sh
# Every committed seed of every fuzz harness, replayed through the harness
# built with the project's own compiler (tests/fuzz/replay.c): each must
# pass the harness's invariants. Runs everywhere, clang or not; the seeds
# include the regressions of the bugs fuzzing found.
set -u
: "${top_builddir:?run through make check (top_builddir unset)}"
: "${top_srcdir:?run through make check (top_srcdir unset)}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

for seeds in "$top_srcdir"/tests/fuzz/corpus/*; do
	h=$(basename "$seeds")
	if "$top_builddir/tests/fuzz/replay-$h" "$seeds" >"$tmp/out" 2>&1; then
		echo "replay-$h: $(tail -n 1 "$tmp/out")"
	else
		echo "FAIL: replay-$h: a seed in $seeds broke an invariant:"
		tail -n 20 "$tmp/out"
		fail=1
	fi
done
exit $fail

#!/bin/sh
# The demo as a test: `xensim run` with four guests doing verified I/O at
# the same time against one daemon; every guest must verify and its
# checks be answered as they must.
. "$top_srcdir/tests/lib.sh"

XENSIM=$top_builddir/tools/xensim/xensim
[ -x "$XENSIM" ] || fail "tools/xensim/xensim not built"
[ -x "$BLKBACKD" ] || skip "daemon not built at $BLKBACKD"
requires_xenstored
hv_tool xensim-host >/dev/null || skip "xensim-host not built"
scratch_dir
out=$WORK/xensim.out
"$XENSIM" run --guests 4 --size 32M --seconds 3 --depth 16 >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || fail "xensim run failed (exit $rc)"
n=$(grep -c "^fact check=verify case=summary " "$out")
[ "$n" -eq 4 ] || fail "$n of 4 guests reported what they read back"
expect_verified "$out" "4 guests"
# Each guest ran the barrier, flush-with-data and discard checks first;
# xensim prints the guests' reports one after another.
for check in barrier:barrier_facts flush-data:flush_data_facts \
	discard:discard_facts; do
	# shellcheck disable=SC2034 # four guests, the same facts
	for g in 1 2 3 4; do
		"${check#*:}"
	done >"$WORK/want"
	expect_facts "$out" "${check%:*}" "4 guests" <"$WORK/want"
done
exit 0

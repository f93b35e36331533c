#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/dist-docs.sh, which `make dist` runs on the tree it packs: on a
# small tree it must name each cited file that is missing and who cites
# it (a path under docs/ in a C comment or a man page, a relative link in
# a Markdown page) and fail, and pass once they are all there.
. "$top_srcdir/tests/lib.sh"

CHECK=$top_srcdir/tests/dist-docs.sh
scratch_dir
tree=$WORK/tree
mkdir -p "$tree/docs" "$tree/src" "$tree/man"
# Built from parts, so that this file cites nothing the check would
# look for in the real tarball, which ships it.
d=docs
echo "/* the whole story: $d/story.md */" >"$tree/src/main.c"
echo "see $d/guide.md in the source" >"$tree/man/tool.8"
printf 'Read [the story](%s) and [the notes](notes.md#why).\n' \
	"$d/story.md" >"$tree/README.md"
printf '# Guide\n\n[Back](../README.md), [the web](https://example.org/x.md).\n' \
	>"$tree/$d/guide.md"

run_check() {
	sh "$CHECK" "$tree" >"$WORK/check.out" 2>"$WORK/check.err"
}

expect_in() { # FILE TEXT
	grep -qF -- "$2" "$1" || fail "no '$2' in $(basename "$1"):
$(cat "$1")"
}

if run_check; then
	fail "passed with $d/story.md and notes.md missing"
fi
expect_in "$WORK/check.err" \
	"$d/story.md is cited by README.md src/main.c but is not in the distribution"
expect_in "$WORK/check.err" "notes.md is cited by README.md but is not"
if grep -qF "guide.md is cited" "$WORK/check.err"; then
	fail "named $d/guide.md, which is there: $(cat "$WORK/check.err")"
fi
if grep -qF "example.org" "$WORK/check.err"; then
	fail "took a URL for a file: $(cat "$WORK/check.err")"
fi

echo "# Story" >"$tree/$d/story.md"
echo "# Notes" >"$tree/notes.md"
run_check || fail "failed with every cited file there: $(cat "$WORK/check.err")"
expect_in "$WORK/check.out" \
	"every cited file is in the distribution: README.md $d/guide.md $d/story.md notes.md"
note "a missing cited file fails the check, naming it and its citers"

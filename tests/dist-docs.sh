#!/bin/sh
# SPDX-License-Identifier: MIT
# dist-docs.sh DIR: every file that a file in DIR cites is in DIR too.
#
# `make dist` runs it on the tree it is about to pack (dist-hook in
# Makefile.am), so that a release tarball never sends its reader to a page
# it lacks, and `make distcheck` fails with it. A citation is a path under
# docs/ ending in .md anywhere in a text file (code comments, man pages,
# the README, the tests), or the target of a Markdown page's relative link,
# taken relative to that page. Prints the cited files, or each missing one
# with the files that cite it; exits 1 when one is missing.
set -eu

me=dist-docs.sh
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $me DIR" >&2
	exit 2
fi
cd "$1"

# One "CITED FILE" line per citation, both relative to DIR.
citations() {
	grep -rIoE 'docs/[a-z0-9-]+\.md' . |
		sed -E 's|^\./([^:]*):(.*)$|\2 \1|'
	find . -type f -name '*.md' | while IFS= read -r f; do
		grep -oE '\]\([^)#[:space:]]+(#[^)]*)?\)' "$f" |
			sed -E 's/^\]\(//; s/(#[^)]*)?\)$//' |
			while IFS= read -r link; do
				case $link in *:*) continue ;; esac # a URL
				cited=$(realpath -m --relative-to=. \
					"$(dirname "$f")/$link")
				echo "$cited ${f#./}"
			done
	done
}

list=$(citations | sort -u)
missing=0
for cited in $(echo "$list" | cut -d' ' -f1 | sort -u); do
	[ -f "$cited" ] && continue
	by=$(echo "$list" | awk -v c="$cited" '$1 == c { print $2 }' |
		tr '\n' ' ')
	echo "$me: $cited is cited by ${by% } but is not in the" \
		"distribution: add it to EXTRA_DIST (Makefile.am, or the" \
		"local.mk of its directory)" \
		"or correct the citation" >&2
	missing=1
done
[ "$missing" -eq 0 ] || exit 1
echo "$me: every cited file is in the distribution:" \
	$(echo "$list" | cut -d' ' -f1 | sort -u)

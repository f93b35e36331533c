#!/bin/bash
# Uncompress the ELF kernel inside a bzImage, for PV guests (xl loads an
# uncompressed ELF several times faster than a bzImage under TCG).
#
#   extract-vmlinux.sh BZIMAGE OUT
#
# The bzImage carries the compressed kernel after its setup code; try each
# compressor's magic in turn and keep the first result that is an ELF file.
set -euo pipefail

in=$1
out=$2

is_elf() {
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]
}

try() {
	local magic=$1 cmd=$2 off
	for off in $(LC_ALL=C grep -obUaP "$magic" "$in" | cut -d: -f1); do
		tail -c +$((off + 1)) "$in" | $cmd >"$out" 2>/dev/null || true
		if [ -s "$out" ] && is_elf "$out"; then
			return 0
		fi
	done
	return 1
}

try '\xfd7zXZ\x00' 'xz -dc' ||
	try '\x28\xb5\x2f\xfd' 'zstd -dc' ||
	try '\x1f\x8b\x08' 'gunzip -c' || {
	echo "extract-vmlinux: no ELF kernel found in $in" >&2
	rm -f "$out"
	exit 1
}

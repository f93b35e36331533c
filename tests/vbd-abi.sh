#!/bin/sh
# Both x86 ring ABIs, and a frontend that writes no `protocol` (which means
# x86_32). Data written through one ABI is read back through the other and
# found in the image where the host expects it, so a backend that decodes
# a request layout wrongly cannot pass by being consistently wrong.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

sectors=$((4 * 2048))
write_pattern "$WORK/expected" "$sectors" 11
d=1
for abi in x86_64 x86_32 none; do
	guest $d 4M
	attach $d
	blkfront $d --abi $abi --fill --partial --bs 45056 --depth 32 \
		--ops 300 --verify --seed 11 \
		--check full-11-segments --check partial-segments >/dev/null
	expect_check "$WORK/front-$d.out" full-11-segments "$abi" full_11_facts
	expect_check "$WORK/front-$d.out" partial-segments "$abi" partial_facts
	case $abi in
	none) xs_read "$(fe_path $d)/protocol" >/dev/null &&
		fail "frontend wrote a protocol node in mode none" ;;
	*) assert_node "$(fe_path $d)/protocol" "$abi-abi" ;;
	esac
	cmp "$WORK/expected" "$WORK/d$d.img" ||
		fail "image written with ABI $abi differs from the pattern"
	detach $d
	d=$((d + 1))
done

# Cross-check: written via x86_32, read via x86_64 and vice versa.
guest 10 4M
guest 11 4M
attach 10 xvda "$WORK/d1.img"
blkfront 10 --abi x86_32 --preexisting --seed 11 --ops 200 >/dev/null
detach 10
attach 11 xvda "$WORK/d2.img"
blkfront 11 --abi x86_64 --preexisting --seed 11 --ops 200 >/dev/null
detach 11
assert_daemon_alive
exit 0

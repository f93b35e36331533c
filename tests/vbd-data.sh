#!/bin/sh
# Data integrity through the whole path, both directions:
#  - what the guest writes lands byte for byte in the image file (cmp
#    against the pattern regenerated on the host);
#  - what the host put in the image is what the guest reads;
#  - partial segments (first_sect/last_sect inside a page), full 11-segment
#    requests and random mixed I/O with several patterns verify.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

size=8M
sectors=$((8 * 2048))

# Guest → host: fill the disk (multi-segment, partial segments) with seed 7.
guest 1 "$size"
attach 1
blkfront 1 --fill --partial --bs 45056 --depth 16 --ops 200 --verify \
	--seed 7 --check partial-segments --check full-11-segments
expect_check "$WORK/front-1.out" partial-segments "seed 7" partial_facts
expect_check "$WORK/front-1.out" full-11-segments "seed 7" full_11_facts
write_pattern "$WORK/expected-7" "$sectors" 7
# The checks wrote their own data with the same seed, so the whole image
# must equal the pattern.
cmp "$WORK/expected-7" "$WORK/d1.img" ||
	fail "image content differs from what the guest wrote"
detach 1

# Host → guest: the host writes pattern 99, the guest reads and verifies.
guest 2 "$size"
write_pattern "$WORK/d2.img" "$sectors" 99
attach 2
blkfront 2 --preexisting --seed 99 --bs 4096 --depth 8 --ops 500 \
	--sequential >/dev/null
expect_verified "$WORK/front-2.out" "the host's pattern read by the guest" 500
# And against a wrong seed every block read differs, and expect_verified
# says so: the check can fail.
"$BLKFRONT" --domid 2 --preexisting --seed 98 --ops 10 \
	>"$WORK/wrong-seed.out" 2>&1 || fail "the wrong-seed run failed"
grep -q "^fact check=verify case=summary written=0 compared=\([1-9][0-9]*\) mismatched=\1 first=[0-9]*:[0-9]* expected=0x.. got=0x..$" \
	"$WORK/wrong-seed.out" ||
	fail "against the wrong seed not every block read differed:" \
		"$(grep '^fact' "$WORK/wrong-seed.out")"
wrong=$( (expect_verified "$WORK/wrong-seed.out" "wrong seed") 2>&1) &&
	fail "expect_verified passed a run that read the wrong pattern"
note "expect_verified, as it must:" \
	"$(printf '%s\n' "$wrong" | sed -n '1s/^FAIL: [^:]*: //p')"
detach 2

# Random mixed I/O with several patterns and request shapes.
guest 3 16M
attach 3
for args in "--seed 1 --bs 512 --depth 1" \
	"--seed 2 --bs 4096 --depth 32" \
	"--seed 3 --bs 12800 --depth 8 --partial" \
	"--seed 4 --bs 45056 --depth 16 --partial --flush-every 10"; do
	# shellcheck disable=SC2086
	blkfront 3 --ops 800 --verify $args >/dev/null
	expect_verified "$WORK/front-3.out" "$args" 100
done
detach 3
assert_daemon_alive
exit 0

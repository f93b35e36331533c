#!/bin/sh
# Discard: the backend offers feature-discard with discard-granularity
# and discard-alignment; DISCARD requests (plain and with the secure flag)
# punch holes the host sees (the image's allocated blocks shrink), the
# range reads back as zeros and its neighbours keep their data. With the
# toolstack's discard-enable=0 there is no feature-discard and DISCARD
# gets EOPNOTSUPP. The guest reports each step's answers and what it read
# back (facts); the test states what they must be.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

blocks() { stat -c %b "$WORK/d1.img"; }

guest 1 16M
attach 1
be=$(be_path 1)
assert_node "$be/feature-discard" 1
xs_read "$be/discard-granularity" >/dev/null || fail "no discard-granularity"
xs_read "$be/discard-alignment" >/dev/null || fail "no discard-alignment"
assert_node "$be/discard-secure" 0

hold_start 1 --check discard --seed 12
hold_wait WRITTEN 60
before=$(blocks)
echo go >&3
hold_wait DISCARDED 60
after=$(blocks)
note "allocated 512-byte blocks: $before before, $after after discarding 4 MiB"
# 4 MiB = 8192 blocks; allow for filesystem metadata and rounding.
[ $((before - after)) -ge 6144 ] ||
	fail "allocated blocks went from $before to $after, wanted ~8192 fewer"
echo go >&3
hold_end
expect_check "$WORK/front-1.out" discard "discard" discard_facts
# Holes from the host's side too: SEEK_HOLE finds one inside the range
# (python is not assumed; dd of the range must read zeros).
dd if="$WORK/d1.img" bs=1M skip=1 count=4 2>/dev/null | od -An -v -tx1 |
	grep -qv '^ \(00 \)*00$' && fail "the image holds data where discarded"
detach 1

# discard-enable=0: not offered, EOPNOTSUPP.
guest 2 4M
"$TOOLSTACK" attach 2 "$WORK/d2.img" xvda --discard-enable 0 $SCRIPT_OPT \
	>>"$WORK/toolstack.log" 2>&1 || fail "attach with discard-enable=0"
xs_read "$(be_path 2)/feature-discard" | grep -q 1 &&
	fail "feature-discard offered with discard-enable=0"
blkfront 2 --check discard-unsupported >/dev/null
expect_check "$WORK/front-2.out" discard-unsupported "discard-enable=0" \
	cat <<EOF
disk feature-discard=0
discard status=EOPNOTSUPP
$(probe_facts 64)
EOF
detach 2
assert_daemon_alive
exit 0

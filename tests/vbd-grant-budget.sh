#!/bin/sh
# Persistent grants are bounded for the whole daemon (--max-mapped-grants)
# and the bound is shared. One guest whose pages fill the budget maps
# all of it, its ring page included, and no more; a second that arrives
# later must still get mappings of its own, as the first gives idle ones
# back down to an equal share. At no moment do the two hold more than the
# budget and the one ring page the second pays for before the first has
# given back, and both verified workloads finish without an error: a ring
# the budget cannot pay for copies its data instead.
. "$top_srcdir/tests/lib.sh"
xensim_setup
BUDGET=64
start_daemon --max-mapped-grants $BUDGET --max-queues 1

# 8 requests of 8 pages a guest: 64 data pages, more than the budget
# leaves beside the ring's page.
front_args="--seconds 10 --depth 8 --bs 32768 --indirect 0 --verify
	--queues 1 --ring-order 0 --persistent yes"
for d in 1 2; do
	guest $d 64M
	attach $d
done
# shellcheck disable=SC2086 # front_args is a list of words
blkfront_bg 1 $front_args
front1=$BG_PID
n=100
while [ "$(mapped_of 1)" -lt $BUDGET ]; do
	n=$((n - 1))
	[ $n -gt 0 ] || fail "guest 1 never mapped the budget: $(stat_of 1)"
	sleep 0.1
done
# Its ring page is paid from the budget too: never one more.
for _ in 1 2 3 4 5; do
	[ "$(mapped_of 1)" -le $BUDGET ] ||
		fail "guest 1 maps $(mapped_of 1) grants, over the budget" \
			"of $BUDGET (its ring page not paid for?)"
	sleep 0.2
done
# shellcheck disable=SC2086
blkfront_bg 2 $front_args
front2=$BG_PID

# mapped_pair: both guests' mapped grants, read back to back in one
# process.
mapped_pair() {
	"$XENSIM_STAT" "$XENSIM_DIR" 1 2 2>/dev/null |
		sed -n 's/.*mapped_grants=\([0-9]*\).*/\1/p' | tr '\n' ' '
}

# snapshot: both guests' counts at one moment. A grant moving from one
# guest to the other between the two reads would count twice, so the
# pair is taken only when a second read finds the same. Sets m1 and m2;
# false when no read was consistent.
snapshot() {
	tries=10
	while [ $tries -gt 0 ]; do
		pair=$(mapped_pair)
		if [ "$(mapped_pair)" = "$pair" ]; then
			# shellcheck disable=SC2086 # two numbers
			set -- $pair
			[ $# -eq 2 ] || return 1
			m1=$1
			m2=$2
			return 0
		fi
		tries=$((tries - 1))
	done
	return 1
}

most2=0
samples=0
while kill -0 "$front2" 2>/dev/null; do
	snapshot || {
		sleep 0.2
		continue
	}
	[ $((m1 + m2)) -le $((BUDGET + 1)) ] ||
		fail "$m1 + $m2 grants mapped, over the budget of $BUDGET" \
			"and guest 2's ring page"
	[ "$m2" -gt "$most2" ] && most2=$m2
	samples=$((samples + 1))
	sleep 0.2
done
[ "$samples" -ge 5 ] || fail "only $samples samples while guest 2 ran"
note "guest 2 held at most $most2 mappings in $samples samples (an equal" \
	"share is $((BUDGET / 2)))"
# Its ring page, and at least half of its equal share of data pages.
[ "$most2" -ge $((1 + BUDGET / 4)) ] ||
	fail "guest 2 held at most $most2 mappings: guest 1 kept the budget"
wait_fronts "a guest failed under the grant budget" "$front1" "$front2"
assert_verified 1 2
assert_daemon_alive
exit 0

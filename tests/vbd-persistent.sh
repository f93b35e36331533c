#!/bin/sh
# Persistent grants on and off, both verified. With feature-persistent=1
# on both sides the backend keeps the guest's data pages mapped while
# connected (more mappings than the one ring page) and unmaps all of them
# at detach; with the frontend declining, only the ring stays mapped and
# data goes through grant copy of per-request grants.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon

sectors=$((16 * 2048))
write_pattern "$WORK/expected" "$sectors" 4
guest 1 16M
attach 1
fe=$(fe_path 1)
assert_node "$(be_path 1)/feature-persistent" 1

for mode in yes no; do
	hold_start 1 --persistent $mode --ring-order 0 --queues 1 --fill \
		--bs 65536 --depth 8 --ops 2000 --verify --seed 4 --hold
	hold_wait CONNECTED 60
	m=$(mapped_of 1)
	case $mode in
	yes)
		assert_node "$fe/feature-persistent" 1
		[ "${m:-0}" -gt 1 ] ||
			fail "persistent: $m grants mapped while connected, " \
				"wanted the ring and data pages"
		;;
	no)
		assert_node "$fe/feature-persistent" 0
		[ "${m:-0}" -eq 1 ] ||
			fail "no persistent grants: $m grants mapped while" \
				"connected, wanted only the ring page"
		;;
	esac
	note "persistent $mode: $m grants mapped while connected"
	hold_end
	expect_verified "$WORK/front-1.out" "persistent $mode"
	case $mode in
	yes) want=persistent ;;
	no) want=per-request ;;
	esac
	grep -q "$want grants" "$WORK/front-1.out" ||
		fail "persistent $mode: frontend used $(connected_line 1)"
	cmp "$WORK/expected" "$WORK/d1.img" ||
		fail "persistent $mode: image differs from the pattern"
	wait_released 1 5 ||
		fail "persistent $mode: grants still mapped after the guest" \
			"closed: $(stat_of 1)"
done
detach 1
wait_released 1 5 || fail "grants still mapped after detach: $(stat_of 1)"

# The daemon offering none: the frontend's yes is not taken up.
restart_daemon --persistent-grants no
attach 1
assert_node "$(be_path 1)/feature-persistent" 0
blkfront 1 --ops 500 --verify --preexisting --seed 4 >/dev/null
grep -q "per-request grants" "$WORK/front-1.out" ||
	fail "frontend used persistent grants the backend did not offer"
detach 1
assert_daemon_alive
exit 0

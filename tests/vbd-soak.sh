#!/bin/sh
# Soak: guests are attached and detached in a loop while two others do
# verified I/O throughout. Each churned guest does verified I/O and then
# either closes and is detached, or is destroyed with I/O in flight. The
# daemon's file descriptors, threads, memory mappings and anonymous
# resident memory are sampled after every guest is gone and must stay
# flat: the same descriptors and threads as after the warm-up, and
# mappings and memory within a small allowance. SOAK_SECONDS (default 25)
# sets the length; run it longer by hand, e.g. SOAK_SECONDS=600.
#
# Not counted: what the simulated hypervisor's libxengnttab/libxenevtchn
# (loaded into the daemon) hold. Each handle caches every domain it has
# touched, by design (sim-internal.h: mappings point at the entries), so
# every dead guest leaves a few descriptors and mappings of its files
# under $XENSIM_DIR; those are counted apart and printed, and the
# descriptor limit is raised so that a long soak does not run out.
. "$top_srcdir/tests/lib.sh"
xensim_setup
# shellcheck disable=SC3045 # dash and bash both have -n and -H
ulimit -n "$(ulimit -Hn)" 2>/dev/null
start_daemon

SOAK_SECONDS=${SOAK_SECONDS:-25}
WARMUP=4 # iterations before the baseline: first-use allocations settle
MAPS_ALLOWANCE=8 # mappings: malloc arenas may come and go
RSS_ALLOWANCE_KB=8192

# sample: "fds threads maps anon_rss_kb sim_fds sim_maps" of the
# daemon, the simulator's files counted apart.
sample() {
	s_all=$(find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 \
		-printf '%l\n')
	s_sim=$(echo "$s_all" | grep -c "^$XENSIM_DIR/")
	s_fds=$(($(echo "$s_all" | wc -l) - s_sim))
	# io_uring's iou-wrk threads come and go with the load: not ours.
	s_thr=$(cat "/proc/$DAEMON_PID"/task/*/comm 2>/dev/null |
		grep -vc '^iou-')
	# Both counts from one copy of the maps: the well-behaved guest
	# reconnects every 2 s, mapping its 32 ring pages again, and two
	# reads that straddled that once counted the 32 as the daemon's own.
	cp "/proc/$DAEMON_PID/maps" "$WORK/maps"
	s_simmaps=$(grep -c " $XENSIM_DIR/" "$WORK/maps")
	s_maps=$(($(wc -l <"$WORK/maps") - s_simmaps))
	s_rss=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB/\1/p' \
		"/proc/$DAEMON_PID/status")
	echo "$s_fds $s_thr $s_maps $s_rss $s_sim $s_simmaps"
}

guest 1 32M
guest 2 32M
attach 1
attach 2
blkfront_bg 1 --seconds "$((SOAK_SECONDS + 5))" --depth 8 --verify
steady=$BG_PID
good_guest_start 2

# churn DOMID: one guest's life; the odd ones die with I/O in flight.
churn() {
	c_dom=$1
	guest "$c_dom" 8M
	attach "$c_dom"
	if [ $((c_dom % 2)) -eq 0 ]; then
		blkfront "$c_dom" --ops 100 --verify >/dev/null
		detach "$c_dom"
		"$TOOLSTACK" destroy "$c_dom" >>"$WORK/toolstack.log" 2>&1 ||
			fail "destroy dom $c_dom failed"
	else
		blkfront_bg "$c_dom" --seconds 30 --depth 16
		wait_node "$(be_path "$c_dom")/state" 4 10 ||
			fail "dom $c_dom did not connect"
		sleep 0.2
		"$TOOLSTACK" destroy "$c_dom" --remove-backends \
			>>"$WORK/toolstack.log" 2>&1 || fail "destroy dom $c_dom failed"
		kill "$BG_PID" 2>/dev/null
		wait "$BG_PID" 2>/dev/null
	fi
	wait_released "$c_dom" 5 ||
		fail "dom $c_dom: resources held after it went: $(stat_of "$c_dom")"
	rm -f "$WORK/d$c_dom.img" "$WORK/front-$c_dom.out"
	assert_daemon_alive
	assert_good_guest "the churn of dom $c_dom"
}

dom=10
end=$(($(date +%s) + SOAK_SECONDS))
: >"$WORK/samples"
while [ "$dom" -lt $((10 + WARMUP)) ] || [ "$(date +%s)" -lt "$end" ]; do
	churn "$dom"
	echo "$dom $(sample)" >>"$WORK/samples"
	dom=$((dom + 1))
done
blkfront_wait 1 "$steady" "the steady guest failed during the soak"
good_guest_stop 1

# The baseline is the sample after the warm-up; the last must match it.
read -r _ b_fds b_thr b_maps b_rss b_sfds b_smaps <<EOF
$(sed -n "${WARMUP}p" "$WORK/samples")
EOF
read -r _ l_fds l_thr l_maps l_rss l_sfds l_smaps <<EOF
$(tail -n 1 "$WORK/samples")
EOF
iters=$((dom - 10))
note "$iters guests attached and detached in $SOAK_SECONDS s;" \
	"fds $b_fds -> $l_fds, threads $b_thr -> $l_thr," \
	"maps $b_maps -> $l_maps, anonymous RSS $b_rss -> $l_rss kB;" \
	"the simulator's fds $b_sfds -> $l_sfds, maps $b_smaps -> $l_smaps"
[ "$l_fds" -le "$b_fds" ] ||
	fail_later "file descriptors grew from $b_fds to $l_fds"
[ "$l_thr" -eq "$b_thr" ] ||
	fail_later "threads went from $b_thr to $l_thr"
[ "$l_maps" -le $((b_maps + MAPS_ALLOWANCE)) ] ||
	fail_later "mappings grew from $b_maps to $l_maps"
if grep -q libasan "/proc/$DAEMON_PID/maps"; then
	# ASan's quarantine keeps freed memory resident; LeakSanitizer
	# checks for leaks when the daemon exits instead.
	note "an ASan build: RSS not compared"
elif [ "$l_rss" -gt $((b_rss + RSS_ALLOWANCE_KB)) ]; then
	fail_later "anonymous RSS grew from $b_rss to $l_rss kB"
fi
[ "$FAILED" -eq 0 ] || cat "$WORK/samples" >&2
assert_daemon_alive
finish "the daemon stayed flat"

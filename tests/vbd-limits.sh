#!/bin/sh
# Per-disk I/O limits hold a guest to its budget and slow it, never fail
# it: a disk limited by blkbackd.conf's default runs at its IOPS limit
# while its unlimited neighbour on the same worker (its xenstore key says
# 0) runs far faster; `blkbackctl limit` then gives the first a bandwidth
# limit, which it meets, while the daemon sleeps rather than spins; a
# limit changed under a running guest takes effect at once; and one that
# an operator's hotplug script writes is in force before the guest
# connects; a reload applies new defaults to the disks that have none of
# their own; a restarted daemon keeps the limits, and a disk's two
# queues on two workers share one. Every run is verified, and no request
# fails. The tolerances are wide: this runs on small, loaded hosts.
. "$top_srcdir/tests/lib.sh"
requires python3 xenstore-write
xensim_setup
CTL="$top_builddir/tools/blkbackctl/blkbackctl --socket $WORK/state/control"
IOPS=150
printf 'limit-iops = %s\n' $IOPS >"$WORK/blkbackd.conf"
# One worker: the limited and the unlimited guest share it.
start_daemon --config "$WORK/blkbackd.conf" --workers 1

# field FILE REGEX: the group \(...\) of REGEX in the first line it matches
field() { sed -n "s|.*$2.*|\\1|p" "$1" | head -n1; }
within() { # VALUE LOW HIGH: is LOW <= VALUE <= HIGH?
	python3 -c "import sys; v,l,h=map(float,sys.argv[1:]); sys.exit(not l<=v<=h)" "$@"
}
# requests DOMID/DEVID: "COUNT TIME", every request the daemon has
# answered for it, and when it was asked
requests() {
	$CTL --json stats "$1" >"$WORK/req.json" || fail "stats $1 failed"
	rq_t=$(date +%s.%N)
	json "$WORK/req.json" \
		"sum(d['devices'][0][o]['requests'] for o in ('read','write','flush'))"
	echo "$rq_t"
}
# rate COUNT1 TIME1 COUNT2 TIME2: requests per second between the two
rate() { python3 -c "import sys; a,t,b,u=map(float,sys.argv[1:]); print(int((b-a)/(u-t)))" "$@"; }
# cpu_ticks: the daemon's user and system time so far, in clock ticks
cpu_ticks() { sed 's/^.*) //' "/proc/$DAEMON_PID/stat" | awk '{ print $12 + $13 }'; }
no_errors() { # DOMID/DEVID
	$CTL --json stats "$1" >"$WORK/err.json" || fail "stats $1 failed"
	[ "$(json "$WORK/err.json" \
		"sum(d['devices'][0][o]['errors'] for o in ('read','write','flush','discard'))")" = 0 ] ||
		fail "$1 was answered with errors: $(cat "$WORK/err.json")"
}

guest 1 64M
guest 2 64M
attach 1
attach 2
xenstore-write "$(be_path 2)/limit-iops" 0 || fail "xenstore-write failed"
wait_file_line "$WORK/blkbackd.log" "vbd 1/51712: I/O limit $IOPS requests/s" 10 ||
	fail "dom 1 did not take the default limit from blkbackd.conf"

# 1. The default IOPS limit, beside an unlimited guest on the same worker.
blkfront_bg 1 --seconds 5 --depth 8 --verify
p1=$BG_PID
blkfront_bg 2 --seconds 5 --depth 8 --verify
p2=$BG_PID
blkfront_wait 1 "$p1"
blkfront_wait 2 "$p2"
i1=$(field "$WORK/front-1.out" 'IOPS \([0-9]*\) (bs')
i2=$(field "$WORK/front-2.out" 'IOPS \([0-9]*\) (bs')
note "limited to $IOPS: $i1 IOPS; unlimited neighbour: $i2 IOPS"
within "$i1" $((IOPS * 6 / 10)) $((IOPS * 14 / 10)) ||
	fail "dom 1 ran $i1 IOPS under a limit of $IOPS"
within "$i2" $((IOPS * 4)) 1e12 ||
	fail "the unlimited dom 2 ran only $i2 IOPS beside a guest limited to $IOPS"
$CTL --json stats 1/51712 >"$WORK/s1.json" || fail "stats failed"
[ "$(json "$WORK/s1.json" "d['devices'][0]['limit']['iops']")" = $IOPS ] ||
	fail "stats do not show the limit: $(cat "$WORK/s1.json")"
within "$(json "$WORK/s1.json" "d['devices'][0]['limit']['throttled_seconds']")" 1 1e9 ||
	fail "stats show no time held back: $(cat "$WORK/s1.json")"
$CTL --json list >"$WORK/l.json" || fail "list failed"
[ "$(json "$WORK/l.json" "[x['limit']['iops'] for x in d['devices'] if x['domid']==2][0]")" = 0 ] ||
	fail "list: dom 2 is not unlimited: $(cat "$WORK/l.json")"

# 2. blkbackctl sets a bandwidth limit instead; it is kept in xenstore.
$CTL limit 1/51712 --iops 0 --bw 2M >"$WORK/limit.out" ||
	fail "blkbackctl limit failed"
# It answers in the unit the limit was typed in.
grep -q "^limit 2 MiB/s;" "$WORK/limit.out" ||
	fail "blkbackctl limit printed: $(cat "$WORK/limit.out")"
assert_node "$(be_path 1)/limit-bytes-per-second" 2097152
assert_node "$(be_path 1)/limit-iops" 0
cpu0=$(cpu_ticks)
t0=$(date +%s.%N)
blkfront 1 --seconds 5 --depth 8 --bs 65536 --verify >/dev/null
busy=$(python3 -c "import os; print(($(cpu_ticks) - $cpu0) / os.sysconf('SC_CLK_TCK') / ($(date +%s.%N) - $t0))")
w=$(field "$WORK/front-1.out" ': \([0-9.]*\) MB/s, [0-9.]* MB/s')
r=$(field "$WORK/front-1.out" 'MB/s, \([0-9.]*\) MB/s')
bw=$(python3 -c "print($w + $r)")
note "limited to 2 MiB/s: $bw MB/s"
within "$bw" 1.3 2.9 || fail "dom 1 moved $bw MB/s under a limit of 2.1 MB/s"
# Held back, its worker sleeps on a timer: it does not spin.
note "the daemon used $busy of a CPU meanwhile"
within "$busy" 0 0.25 || fail "the daemon spun ($busy of a CPU) for a held guest"
$CTL metrics >"$WORK/metrics.txt" || fail "metrics failed"
grep -q '^blkbackd_limit_bytes_per_second{domid="1",domain="[^"]*",devid="51712".*} 2097152$' \
	"$WORK/metrics.txt" || fail "metrics do not show the limit"
grep -q '^blkbackd_throttled_seconds_total{domid="1"' "$WORK/metrics.txt" ||
	fail "metrics do not show the time held back"

# 3. A limit changed under a running guest takes effect at once.
$CTL limit 1/51712 --iops 100 --bw 0 >/dev/null || fail "limit failed"
blkfront_bg 1 --seconds 9 --depth 8 --verify
p1=$BG_PID
sleep 2
a=$(requests 1/51712 | tr "\n" " ")
sleep 2
b=$(requests 1/51712 | tr "\n" " ")
$CTL limit 1/51712 --iops 400 >/dev/null || fail "limit failed"
sleep 1
c=$(requests 1/51712 | tr "\n" " ")
sleep 2
e=$(requests 1/51712 | tr "\n" " ")
blkfront_wait 1 "$p1"
# shellcheck disable=SC2086 # each is "COUNT TIME"
slow=$(rate $a $b) fast=$(rate $c $e)
note "live change: $slow IOPS at a limit of 100, then $fast at 400"
within "$slow" 60 140 || fail "$slow IOPS under a limit of 100"
within "$fast" 240 560 || fail "$fast IOPS after the limit became 400"

# 4. A limit from the disk line: a hotplug script of the operator's own
# (blkbackd(8), I/O LIMITS) writes it before the guest connects.
if [ -x "$HOTPLUG" ]; then
	cat >"$WORK/blkbackd-slow" <<EOF
#!/bin/sh
[ "\$1" = add ] && xenstore-write "\$XENBUS_PATH/limit-iops" 50 \\
	"\$XENBUS_PATH/limit-bytes-per-second" 1048576
exec "$HOTPLUG" "\$@"
EOF
	chmod +x "$WORK/blkbackd-slow"
	guest 3 16M
	attach 3 xvda "$WORK/d3.img" --script "$WORK/blkbackd-slow"
	blkfront 3 --ops 50 --verify >/dev/null
	# The limit in force when it connected: the last set before that.
	grep "vbd 3/51712: \(I/O limit\|connected\)" "$WORK/blkbackd.log" |
		sed -n '/connected/{x;p;q};h' |
		grep -q "I/O limit 50 requests/s, 1048576 bytes/s" ||
		fail "the hotplug script's limit did not come before the guest connected"
	no_errors 3/51712
fi

# 5. A reload applies new defaults to the disks whose xenstore sets none,
# and only to them.
guest 4 16M
attach 4
wait_file_line "$WORK/blkbackd.log" "vbd 4/51712: I/O limit $IOPS requests/s" 10 ||
	fail "dom 4 did not take the default limit"
printf 'limit-iops = 300\nlimit-bandwidth-mib = 7\n' >"$WORK/blkbackd.conf"
$CTL reload || fail "reload failed"
$CTL --json list >"$WORK/l2.json" || fail "list failed"
limit_of() { json "$WORK/l2.json" "[(x['limit']['iops'], x['limit']['bytes_per_second']) for x in d['devices'] if x['domid']==$1][0]"; }
[ "$(limit_of 4)" = "(300, 7340032)" ] ||
	fail "after the reload dom 4's limit is $(limit_of 4)"
[ "$(limit_of 1)" = "(400, 0)" ] ||
	fail "the reload changed dom 1's own limit to $(limit_of 1)"
# A key that is no number is reported, and the limit stays.
xenstore-write "$(be_path 4)/limit-iops" lots || fail "xenstore-write failed"
wait_file_line "$WORK/blkbackd.log" "vbd 4/51712: .*/limit-iops is not a number" 10 ||
	fail "a malformed limit-iops was not reported"
$CTL --json list >"$WORK/l2.json" || fail "list failed"
[ "$(limit_of 4)" = "(300, 7340032)" ] ||
	fail "a malformed key changed dom 4's limit to $(limit_of 4)"

no_errors 1/51712
no_errors 2/51712

# 6. The limits live in xenstore: a restarted daemon keeps them. Two
# queues, on two workers, share one limit.
restart_daemon --config "$WORK/blkbackd.conf" --workers 2
$CTL limit 1/51712 >"$WORK/limit.out" || fail "limit 1/51712 failed"
grep -q "^limit 400 requests/s;" "$WORK/limit.out" ||
	fail "after a restart dom 1's limit is: $(cat "$WORK/limit.out")"
$CTL limit 1/51712 --iops 120 >/dev/null || fail "limit failed"
blkfront 1 --seconds 5 --depth 8 --queues 2 --verify >/dev/null
grep -q "connected: .* 2 queues" "$WORK/front-1.out" ||
	fail "dom 1 did not get two queues: $(connected_line 1)"
grep -q "vbd 1/51712: queue 1 on worker 1" "$WORK/blkbackd.log" ||
	fail "dom 1's queues are not on two workers"
i1=$(field "$WORK/front-1.out" 'IOPS \([0-9]*\) (bs')
note "two queues limited to 120 together: $i1 IOPS"
within "$i1" 72 168 || fail "two queues ran $i1 IOPS under a limit of 120"
no_errors 1/51712
assert_daemon_alive
finish

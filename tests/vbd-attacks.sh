#!/bin/sh
# The attack catalogue (docs/security.md) against the running daemon: a
# hostile guest attacks its ring indexes, event channel, grants, request
# slots, indirect pages and xenstore directory, and dies with I/O in
# flight. After every attack: the daemon lives; the attack was answered
# with errors (or, for a lie about the ring indexes, that ring was
# disconnected with an error node); the attacker's image still holds
# exactly its pattern at its size, a read-only disk and a canary file
# beside the images are untouched; and a well-behaved guest doing
# verified I/O the whole time never failed. The guest reports what it
# was answered (facts); each attack below states what that must be.
. "$top_srcdir/tests/lib.sh"
xensim_setup
start_daemon --max-indirect-segments 1024

SEED=4242
guest 1 8M 32
write_pattern "$WORK/d1.img" 16384 "$SEED"
cp "$WORK/d1.img" "$WORK/expected-1"
guest 2 16M
guest 3 4M
write_pattern "$WORK/d3.img" 8192 "$SEED"
cp "$WORK/d3.img" "$WORK/expected-3"
head -c 1048576 /dev/urandom >"$WORK/canary"
cp "$WORK/canary" "$WORK/canary.orig"

attach 1
attach 2
# shellcheck disable=SC2086 # SCRIPT_OPT is empty or one option
"$TOOLSTACK" attach 3 "$WORK/d3.img" xvda --mode r $SCRIPT_OPT \
	>>"$WORK/toolstack.log" 2>&1 || fail "read-only attach failed"

good_guest_start 2

CASES=0
# everything_intact WHAT: the checks every attack ends with.
everything_intact() {
	assert_daemon_alive
	assert_good_guest "$1"
	cmp -s "$WORK/expected-1" "$WORK/d1.img" ||
		fail "$1: the attacker's image changed (size $(stat -c %s \
			"$WORK/d1.img"), first difference:" \
			"$(cmp "$WORK/expected-1" "$WORK/d1.img" 2>&1)"
	cmp -s "$WORK/expected-3" "$WORK/d3.img" ||
		fail "$1: the read-only image changed"
	cmp -s "$WORK/canary.orig" "$WORK/canary" ||
		fail "$1: the canary file changed"
}

# attack DOMID CHECK [BLKFRONT OPTIONS] <EXPECTED: run one xensim-blkfront
# check or attack (workload-checks.c, workload-attacks.c), which reports
# what the backend answered as facts; they must be EXPECTED, one
# "CASE KEY=VALUE..." line each (expect_facts in lib.sh).
attack() {
	a_dom=$1
	a_check=$2
	shift 2
	CASES=$((CASES + 1))
	a_what="$a_check${*:+ ($*)}"
	"$BLKFRONT" --domid "$a_dom" --seed "$SEED" --check "$a_check" "$@" \
		>"$WORK/attack.out" 2>&1 || {
		cat "$WORK/attack.out" >&2
		fail "attack $a_what: the guest could not carry it out"
	}
	expect_facts "$WORK/attack.out" "$a_check" "attack $a_what"
	note "$a_what: $(sed -n "s/^fact check=$a_check case=//p" \
		"$WORK/attack.out" | grep -v '^probe-' | tr '\n' ';')"
	everything_intact "attack $a_what"
}

# ring_broken DOMID WHAT: the backend disconnected the ring (the facts
# said it left Connected) and its error node says why.
ring_broken() {
	rb_err=$(xs_read "$(be_path "$1")/error") ||
		fail "attack $2: the ring closed without an error node"
	note "$2: ring disconnected: $rb_err"
}

# The probe at the attacks' sector, and the facts of a ring that went to
# Closing (5) or on to Closed (6).
probe() { probe_facts 1024; }
closed='backend-state=[56]'

# Malformed requests (the checks of vbd-hostile.sh and
# vbd-hostile-features.sh), now with the image, canary and neighbour
# checks.
for abi in x86_64 x86_32; do
	bad_requests_facts 1 >"$WORK/want"
	attack 1 bad-requests --abi $abi <"$WORK/want"
	bad_indirect_facts 1 >"$WORK/want"
	attack 1 bad-indirect --abi $abi <"$WORK/want"
done
past_end_facts 16384 >"$WORK/want"
attack 1 past-end <"$WORK/want"
attack 1 unknown-ops --abi x86_32 <<EOF
operation-7 status=EOPNOTSUPP
operation-99 status=EOPNOTSUPP
operation-200 status=EOPNOTSUPP
operation-255 status=EOPNOTSUPP
$(probe)
EOF
# Grants, by grant copy and by persistent grants. A read into a
# read-only grant fails; with grant copy a write from it is served (the
# control: the grant itself works), persistent grants never map it.
for pers in yes no; do
	attack 1 grant-other-domain --persistent $pers <<EOF
read-into-other-domains-grant status=ERROR
write-from-other-domains-grant status=ERROR
$(probe)
EOF
	{
		echo "read-into-readonly-grant status=ERROR"
		[ $pers = yes ] || echo "write-from-readonly-grant status=OKAY"
		probe
	} >"$WORK/want"
	attack 1 grant-readonly-read --persistent $pers <"$WORK/want"
	attack 1 grant-revoked --persistent $pers <<EOF
read-into-revoked-grant status=ERROR
write-from-revoked-grant status=ERROR
$(probe)
EOF
	# Revoked 0-63 µs after the push: either answer is right, but every
	# round is answered, and a read answered OKAY holds the right data.
	attack 1 grant-revoke-race --persistent $pers <<EOF
rounds answered=200 okay=[0-9]* refused=[0-9]* okay-bad-data=0 still-mapped=[0-9]*
$(probe)
EOF
	# One grant in 11 segments, then in 8 one-sector segments written
	# and read back; without persistent grants the grant ends after.
	{
		echo "11-reads-into-one-page status=OKAY"
		echo "write-8-sectors-one-page status=OKAY"
		echo "read-8-sectors-one-page status=OKAY"
		[ $pers = yes ] || echo "grant-end result=0"
		echo "read-back-data sector=1024 sectors=8 mismatched=0 outside=0"
		probe
	} >"$WORK/want"
	attack 1 same-page-many-segments --persistent $pers <"$WORK/want"
done
# The request and the indirect page rewritten while they are processed:
# either answer is right, but every round must get one (and the image
# checks show nothing was written anywhere else).
attack 1 double-fetch --abi x86_64 <<EOF
rounds answered=1000 okay=[0-9]* refused=[0-9]*
$(probe)
EOF
attack 1 double-fetch --abi x86_32 --persistent no <<EOF
rounds answered=1000 okay=[0-9]* refused=[0-9]*
$(probe)
EOF
attack 1 indirect-rewrite <<EOF
rounds answered=250 okay=[0-9]* refused=[0-9]*
$(probe)
EOF
attack 1 indirect-missing-page <<EOF
600-segments-one-page status=ERROR
$(probe)
EOF
# Junk in the seven unused page references is ignored: 16 pages written
# and read back through one indirect page.
attack 1 indirect-junk-pages <<EOF
write-junk-in-unused-pages status=OKAY
read-junk-in-unused-pages status=OKAY
read-back-data sector=1024 sectors=128 mismatched=0 outside=0
$(probe)
EOF
# Notifications and responses: a full one-page ring left unconsumed
# while the guest pokes the backend, then taken: every read OKAY.
attack 1 never-consume --ring-order 0 <<EOF
left-on-ring requests=32 ring=32
answers answered=32 okay=32
$(probe)
EOF
attack 1 evtchn-storm <<EOF
notifies sent=50000
$(probe)
EOF
# Lies about the ring indexes break that ring only.
attack 1 prod-beyond-ring <<EOF
req-prod-ring-and-one-ahead $closed
EOF
ring_broken 1 prod-beyond-ring
attack 1 prod-jump --abi x86_32 <<EOF
req-prod-2-31-ahead $closed
EOF
ring_broken 1 prod-jump
attack 1 prod-backwards <<EOF
$(probe)
req-prod-back-by-one $closed
EOF
ring_broken 1 prod-backwards
# A read-only disk: writes, flushes with data and barriers fail; a
# discard, not offered there, is answered EOPNOTSUPP (docs/security.md).
readonly_facts 4 "$(be_path 3)" >"$WORK/want"
attack 3 readonly <"$WORK/want"
attack 3 discard-readonly <<EOF
disk readonly=1
discard status=EOPNOTSUPP
EOF

# ---- the xenstore directory ----

# xs_attack DOMID REGEX NODE=VALUE...: write these frontend nodes and
# state Initialised; the backend must refuse (Closing, an error node that
# matches REGEX); then the frontend closes and starts over.
xs_attack() {
	x_dom=$1
	x_re=$2
	shift 2
	CASES=$((CASES + 1))
	x_fe=$(fe_path "$x_dom")
	x_be=$(be_path "$x_dom")
	xenstore-write "$x_fe/state" 1
	wait_node "$x_be/state" 2 5 ||
		fail "xenstore $*: the backend is not in InitWait"
	for kv in "$@"; do
		xenstore-write "$x_fe/${kv%%=*}" "${kv#*=}" ||
			hard_error "cannot write $kv"
	done
	xenstore-write "$x_fe/state" 3
	wait_node "$x_be/state" 5 5 ||
		fail "xenstore $*: backend in state" \
			"$(xs_read "$x_be/state"), wanted Closing"
	x_err=$(xs_read "$x_be/error") ||
		fail "xenstore $*: no error node"
	echo "$x_err" | grep -q -- "$x_re" ||
		fail "xenstore $*: error node '$x_err' does not match '$x_re'"
	note "xenstore $*: refused: $x_err"
	for kv in "$@"; do
		xenstore-rm "$x_fe/${kv%%=*}" 2>/dev/null
	done
	xenstore-write "$x_fe/state" 6
	wait_node "$x_be/state" 6 5 ||
		fail "xenstore $*: the backend did not follow to Closed"
	everything_intact "xenstore $*"
}

guest 4 4M
attach 4
xs_attack 4 ring-page-order ring-page-order=99 ring-ref0=8 event-channel=3
xs_attack 4 ring-ref event-channel=3
xs_attack 4 ring-ref ring-ref=abc event-channel=3
xs_attack 4 ring-ref ring-ref=8 event-channel=3
xs_attack 4 event-channel ring-ref=8 event-channel=4294967296
xs_attack 4 "ring-ref\|event-channel" ring-ref=8 event-channel=4294967295
xs_attack 4 protocol ring-ref=8 event-channel=3 protocol=arm-abi
xs_attack 4 queues multi-queue-num-queues=1000 queue-0/ring-ref=8 \
	queue-0/event-channel=3
# State flapping between Initialising and Closed, hundreds of times.
CASES=$((CASES + 1))
i=0
while [ $i -lt 300 ]; do
	xenstore-write "$(fe_path 4)/state" 1
	xenstore-write "$(fe_path 4)/state" 6
	i=$((i + 1))
done
everything_intact "state flapping"
# After all that, the device serves a sane frontend, once the daemon has
# caught up with the flapping (its last word, Closed, answered with
# Closed): a frontend that started before could see the backend close
# under it, and fail as Linux's blkfront would. Slow daemons (valgrind)
# take seconds here.
n=0 steady=0
while [ "$steady" -lt 5 ]; do
	n=$((n + 1))
	[ "$n" -le 300 ] ||
		fail "state flapping: the backend did not settle in Closed within 60 s"
	if [ "$(xenstore-read "$(be_path 4)/state" 2>/dev/null)" = 6 ]; then
		steady=$((steady + 1))
	else
		steady=0
	fi
	sleep 0.2
done
blkfront 4 --ops 300 --verify >/dev/null

# ---- a guest dying with I/O in flight ----
CASES=$((CASES + 1))
guest 5 32M
attach 5
blkfront_bg 5 --seconds 30 --depth 32 --bs 45056
victim=$BG_PID
wait_node "$(be_path 5)/state" 4 15 || fail "guest 5 did not connect"
sleep 1
"$TOOLSTACK" destroy 5 >>"$WORK/toolstack.log" 2>&1 || fail "destroy failed"
wait_released 5 5 ||
	fail "daemon still holds dom 5 resources after its death: $(stat_of 5)"
kill "$victim" 2>/dev/null
everything_intact "a guest dying with I/O in flight"

# The neighbour ran throughout; let it finish its current run.
good_guest_stop 3
# The attacker's disk still serves verified I/O.
blkfront 1 --ops 300 --verify >/dev/null
assert_daemon_alive
note "$CASES attack runs; the well-behaved guest completed $GOOD_RUNS" \
	"verified runs"
exit 0

#!/bin/sh
# The attack catalogue (docs/security.md) against the running daemon: a
# hostile guest attacks its ring indexes, event channel, grants, request
# slots, indirect pages and xenstore directory, and dies with I/O in
# flight. After every attack: the daemon lives; the attack was answered
# with errors (or, for a lie about the ring indexes, that ring was
# disconnected with an error node); the attacker's image still holds
# exactly its pattern at its size, a read-only disk and a canary file
# beside the images are untouched; and a well-behaved guest doing
# verified I/O the whole time never failed.
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

# attack DOMID EXPECT CHECK [BLKFRONT OPTIONS]: run one xensim-blkfront
# check (workload-checks.c, workload-attacks.c). EXPECT is "answered"
# (every bad request got an error and the ring kept serving) or "broken"
# (the backend disconnected the ring and says why in its error node).
attack() {
	a_dom=$1
	a_expect=$2
	a_check=$3
	shift 3
	CASES=$((CASES + 1))
	a_what="$a_check${*:+ ($*)}"
	"$BLKFRONT" --domid "$a_dom" --seed "$SEED" --check "$a_check" "$@" \
		>"$WORK/attack.out" 2>&1 || {
		cat "$WORK/attack.out" >&2
		fail "attack $a_what: the guest saw the backend misbehave"
	}
	if [ "$a_expect" = broken ]; then
		a_err=$(xs_read "$(be_path "$a_dom")/error") ||
			fail "attack $a_what: the ring closed without an error node"
		note "$a_what: ring disconnected: $a_err"
	else
		a_said=$(grep -v "connected:\|check .* OK" "$WORK/attack.out")
		note "$a_what: answered${a_said:+: $a_said}"
	fi
	everything_intact "attack $a_what"
}

# Malformed requests (the checks of vbd-hostile.sh and
# vbd-hostile-features.sh), now with the image, canary and neighbour
# checks.
for abi in x86_64 x86_32; do
	attack 1 answered bad-requests --abi $abi
	expect_check "$WORK/attack.out" bad-requests "$abi" \
		bad_requests_facts 1
	attack 1 answered bad-indirect --abi $abi
	expect_check "$WORK/attack.out" bad-indirect "$abi" \
		bad_indirect_facts 1
done
attack 1 answered past-end
expect_check "$WORK/attack.out" past-end attack past_end_facts 16384
attack 1 answered unknown-ops --abi x86_32
# Grants, by grant copy and by persistent grants.
for pers in yes no; do
	attack 1 answered grant-other-domain --persistent $pers
	attack 1 answered grant-readonly-read --persistent $pers
	attack 1 answered grant-revoked --persistent $pers
	attack 1 answered grant-revoke-race --persistent $pers
	attack 1 answered same-page-many-segments --persistent $pers
done
# The request and the indirect page rewritten while they are processed.
attack 1 answered double-fetch --abi x86_64
attack 1 answered double-fetch --abi x86_32 --persistent no
attack 1 answered indirect-rewrite
attack 1 answered indirect-missing-page
attack 1 answered indirect-junk-pages
# Notifications and responses.
attack 1 answered never-consume --ring-order 0
attack 1 answered evtchn-storm
# Lies about the ring indexes break that ring only.
attack 1 broken prod-beyond-ring
attack 1 broken prod-jump --abi x86_32
attack 1 broken prod-backwards
# A read-only disk: writes, flushes with data, barriers and discards fail.
attack 3 answered readonly
expect_check "$WORK/attack.out" readonly attack readonly_facts 4 \
	"$(be_path 3)"
attack 3 answered discard-readonly

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
# After all that, the device serves a sane frontend.
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

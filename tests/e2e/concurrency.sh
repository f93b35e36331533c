# shellcheck shell=bash
# The concurrent-guests comparison of the real-Xen test (issue 8, "the
# original experiment under real Xen"), sourced by dom0-test.sh and run
# after its other parts, with blkbackd stopped and xen-blkback loaded.
#
# Each arm (the kernel path: loop + xen-blkback, as xl sets it up for a
# file; blkbackd; and, when BLKBACKD_E2E_CONC_VARIANT gives options to
# measure, "variant": blkbackd with those options) is a session: one
# guest runs the build-like job of `e2e-check mixjob` alone (N=1), then
# two more guests are started and all three run it at once (N=3).  The
# arms take turns, each repeat starting one arm further on (kernel,
# blkbackd | blkbackd, kernel | ...), CONC_REPEATS times each, so that
# drift in the emulation hits every arm alike.
#
# Guests are started once per session and wait for dom0's command in
# the first 4 KiB of their own disk ("E2EMIX SEQ RUNS", written by dom0
# with O_DIRECT into the image), so that the three start within 50 ms of
# one another without a boot in the measurement.  Each guest times its own
# runs (MIX-RUN lines on its console).
#
# Checks (E2E: lines): per guest and session, every run finished without
# an I/O error and with the right data in every read, blkfront still sent
# flushes (the disk's write_cache stayed "write back"), the whole region
# verified afterwards in the guest (MIX-DONE PASS), and dom0 finding in
# the image what the runs wrote (e2e-check mixverify), and not what one
# run fewer would have left; the daemon logged no error.
# Figures (E2E-BENCH conc lines): per arm, repeat and N every guest's
# time, the aggregate MB/s (bytes of all guests / time from the first
# start to the last end, by the guests' clocks, which Xen keeps in step)
# and max/min guest time; then medians over the repeats with their
# range, the blkbackd / kernel aggregate ratios and the issue's targets,
# marked PASS or MISS as information only (TCG figures vary from boot to
# boot; they do not fail the test).

# Work per guest and run, and the repeats (BLKBACKD_E2E_CONC_REPEATS,
# by run.sh): at 3, 6 sessions (9 with a variant), about 10 minutes (15)
# under TCG on a busy 2-core host; CI runs 1, for the checks alone.
CONC_SIZE=16M
CONC_REPEATS=$(cat "$E/conc-repeats" 2>/dev/null || echo 3)
CONC_GUESTS=3
CONC_TIMES=$R/conc-times
CONC_LOG=$R/blkbackd-conc.log
CONC_ARM=none
CONC_VARIANT=$(cat "$E/conc-variant" 2>/dev/null || true)
CONC_ARMS="kernel blkbackd${CONC_VARIANT:+ variant}"

# Bring up one arm's backend, taking the other one down.
conc_use_kernel() {
	[ "$CONC_ARM" != kernel ] || return 0
	conc_stop_daemon
	modprobe --ignore-install xen-blkback || return 1
	CONC_ARM=kernel
}

conc_start_daemon() { # ARM COMMAND
	[ "$CONC_ARM" != "$1" ] || return 0
	conc_stop_daemon
	if lsmod | grep -q '^xen_blkback'; then
		rmmod xen_blkback || return 1
	fi
	launch_daemon "$2" "$CONC_LOG"
	wait_until 30 "[ \$(grep -c 'serving ' '$CONC_LOG') -gt $CONC_STARTS ]" &&
		kill -0 "$DPID" 2>/dev/null || return 1
	CONC_STARTS=$((CONC_STARTS + 1))
	CONC_ARM=$1
}
CONC_STARTS=0

conc_use_blkbackd() { conc_start_daemon blkbackd "$DAEMON_CMD"; }
conc_use_variant() { conc_start_daemon variant "$DAEMON_CMD $CONC_VARIANT"; }

conc_stop_daemon() {
	case $CONC_ARM in blkbackd | variant) ;; *) return 0 ;; esac
	kill -TERM "$DPID"
	wait_until 60 "! kill -0 $DPID 2>/dev/null" || kill -KILL "$DPID"
	wait "$DPID"
	CONC_ARM=none
}

# Tell a guest to do RUNS runs of the job (its SEQ-th command).
conc_command() { # IMAGE SEQ RUNS
	printf 'E2EMIX %s %s\n' "$2" "$3" |
		dd of="$1" bs=4096 count=1 conv=notrunc,sync oflag=direct 2>/dev/null
}

# Create a guest of the session and wait until its job is ready.
conc_start_guest() { # NAME SEED
	local img=$IMG/$1.img disk out
	disk="vdev=xvda,access=rw,target=$img"
	[ "$CONC_ARM" = kernel ] ||
		disk="vdev=xvda,access=rw,script=blkbackd,target=$img"
	truncate -s $((1 + ${CONC_SIZE%M}))M "$img" # 1 MiB for the command
	guest_config "$1" "$disk" "e2e_role=mix e2e_mix_seed=$2 e2e_mix_size=$CONC_SIZE"
	if ! out=$(timeout 120 xl create "$CFG/$1.cfg" 2>&1); then
		result FAIL "$1/xl-create" "$(echo "$out" | tail -n 4 | tr '\n' ' ')"
		return 1
	fi
	wait_console "$1" MIX-READY 180
}

# The guest's MIX-RUN line of command SEQ: "SECS BYTES START OK".
conc_run_line() { # NAME SEQ
	tr -d '\r' <"$(console "$1")" | grep "^MIX-RUN seq=$2 " | tail -n 1 |
		sed -n 's/.* secs=\([^ ]*\) bytes=\([^ ]*\) .* start=\([^ ]*\) ok=\([01]\).*/\1 \2 \3 \4/p'
}

# Start one run in the given guests at once (each its command SEQ); wait
# for their MIX-DONE and record "ARM REP N GUEST SECS BYTES START".
conc_phase() { # ARM REP NAME:SEQ...
	local arm=$1 rep=$2 n gs line
	shift 2
	n=$#
	for gs in "$@"; do
		conc_command "$IMG/${gs%:*}.img" "${gs#*:}" 1
	done
	for gs in "$@"; do
		wait_console "${gs%:*}" "MIX-DONE seq=${gs#*:} " 600 || return 1
	done
	for gs in "$@"; do
		line=$(conc_run_line "${gs%:*}" "${gs#*:}")
		# shellcheck disable=SC2086 # split into fields on purpose
		set -- $line
		[ "${4:-0}" = 1 ] || return 1
		echo "$arm $rep $n ${gs%:*} $1 $2 $3" >>"$CONC_TIMES"
	done
}

# Per guest: all its runs succeeded and verified in the guest, and the
# image in dom0 holds what they wrote (and so what the last one wrote).
conc_guest_verdict() { # NAME SEED RUNS
	local g=$1 bad="" out con
	con=$(tr -d '\r' <"$(console "$g")")
	echo "$con" | grep -q '^MIX-RUN .* ok=0' &&
		bad="$bad $(echo "$con" | grep -m 1 '^MIX-RUN .* ok=0');"
	[ "$(echo "$con" | grep -c '^MIX-DONE .* PASS')" -eq "$3" ] ||
		bad="$bad $(echo "$con" | grep '^MIX-' | tail -n 2 | tr '\n' ' ');"
	# Both backends offer flushes; blkfront stops sending them (and fsync
	# stops reaching the disk) once the backend failed one.
	echo "$con" | grep '^MIX-DONE ' | grep -qv ' cache=write-back$' &&
		bad="$bad blkfront turned flushes off: $(echo "$con" |
			grep '^MIX-DONE ' | grep -v ' cache=write-back$' | head -n 1);"
	out=$("$CHECK" mixverify "$IMG/$g.img" "$2" "$CONC_SIZE" "$3" 2>&1) ||
		bad="$bad dom0: $out;"
	# ... and not what one run fewer leaves: the last run's writes landed.
	! "$CHECK" mixverify "$IMG/$g.img" "$2" "$CONC_SIZE" $(($3 - 1)) \
		>/dev/null 2>&1 || bad="$bad dom0: the image matches $(($3 - 1)) runs;"
	if [ -z "$bad" ]; then
		result PASS "$g/mixed-job-data" "$3 runs, verified in the guest and in dom0"
	else
		result FAIL "$g/mixed-job-data" "${bad# }"
	fi
	rm -f "$IMG/$g.img"
}

# After a blkbackd session's runs, before its guests go: how often the
# daemon moved their rings between its workers (balance.h), and how long
# the rings served nothing because of it, summed over the disks.
conc_moves() { # ARM REP
	local stats
	stats=$(blkbackctl --socket "$RUNTIME_DIR/control" --json stats) || return 0
	echo "$stats" | python3 -c '
import json, sys
d = json.load(sys.stdin)["devices"]
n = sum(x["moves"]["count"] for x in d)
k = sum(x["moves"]["kept"] for x in d)
p = sum(x["moves"]["paused_us"] for x in d) / 1000
c = sum(x["moves"]["closing_us"] for x in d) / 1000
dr = sum(x["moves"]["draining_us"] for x in d) / 1000
rl = sum(x["moves"]["releasing_us"] for x in d) / 1000
print("E2E-BENCH conc %s N=%d repeat %s: ring moves %d (%d kept mapped), "
      "paused %.1f ms in all, %.1f of it closing (%.1f draining, %.1f releasing)"
      % (sys.argv[1], len(d), sys.argv[2], n, k, p, c, dr, rl))' "$1" "$2"
}

# After a daemon arm's session: where each worker ran (the CPUs it may
# use) and on which of dom0's vCPUs its event channels' interrupts were
# taken (/proc/interrupts: "evtchn:<worker's thread name>", counted since
# the ports were bound). With --pin-workers every one of them must be
# routed to its worker's CPU (cpu-affinity.h).
conc_events() { # ARM REP N
	local t name cpus irqs line irq aff bad="" check=no
	[ "$1" = variant ] && case " $CONC_VARIANT " in
		*" --pin-workers "*) check=yes ;;
	esac
	for t in /proc/"$DPID"/task/*; do
		name=$(cat "$t/comm" 2>/dev/null) || continue
		case $name in blkbackd-w*) ;; *) continue ;; esac
		cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status")
		irqs=$(grep " evtchn:$name\$" /proc/interrupts)
		echo "E2E-BENCH conc $1 N=$3 repeat $2: $name on CPUs $cpus; its" \
			"$(echo "$irqs" | grep -c .) event interrupts taken per vCPU:" \
			"$(echo "$irqs" | awk '{ for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n[i - 2] += $i
				if (i - 2 > m) m = i - 2 }
				END { for (c = 0; c < m; c++) printf " cpu%d %d", c, n[c] }')"
		[ $check = yes ] || continue
		while read -r line; do
			[ -n "$line" ] || continue
			irq=${line%%:*}
			# Gone since (a ring moved, its port unbound): not ours.
			aff=$(cat "/proc/irq/$irq/smp_affinity_list" 2>/dev/null) &&
				[ -n "$aff" ] || continue
			[ "$aff" = "$cpus" ] ||
				bad="$bad irq $irq of $name on $aff, not $cpus;"
		done <<<"$irqs"
	done
	[ $check = yes ] || return 0
	if [ -z "$bad" ]; then
		result PASS "conc-v$2/events-routed-n$3"
	else
		result FAIL "conc-v$2/events-routed-n$3" "${bad# }"
	fi
}

# One session on ARM for repeat REP: guest 1 alone (N=1), then guests 1-3
# together (N=3).  Guest i's job has seed 100 + i.
conc_session() { # ARM REP
	local arm=$1 rep=$2 p i ok=1
	p=conc-${arm:0:1}$rep
	if ! "conc_use_$arm"; then
		result FAIL "$p/backend-up" "cannot bring up the $arm arm"
		return 1
	fi
	conc_start_guest "$p-g1" 101 && conc_phase "$arm" "$rep" "$p-g1:1" || ok=0
	[ "$arm" = kernel ] || conc_events "$arm" "$rep" 1
	for i in $(seq 2 $CONC_GUESTS); do
		[ $ok = 0 ] || conc_start_guest "$p-g$i" $((100 + i)) || ok=0
	done
	[ $ok = 0 ] || conc_phase "$arm" "$rep" "$p-g1:2" \
		$(seq -f "$p-g%g:1" 2 $CONC_GUESTS) || ok=0
	if [ "$arm" != kernel ]; then
		conc_moves "$arm" "$rep"
		conc_events "$arm" "$rep" $CONC_GUESTS
	fi
	for i in $(seq 1 $CONC_GUESTS); do
		! domid_of "$p-g$i" >/dev/null ||
			timeout 60 xl destroy "$p-g$i" >/dev/null 2>&1
	done
	wait_until 60 "[ -z \"\$(xenstore-list $BE 2>/dev/null)\" ]"
	if [ $ok = 0 ]; then
		result FAIL "$p/session" "a guest did not start or finish its runs"
		return 1
	fi
	conc_guest_verdict "$p-g1" 101 2
	for i in $(seq 2 $CONC_GUESTS); do
		conc_guest_verdict "$p-g$i" $((100 + i)) 1
	done
}

# The figures, from the recorded times (see the top of this file).
conc_report() {
	awk -v reps="$CONC_REPEATS" -v guests=$CONC_GUESTS -v armlist="$CONC_ARMS" '
	function sort(a, k, i, j, t) {
		for (i = 2; i <= k; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
	}
	# "median (min-max)" of v[1..k]; sets med.
	function spread(v, k) {
		sort(v, k)
		med = k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
		return sprintf("%.2f (%.2f-%.2f, %d repeats)", med, v[1], v[k], k)
	}
	function verdict(ok) { return ok ? "PASS" : "MISS" }
	# v as printed (two decimals), so that a verdict agrees with its figure.
	function shown(v) { return sprintf("%.2f", v) + 0 }
	{
		key = $1 " " $2 " " $3
		times[key] = times[key] sprintf(" %.2f", $5)
		bytes[key] += $6
		if (!(key in hi) || $5 > hi[key]) hi[key] = $5
		if (!(key in lo) || $5 < lo[key]) lo[key] = $5
		if (!(key in s0) || $7 < s0[key]) s0[key] = $7
		if (!(key in s1) || $7 > s1[key]) s1[key] = $7
		if (!(key in e1) || $7 + $5 > e1[key]) e1[key] = $7 + $5
	}
	# "A/B aggregate N=n: median (min-max)" over the repeats with both.
	function ratio(x, y, n, k, r) {
		k = 0
		for (r = 1; r <= reps; r++)
			if ((x " " r " " n) in agg && (y " " r " " n) in agg)
				v[++k] = agg[x " " r " " n] / agg[y " " r " " n]
		if (!k) return ""
		return sprintf("E2E-BENCH conc ratio %s/%s aggregate N=%d: %s", x, y, n, spread(v, k))
	}
	END {
		na = split(armlist, arms, " ")
		split("1 " guests, ns, " ")
		for (a = 1; a <= na; a++) for (i = 1; i <= 2; i++) for (r = 1; r <= reps; r++) {
			key = arms[a] " " r " " ns[i]
			if (!(key in hi)) continue
			agg[key] = bytes[key] / (e1[key] - s0[key]) / 1e6
			mm[key] = hi[key] / lo[key]
			printf "E2E-BENCH conc %s N=%d repeat %d: guest s%s; aggregate %.2f MB/s; max/min %.2f; start skew %.2f s\n",
				arms[a], ns[i], r, times[key], agg[key], mm[key], s1[key] - s0[key]
		}
		for (a = 1; a <= na; a++) for (i = 1; i <= 2; i++) {
			k = 0
			for (r = 1; r <= reps; r++) {
				key = arms[a] " " r " " ns[i]
				if (key in agg) { k++; v[k] = agg[key]; w[k] = mm[key] }
			}
			if (!k) continue
			s = spread(v, k)
			t = spread(w, k)
			printf "E2E-BENCH conc %s N=%d median: aggregate MB/s %s; max/min %s\n",
				arms[a], ns[i], s, t
			if (arms[a] == "blkbackd" && ns[i] == guests)
				maxmin = med
		}
		for (a = 1; a <= na; a++) {
			k = 0
			for (r = 1; r <= reps; r++)
				if ((arms[a] " " r " 1") in agg && (arms[a] " " r " " guests) in agg)
					v[++k] = agg[arms[a] " " r " " guests] / agg[arms[a] " " r " 1"]
			if (k) printf "E2E-BENCH conc %s aggregate N=%d / N=1: %s\n", arms[a], guests, spread(v, k)
		}
		for (i = 1; i <= 2; i++) {
			line = ratio("blkbackd", "kernel", ns[i])
			if (line == "") continue
			target = ns[i] == 1 ? 1.0 : 1.5
			printf "%s; target >= %.1f: %s\n", line, target,
				verdict(shown(med) >= target)
		}
		# The variant against both, for information.
		for (i = 1; i <= 2; i++) for (a = 1; a <= na; a++) {
			if (arms[a] != "variant") continue
			line = ratio("variant", "kernel", ns[i])
			if (line != "") print line
			line = ratio("variant", "blkbackd", ns[i])
			if (line != "") print line
		}
		if (maxmin != "")
			printf "E2E-BENCH conc blkbackd max/min guest time N=%d: median %.2f; target <= 1.15: %s\n",
				guests, maxmin, verdict(shown(maxmin) <= 1.15)
	}' "$CONC_TIMES"
}

# CONC_ARMS, rotated to start at the REP-th (counting round).
conc_arms_from() { # REP
	local arms i n
	read -r -a arms <<<"$CONC_ARMS"
	n=${#arms[@]}
	for i in $(seq 0 $((n - 1))); do
		echo "${arms[$(((i + $1 - 1) % n))]}"
	done
}

# The whole comparison (it installs blkbackd itself when the blkbackd part
# did not run).
concurrency_comparison() {
	local rep arm t0
	install_blkbackd || return
	t0=$(uptime_s)
	: >"$CONC_TIMES"
	[ -z "$CONC_VARIANT" ] || echo "e2e: the variant arm: blkbackd $CONC_VARIANT"
	for rep in $(seq 1 $CONC_REPEATS); do
		# Each repeat starts one arm further on: every arm as often first.
		for arm in $(conc_arms_from "$rep"); do
			if out_of_time; then
				result FAIL concurrent-guests "out of time before $arm repeat $rep"
				break 2
			fi
			conc_session "$arm" "$rep"
		done
	done
	conc_stop_daemon
	if grep -qE '^(blkbackd: err:|<[0-3]>)' "$CONC_LOG"; then
		result FAIL conc/blkbackd-logged-no-errors \
			"$(grep -E '^(blkbackd: err:|<[0-3]>)' "$CONC_LOG" | head -n 5 | tr '\n' ' ')"
	else
		result PASS conc/blkbackd-logged-no-errors
	fi
	echo "e2e: the concurrent-guests comparison took $(($(uptime_s) - t0)) s"
	# Where dom0 took its disk's interrupts, against which to read the
	# workers' CPUs (conc_events).
	grep -E 'virtio|pirq' /proc/interrupts | sed 's/^/e2e: interrupts: /'
	conc_report
}

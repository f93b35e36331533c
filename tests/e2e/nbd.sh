# shellcheck shell=bash
# The NBD store under real Xen (issue 12, part nbd; docs/nbd.md), sourced
# by dom0-test.sh, which runs guest_nbd while its blkbackd serves guests
# and nbd_kernel_comparison after the kernel path's part.
#
# guest_nbd: a qcow2 image holding a pattern dom0 wrote, served by
# qemu-storage-daemon on a unix socket in dom0, is a PV guest's disk by
# the disk line of docs/nbd.md:
#   vdev=xvda,access=rw,script=blkbackd,target=nbd+unix:///EXPORT?socket=PATH
# The guest reads dom0's pattern, then writes and reads back a pass's
# pattern without end (guest role migwork). Meanwhile dom0 kills the
# server (SIGKILL) and starts it again a second later: the guest's passes
# must go on without one failing, and blkbackd must log the outage once
# and its end. With part migrate too, the guest is then moved by
# `xl migrate` to this host, both ends reaching the same server, and the
# receiving device takes the export over once the sending one has
# released it. After
# `xl shutdown` and the server's exit, `qemu-img check` finds the image
# clean and dom0 finds in it (through `qemu-img convert`) the last pass
# the guest reported and its own pattern untouched.
#
# The image's metadata is preallocated: qemu-storage-daemon keeps the
# qcow2 tables of clusters it allocates in its own cache until a flush,
# so a server killed with SIGKILL can lose writes it had acknowledged
# into new clusters (the caveat of docs/nbd.md, no client can lift it);
# preallocated, every write lands in the image file, which dom0's page
# cache keeps across the kill.
#
# nbd_kernel_comparison: the same benchmark in a guest whose disk is a
# fresh qcow2 export of qemu-storage-daemon, once through blkbackd and
# libnbd (during guest_nbd) and once through the kernel's nbd module
# (nbd-client) as a phy: disk of xen-blkback; E2E-BENCH lines with the
# ratio, information only.
NBD_RUN=/run/e2e-nbd
QSD_PID=
QSD_NAME=
NBD_BENCH_SIZE=64M

nbd_sock() { echo "$NBD_RUN/$1.sock"; }
nbd_uri() { echo "nbd+unix:///$1?socket=$(nbd_sock "$1")"; }

# A qcow2 image of SIZE with dom0's pattern A (dom0-test.sh's
# write_pattern_a), its metadata preallocated (see above).
nbd_make_qcow2() { # QCOW2 SIZE
	local raw=$1.raw rc
	rm -f "$1" "$raw"
	truncate -s "$2" "$raw" && write_pattern_a "$raw" &&
		qemu-img convert -q -f raw -O qcow2 -o preallocation=metadata \
			"$raw" "$1"
	rc=$?
	rm -f "$raw"
	return $rc
}

# qemu-storage-daemon serving QCOW2 as export NAME on $NBD_RUN/NAME.sock,
# writable, as docs/nbd.md shows it; ready once the socket is there.
qsd_start() { # NAME QCOW2
	mkdir -p "$NBD_RUN"
	rm -f "$(nbd_sock "$1")"
	qemu-storage-daemon \
		--blockdev "driver=file,node-name=f,filename=$2" \
		--blockdev driver=qcow2,node-name=q,file=f \
		--nbd-server "addr.type=unix,addr.path=$(nbd_sock "$1")" \
		--export "type=nbd,id=e,node-name=q,name=$1,writable=on" \
		</dev/null >>"$R/qsd-$1.log" 2>&1 &
	QSD_PID=$!
	QSD_NAME=$1
	wait_until 30 "[ -S '$(nbd_sock "$1")' ]" && kill -0 "$QSD_PID" 2>/dev/null
}

qsd_stop() {
	[ -n "$QSD_PID" ] || return 0
	kill -TERM "$QSD_PID" 2>/dev/null
	wait_until 30 "! kill -0 $QSD_PID 2>/dev/null" || kill -KILL "$QSD_PID"
	wait "$QSD_PID" 2>/dev/null
	QSD_PID=
}

qsd_log_tail() { tail -n 3 "$R/qsd-$QSD_NAME.log" 2>/dev/null | tr '\n' ' '; }

# The server killed and started again under the guest's verified passes.
nbd_server_restart() { # GUEST DOMID
	local g=$1 dev="vbd $2/$XVDA (xvda)" n down back stats
	n=$(migwork_passes "$g")
	kill -KILL "$QSD_PID"
	wait "$QSD_PID" 2>/dev/null
	sleep 1
	if ! qsd_start "$QSD_NAME" "$NBD_IMG"; then
		result FAIL "$g/server-restarted" "$(qsd_log_tail)"
		return
	fi
	if wait_until 120 "[ \$(migwork_passes $g) -ge $((n + 2)) ]" &&
		! migwork_console "$g" | grep -q '^E2E-MIGWORK pass [0-9]* FAIL'; then
		result PASS "$g/server-restart-no-guest-error" \
			"$n passes before the kill, $(migwork_passes "$g") now"
	else
		result FAIL "$g/server-restart-no-guest-error" \
			"$n passes before, $(migwork_passes "$g") now: $(migwork_console "$g" | grep E2E-MIGWORK | tail -n 2 | tr '\n' ' ')"
		diagnose "$g" "after the server's restart"
	fi
	down=$(grep -c "$dev: the NBD server went away" "$DAEMON_LOG")
	back=$(grep -o "$dev: the NBD server is back after .*" "$DAEMON_LOG" | tail -n 1)
	if [ "$down" = 1 ] && [ -n "$back" ]; then
		result PASS "$g/outage-logged" "${back#"$dev: "}"
	else
		result FAIL "$g/outage-logged" "'went away' $down times; back: '$back'"
	fi
	stats=$(blkbackctl --socket "$RUNTIME_DIR/control" stats "$2/$XVDA" | grep 'nbd:')
	case "$stats" in
	*"outages 1, ended 1,"*"connections down 0"*) result PASS "$g/outage-counted" "$stats" ;;
	*) result FAIL "$g/outage-counted" "'$stats'" ;;
	esac
}

# xl migrate to this host, both ends reaching the same server: the
# receiving device connects once the sending one has let the export go.
nbd_migrate() { # GUEST OLD-DOMID
	migrate_checks "$1" "$2" "$(nbd_uri "$QSD_NAME")"
	[ -z "$MIG_NEW" ] || [ "$MIG_NEW" = "$2" ] || backend_gone "$2"
}

# After the guest and the server are gone: the image as qemu-img sees it.
nbd_image_checks() { # GUEST
	local g=$1 raw=$NBD_IMG.check
	check "$g/dom0-qcow2-check-clean" qemu-img check -q "$NBD_IMG"
	if ! qemu-img convert -q -f qcow2 -O raw "$NBD_IMG" "$raw"; then
		result FAIL "$g/dom0-qcow2-convert"
		return
	fi
	check_last_pass "$g" "$raw"
	check "$g/dom0-pattern-untouched" "$CHECK" verify "$raw" 32M 8M 21 -b 1M
	rm -f "$raw"
}

NBD_IMG=$IMG/nbd.qcow2
guest_nbd() {
	triple_fault_tries e2e-nbd nbd_guest_try
	nbd_bench_blkbackd
}

nbd_guest_try() {
	local g=e2e-nbd uri domid v
	if ! nbd_make_qcow2 "$NBD_IMG" 64M; then
		result FAIL $g/dom0-make-qcow2
		return
	fi
	if ! qsd_start e2e-nbd "$NBD_IMG"; then
		result FAIL $g/server-started "$(qsd_log_tail)"
		qsd_stop
		return
	fi
	uri=$(nbd_uri e2e-nbd)
	if ! migwork_guest $g "vdev=xvda,access=rw,script=blkbackd,target=$uri" \
		"e2e_verify=32:8:21"; then
		qsd_stop
		return
	fi
	domid=$(domid_of $g)
	v=$(xenstore-read "$BE/$domid/$XVDA/params" 2>/dev/null)
	if [ "$v" = "$uri" ]; then
		result PASS $g/params-is-the-uri "$v"
	else
		result FAIL $g/params-is-the-uri "'$v'"
	fi
	if wait_console $g "E2E-MIGWORK pass 1 ok" 300; then
		v=$(guest_line $g E2E-PREREAD)
		case "$v" in
		PASS*) result PASS $g/dom0-pattern-read "${v#PASS }" ;;
		*) result FAIL $g/dom0-pattern-read "'$v'" ;;
		esac
		nbd_server_restart $g "$domid"
		! has_part migrate || nbd_migrate $g "$domid"
	else
		result FAIL $g/workload-running
	fi
	v=$(domid_of $g)
	shutdown_guest $g
	backend_gone "${v:-$domid}"
	qsd_stop
	nbd_image_checks $g
}

# A fresh qcow2 export NAME for the benchmark.
nbd_bench_export() { # NAME
	if nbd_make_qcow2 "$IMG/$1.qcow2" $((2 * ${NBD_BENCH_SIZE%M}))M &&
		qsd_start "$1" "$IMG/$1.qcow2"; then
		return 0
	fi
	result FAIL "$1/server-started" "$(qsd_log_tail)"
	qsd_stop
	return 1
}

# The blkbackd arm, while guest_nbd's daemon serves.
nbd_bench_blkbackd() {
	local g=e2e-nbdb
	nbd_bench_export $g || return
	bench_guest $g "vdev=xvda,access=rw,script=blkbackd,target=$(nbd_uri $g)" $NBD_BENCH_SIZE
	qsd_stop
	echo "E2E-BENCH nbd blkbackd (libnbd, qcow2 export): $(bench_of $g | sed 's/^BENCH //')"
}

# The kernel arm (xen-blkback loaded by guest_kernel_path): the export
# on /dev/nbd0 through nbd-client, given to the guest as phy:.
nbd_kernel_comparison() {
	local g=e2e-nbdk dev=/dev/nbd0 out t0
	t0=$(uptime_s)
	if ! modprobe nbd; then
		result FAIL $g/modprobe-nbd
		return
	fi
	nbd_bench_export $g || return
	if out=$(nbd-client -u -N $g "$(nbd_sock $g)" $dev 2>&1); then
		bench_guest $g "phy:$dev,xvda,w" $NBD_BENCH_SIZE
		nbd-client -d $dev >/dev/null 2>&1
	else
		result FAIL $g/nbd-client "$(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
	qsd_stop
	echo "E2E-BENCH nbd-kernel: the kernel arm took $(($(uptime_s) - t0)) s"
	bench_compare nbd e2e-nbdb $g "nbd-client + xen-blkback"
}

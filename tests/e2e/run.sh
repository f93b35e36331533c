#!/bin/bash
# The real-Xen end-to-end test: blkbackd in a Debian dom0 under Xen 4.17,
# booted in QEMU (TCG), serving real Linux xen-blkfront guests (PV, PVH and
# HVM) started by xl; then (part xen420) a Debian 13 dom0 under Xen 4.20
# where it serves backendtype=tap disks beside xen-blkback (xen420.sh).
# Run by `make check-xen`; see tests/e2e/README.md.
#
# Environment:
#   top_srcdir, top_builddir  set by make (default: derived from this path)
#   E2E_CHECK                 the static guest checker (make builds it)
#   BLKBACKD_E2E_CACHE        cache of dom0 roots [/var/cache/blkbackd-e2e]
#   BLKBACKD_E2E_RESULTS      where logs go [$top_builddir/tests/e2e-results]
#   BLKBACKD_E2E_TIMEOUT      seconds QEMU may run [2400]
#   BLKBACKD_E2E_PARTS        "blkbackd pvh hvm driverdomain migrate nbd
#                             rbd snapshot kernel concurrency package
#                             xen420" (default), or some of "blkbackd
#                             stages pvh hvm hvm-disk driverdomain migrate
#                             nbd rbd snapshot kernel concurrency package
#                             xen420" (see README.md; xen420 is a boot of
#                             its own; hvm-disk, the HVM guest booted from
#                             its disk, is opt-in)
#   BLKBACKD_E2E_XEN420_TIMEOUT  seconds the xen420 QEMU may run [900]
#   BLKBACKD_E2E_INJECT       test knobs, crashes on purpose that the test
#                             must recover from: "triple-fault" (the first
#                             try of the PVH and HVM guests), "dom0-crash"
#                             (the first boot of the Debian 13 dom0)
#   BLKBACKD_E2E_DAEMON_ARGS  options added to the unit's command line of
#                             every daemon the test starts, to measure
#                             one (e.g. "--cache=writeback") [none]
#   BLKBACKD_E2E_CONC_VARIANT options of a third arm of the concurrent-
#                             guests comparison, blkbackd with them
#                             (e.g. "--pin-workers"), measured against
#                             both others in the same boot [none]
#   BLKBACKD_E2E_CONC_REPEATS how many times each arm of the concurrent-
#                             guests comparison runs [3]: its checks hold
#                             for every session, its medians need three
#                             (CI runs one)
# Exit: 0 all checks passed, 1 a check failed, 77 cannot run here.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "${top_srcdir:-$here/../..}" && pwd)
top_builddir=$(cd "${top_builddir:-.}" && pwd)
cache_root=${BLKBACKD_E2E_CACHE:-/var/cache/blkbackd-e2e}
results=${BLKBACKD_E2E_RESULTS:-$top_builddir/tests/e2e-results}
timeout_s=${BLKBACKD_E2E_TIMEOUT:-2400}
parts=${BLKBACKD_E2E_PARTS:-blkbackd pvh hvm driverdomain migrate nbd rbd snapshot kernel concurrency package xen420}
inject=${BLKBACKD_E2E_INJECT:-}
daemon_args=${BLKBACKD_E2E_DAEMON_ARGS:-}
conc_variant=${BLKBACKD_E2E_CONC_VARIANT:-}
conc_repeats=${BLKBACKD_E2E_CONC_REPEATS:-3}
t_start=$(date +%s)

say() { printf 'e2e: %s\n' "$*"; }
skip() {
	say "SKIP: $*"
	exit 77
}
elapsed() { echo $(($(date +%s) - t_start)); }
case $conc_repeats in
'' | *[!0-9]* | 0)
	say "BLKBACKD_E2E_CONC_REPEATS=$conc_repeats: give a count of 1 or more"
	exit 1
	;;
esac

# Debian packages of the dom0 (the daemon package's dependencies are
# added below; libnbd0, which it opens only for an NBD disk, is named here).
# systemd is PID 1 of the storage driver domain, whose root is a copy of
# this one (part driverdomain); dom0 itself boots without it. Part nbd
# needs qemu-storage-daemon (qemu-system-common), qemu-img and nbd-client;
# the stage-timing pass counts the daemon's system calls with perf.
DOM0_PACKAGES="linux-image-amd64 initramfs-tools xen-hypervisor-4.17-amd64
xen-utils-4.17 xen-utils-common xenstore-utils liburing2 libsystemd0
libjson-c5 e2fsprogs util-linux kmod procps busybox-static qemu-system-xen
systemd libnbd0 qemu-system-common qemu-utils nbd-client linux-perf"
# Ceph for part rbd: librbd1, which the daemon opens only for an
# RBD disk, and a one-node cluster's daemons and tools.
DOM0_PACKAGES_CEPH="librbd1 ceph-mon ceph-osd ceph-common"
# XFS for part snapshot: reflink copies of a running guest's disk.
DOM0_PACKAGES_XFS="xfsprogs"
# Those of the Debian 13 dom0 (part xen420); no HVM guest there, so no
# device model.
DOM0_PACKAGES_TRIXIE="linux-image-amd64 initramfs-tools
xen-hypervisor-4.20-amd64 xen-utils-4.20 xen-utils-common xenstore-utils
e2fsprogs util-linux kmod procps busybox-static"
# What this script needs on the host, by command and Debian package.
HOST_TOOLS="qemu-system-x86_64:qemu-system-x86 debootstrap:debootstrap
mkfs.ext4:e2fsprogs debugfs:e2fsprogs cpio:cpio gcc:gcc xz:xz-utils
zstd:zstd flock:util-linux timeout:coreutils
dpkg-buildpackage:dpkg-dev dh:debhelper git:git"

[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 host"
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot and apt-get)"

install_host_tools() {
	local missing="" pair
	for pair in $HOST_TOOLS; do
		command -v "${pair%%:*}" >/dev/null || missing="$missing ${pair#*:}"
	done
	# libc.a for the static checker.
	[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || missing="$missing libc6-dev"
	[ -n "$missing" ] || return 0
	say "installing on the host:$missing"
	command -v apt-get >/dev/null || skip "missing$missing and no apt-get"
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086 # a word list
	{ apt-get update -q && apt-get install -y -q --no-install-recommends \
		$missing; } >"$results/apt-host.log" 2>&1 ||
		skip "cannot install$missing (see $results/apt-host.log)"
}

# The daemon's Debian package, built with dpkg-buildpackage from this tree
# into $top_builddir/debs by tests/build-debs.sh (or reused from `make
# check-deb` of the same tree): the dom0s install it with dpkg. Sets
# daemon_deb.
daemon_package() {
	local rc=0
	daemon_deb=$(sh "$top_srcdir/tests/build-debs.sh" "$top_srcdir" \
		"$top_builddir/debs") || rc=$?
	[ $rc -ne 77 ] || skip "cannot build the Debian packages (see above)"
	[ $rc -eq 0 ] || return 1
	say "the daemon's package: $daemon_deb"
}

# The packages the daemon's package depends on (the first of each set of
# alternatives): the dom0 caches hold them, so that dpkg -i finds its
# dependencies installed, as apt would have.
daemon_packages() {
	dpkg-deb -f "$daemon_deb" Depends | tr ',' '\n' |
		sed 's/[|(].*//; s/[[:space:]]//g' | grep . | sort -u | tr '\n' ' '
}

# apt-cache for SUITE: the host's own for bookworm, else one reading
# SUITE's package lists, kept under the cache directory.
suite_apt_cache() { # SUITE ARGS...
	local suite=$1 dir=$cache_root/apt-$1
	shift
	if [ "$suite" = bookworm ]; then
		apt-cache "$@"
		return
	fi
	local opts=(-o "Dir::Etc::sourcelist=$dir/sources.list"
		-o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$dir/lists"
		-o "Dir::Cache=$dir/cache")
	if [ ! -d "$dir/lists" ] ||
		[ -n "$(find "$dir/lists" -maxdepth 0 -mmin +1440)" ]; then
		mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
		# What build-dom0.sh gives the dom0.
		printf 'deb %s %s main\n' \
			"${BLKBACKD_E2E_MIRROR:-http://deb.debian.org/debian}" "$suite" \
			"${BLKBACKD_E2E_MIRROR:-http://deb.debian.org/debian}" "$suite-updates" \
			"${BLKBACKD_E2E_SECURITY_MIRROR:-http://deb.debian.org/debian-security}" \
			"$suite-security" >"$dir/sources.list"
		apt-get "${opts[@]}" update >"$results/apt-$suite.log" 2>&1 ||
			skip "cannot read $suite's package lists (see $results/apt-$suite.log)"
		touch "$dir/lists"
	fi
	apt-cache "${opts[@]}" "$@"
}

# The cache key: the suite, the version of every package the dom0 is built
# from, and the scripts that build it.
cache_key() { # SUITE PACKAGES
	local p
	echo "suite $1"
	for p in $2; do
		printf '%s %s\n' "$p" "$(suite_apt_cache "$1" policy "$p" 2>/dev/null |
			sed -n 's/^ *Candidate: //p')"
	done
	printf 'debootstrap %s\n' "$(dpkg-query -W -f '${Version}' debootstrap)"
	sha256sum "$here/build-dom0.sh" "$here/extract-vmlinux.sh" |
		sed "s|$here/||"
}

# The suite a cache was built for; a key without a suite line is
# bookworm's, from before there were two. A dom0 with Ceph (part rbd) is
# "SUITE+ceph", kept beside the one without.
key_suite() { # KEY-FILE
	local s
	s=$(sed -n 's/^suite //p' "$1" | grep . || echo bookworm)
	! grep -q '^ceph-osd ' "$1" || s="$s+ceph"
	echo "$s"
}

# A dom0 is 1.3 GB: keep only the current one of each suite (other keys
# are stale).
prune_cache() { # SUITE KEY
	local d
	for d in "$cache_root"/*; do
		[ -f "$d/key.txt" ] && [ "$(basename "$d")" != "$2" ] || continue
		[ "$(key_suite "$d/key.txt")" = "$1" ] || continue
		say "removing the stale dom0 cache $d"
		rm -rf "$d"
	done
}

ensure_cache() { # SUITE PACKAGES
	local suite=$1 pkgs=$2 keytext key
	keytext=$(cache_key "$suite" "$pkgs")
	key=$(echo "$keytext" | sha256sum | cut -c1-16)
	cache=$cache_root/$key
	exec 9>"$cache_root/.lock"
	flock 9
	if [ -f "$cache/dom0.ext4" ]; then
		say "$suite dom0 cache: $cache (warm)"
	else
		say "$suite dom0 cache: $cache (cold: building, about 3-5 minutes)"
		rm -rf "$cache"
		# shellcheck disable=SC2086 # a word list
		bash "$here/build-dom0.sh" "$suite" "$cache" $pkgs
		echo "$keytext" >"$cache/key.txt"
		prune_cache "$(key_suite "$cache/key.txt")" "$key"
	fi
	flock -u 9
}

build_checker() {
	if [ -n "${E2E_CHECK:-}" ] && [ -x "$E2E_CHECK" ]; then
		cp "$E2E_CHECK" "$1"
	else
		gcc -static -O2 -std=gnu11 -Wall -Wextra -o "$1" "$here/e2e-check.c"
	fi
	file "$1" 2>/dev/null | grep -q 'statically linked' ||
		ldd "$1" 2>&1 | grep -q 'not a dynamic' || {
		say "$1 is not statically linked"
		return 1
	}
}

# The work disk: the daemon's package, the scripts,
# the guest kernel and initramfs; results come back on it.
make_work_disk() {
	local s=$work/stage
	mkdir -p "$s/e2e/guest" "$s/results" "$s/img" "$work/ginit/bin"
	mkdir -p "$s/e2e/debs"
	cp "$daemon_deb" "$s/e2e/debs/"
	install -m 755 "$here/dom0-init.sh" "$here/dom0-test.sh" \
		"$here/concurrency.sh" "$here/stage-split.py" "$here/dd-test.sh" \
		"$here/nbd.sh" "$here/rbd.sh" "$here/package.sh" \
		"$here/snapshot.sh" "$s/e2e/"
	# Part rbd's cluster: the script is in the simulator's package,
	# which never reaches a Xen host.
	install -m 755 "$top_srcdir/tools/ceph/ceph-cluster.in" "$s/e2e/ceph-cluster"
	# Stop waiting in dom0 early enough to power off with the logs.
	echo $((timeout_s - 100)) >"$s/e2e/deadline"
	echo "$parts" >"$s/e2e/parts"
	echo "$inject" >"$s/e2e/inject"
	echo "$daemon_args" >"$s/e2e/daemon-args"
	echo "$conc_variant" >"$s/e2e/conc-variant"
	echo "$conc_repeats" >"$s/e2e/conc-repeats"
	build_checker "$s/e2e/e2e-check"
	# Guest initramfs: the cached base plus this run's /init and checker.
	install -m 755 "$here/guest-init.sh" "$work/ginit/init"
	cp "$s/e2e/e2e-check" "$work/ginit/bin/e2e-check"
	(cd "$work/ginit" && find . | cpio --quiet -o -H newc) >"$work/run.cpio"
	cat "$cache/guest-base.cpio" "$work/run.cpio" >"$s/e2e/guest/initrd.cpio"
	cp "$cache/vmlinux" "$s/e2e/guest/vmlinux"
	# Part hvm's guest boots the bzImage (QEMU's direct kernel boot);
	# part hvm-disk's from its disk (hvm-boot-area-host.sh).
	! has_part hvm || cp "$cache/vmlinuz" "$s/e2e/guest/vmlinuz"
	! has_part hvm-disk || make_boot_area "$s"
	install -m 755 "$here/hvm-boot-area.sh" "$s/e2e/"
	mkfs.ext4 -q -F -L e2e-work -d "$s" "$work/work.ext4" 4G
}

boot() {
	local append kargs dd_root=()
	append="console=com1 com1=115200,8n1 dom0_mem=1024M,max:1024M"
	append="$append dom0_max_vcpus=2 ${xen_noreboot-noreboot}"
	kargs="console=hvc0 earlyprintk=xen root=/dev/vda rw init=/sbin/e2e-init"
	# +svm,+npt: AMD-V with nested paging for the Xen inside, which then
	# offers HVM with HAP, needed by the PVH and HVM guests (see
	# tests/e2e/README.md); PV guests do not use it.
	# The storage driver domain's root (part driverdomain): the dom0 image
	# once more, its own snapshot, /dev/vdc in dom0.
	case " $parts " in
	*" driverdomain "*) dd_root=(-drive "file=$cache/dom0.ext4,if=virtio,format=raw,cache=unsafe,snapshot=on") ;;
	esac
	# +sse4.1: Debian 12's Ceph daemons (part rbd) need it: on qemu64
	# ceph-mon dies at start (SIGSEGV; SIGILL with +sse4.2 alone). Every
	# boot gets it, so that every part runs on the CPU it was measured on.
	local cpu=qemu64,+svm,+npt,+sse4.1
	say "booting Xen in QEMU (TCG, -cpu $cpu, timeout ${timeout_s}s)"
	set +e
	timeout -k 10 "$timeout_s" qemu-system-x86_64 -machine pc -accel tcg \
		-cpu "$cpu" -smp 2 -m 4G -no-reboot \
		-kernel "$cache/xen.elf" -append "$append" \
		-initrd "$cache/vmlinuz $kargs,$cache/initrd.img" \
		-drive "file=$cache/dom0.ext4,if=virtio,format=raw,cache=unsafe,snapshot=on" \
		-drive "file=$work/work.ext4,if=virtio,format=raw,cache=unsafe" \
		"${dd_root[@]}" \
		-display none -serial stdio -monitor none </dev/null |
		sed -u 's/\r$//' | tee "$results/serial.log" |
		grep --line-buffered -E '^(E2E|e2e:|  e2e-)'
	qemu_rc=${PIPESTATUS[0]}
	set -e
	say "QEMU exited with status $qemu_rc after $(elapsed) s"
}

fetch_results() {
	rm -rf "$results/run"
	debugfs -R "rdump /results $results" "$work/work.ext4" >/dev/null 2>&1 &&
		mv "$results/results" "$results/run" || say "no results on the work disk"
}

show_failure_logs() { # RESULTS-DIR
	local f
	say "----- tail of the serial log ($1/serial.log)"
	tail -n 60 "$1/serial.log" || true
	for f in "$1"/run/console/*.log "$1/run/blkbackd.log"; do
		[ -f "$f" ] || continue
		say "----- tail of $f"
		tr -d '\r' <"$f" | tail -n 40
	done
}

# Judge one boot from what it left in RESULTS-DIR: print its figures and
# failing checks, add its counts to the totals; fail unless every check
# passed and QEMU exited cleanly.
total_pass=0
total_fail=0
total_skip=0
judge_boot() { # NAME RESULTS-DIR QEMU-STATUS
	local log summary n
	log=$2/run/dom0-test.log
	[ -f "$log" ] || log=$2/serial.log
	summary=$(grep -E '^E2E-SUMMARY: ' "$log" | tail -n 1 || true)
	echo
	grep -E '^E2E-BENCH' "$log" || true
	if [ -n "$summary" ]; then
		read -r n _ <<<"${summary#*: }"
		total_pass=$((total_pass + n))
		n=${summary#*passed, }
		total_fail=$((total_fail + ${n%% *}))
		n=${summary#*failed, }
		total_skip=$((total_skip + ${n%% *}))
	else
		total_fail=$((total_fail + 1))
	fi
	if [ -n "$summary" ] && ! grep -q '^E2E: FAIL' "$log" &&
		! grep -q '^E2E-DOM0: FAIL' "$2/serial.log" &&
		[ "$3" -eq 0 ]; then
		say "$1: all checks passed; logs in $2 (${summary#E2E-SUMMARY: })"
		return 0
	fi
	say "$1: FAILED (QEMU status $3); failing checks:"
	grep -hE '^(E2E: FAIL|E2E-DOM0: FAIL)' "$log" "$2/serial.log" || true
	show_failure_logs "$2"
	return 1
}

has_part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

# The Debian 12 boot, tried once more if Xen itself panicked. Under TCG the
# hypervisor now and then takes a double fault in its own exception entry
# (3 December: right after a migrated HVM guest's triple fault, "DOUBLE
# FAULT -- system shutdown" with the stack pointer in a guest's stack),
# the emulation's failure as the guests' triple faults are, not anything
# dom0 asked of it. Xen then reboots, which ends QEMU (-no-reboot) instead
# of holding the machine to the timeout, and the whole boot runs again.
# A second panic fails the run, and a dom0 crash is never tried again.
bookworm_boot() {
	local try
	xen_noreboot=
	for try in 1 2; do
		make_work_disk
		say "host preparation took $(elapsed) s"
		boot
		grep -q '^(XEN) Panic on CPU' "$results/serial.log" || break
		say "Xen panicked (try $try):" \
			"$(grep -m 1 -E '^\(XEN\) \*\*\* ' "$results/serial.log")"
		mv "$results/serial.log" "$results/serial-xen-panic-$try.log"
		rm -f "$work/work.ext4"
		echo "E2E-DOM0: FAIL Xen panicked" >"$results/serial.log"
	done
	fetch_results
}

main() {
	local ok=0
	mkdir -p "$results" "$cache_root"
	rm -f "$results/serial.log"
	install_host_tools
	work=$(mktemp -d "${TMPDIR:-/var/tmp}/blkbackd-e2e.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	daemon_package
	# The Debian 12 boot: every part but xen420.
	if [ -n "$(echo " $parts " | sed 's/ xen420 / /g' | tr -d ' ')" ]; then
		ensure_cache bookworm "$DOM0_PACKAGES $(daemon_packages)$(
			! has_part rbd || echo " $DOM0_PACKAGES_CEPH")$(
			! has_part snapshot || echo " $DOM0_PACKAGES_XFS")"
		bookworm_boot
		judge_boot "Debian 12 (Xen 4.17)" "$results" "$qemu_rc" || ok=1
	fi
	if has_part xen420; then
		xen420_boot
		judge_boot "Debian 13 (Xen 4.20)" "$results/xen420" \
			"$xen420_qemu_rc" || ok=1
	fi
	say "done in $(elapsed) s"
	echo "check-xen: $total_pass passed, $total_fail failed, $total_skip skipped"
	return $ok
}

# shellcheck source=tests/e2e/xen420.sh
. "$here/xen420.sh"
# shellcheck source=tests/e2e/hvm-boot-area-host.sh
. "$here/hvm-boot-area-host.sh"
main "$@"
exit

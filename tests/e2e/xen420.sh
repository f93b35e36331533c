# shellcheck shell=bash disable=SC2034,SC2154 # run.sh's variables
# Part xen420 of the real-Xen test, sourced by run.sh: a second boot, of a
# Debian 13 dom0 with Xen 4.20 (its own cached root, built by build-dom0.sh
# for trixie), where the kernel's xen-blkback serves a phy: disk and
# blkbackd, started with --serve vbd3, a backendtype=tap disk of the same
# guest; dom0-test-xen420.sh is the test run in that dom0.  Uses run.sh's
# functions and variables; sets xen420_qemu_rc.
xen420_boot() {
	local t0
	t0=$(date +%s)
	set +e
	(
		set -e
		results=$results/xen420
		work=$work/xen420
		timeout_s=${BLKBACKD_E2E_XEN420_TIMEOUT:-900}
		# make_work_disk writes the parts for dom0-test*.sh.
		parts=xen420
		mkdir -p "$results" "$work/stage/e2e"
		rm -f "$results/serial.log"
		ensure_cache trixie "$DOM0_PACKAGES_TRIXIE $(daemon_packages)"
		# dom0-init.sh runs this one instead of dom0-test.sh.
		install -m 755 "$here/dom0-test-xen420.sh" "$work/stage/e2e/"
		# Under TCG, Debian 13's kernel (6.12) now and then dies in early
		# boot as PV dom0 ("Oops: int3" in code it was patching, 1 of 3
		# boots here); Xen then reboots, which ends QEMU (-no-reboot),
		# rather than hold the machine until the timeout, and the boot
		# is tried once more.
		xen_noreboot=
		for try in 1 2; do
			# A crash on purpose (BLKBACKD_E2E_INJECT) in try 1 only.
			[ $try = 1 ] || inject=
			make_work_disk
			say "xen420: host preparation took $(($(date +%s) - t0)) s"
			boot
			grep -q '^(XEN) Hardware Dom0 crashed' "$results/serial.log" ||
				break
			say "xen420: dom0 crashed while booting (try $try):" \
				"$(grep -m 1 -E 'Oops|Kernel panic' "$results/serial.log")"
			mv "$results/serial.log" "$results/serial-dom0-crash-$try.log"
			rm -f "$work/work.ext4"
			echo "E2E-DOM0: FAIL dom0 crashed while booting" \
				>"$results/serial.log"
		done
		fetch_results
		exit "$qemu_rc"
	)
	xen420_qemu_rc=$?
	set -e
	say "xen420: the part took $(($(date +%s) - t0)) s"
}

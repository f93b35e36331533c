# shellcheck shell=bash disable=SC2154 # dom0-test.sh's variables
# The HVM guest that boots from its disk (part hvm-disk of the real-Xen
# test, opt-in), sourced by dom0-test.sh. Part hvm's guest boots by QEMU's
# direct kernel boot; this one boots as an operator's does, through its
# firmware from the disk blkbackd serves: its image starts with the boot area hvm-boot-area-host.sh
# made (SYSLINUX, the bzImage, the xz initramfs), xl gets no kernel=, so
# SeaBIOS reads the boot sector, and SYSLINUX the kernel and initramfs,
# through QEMU's emulated IDE disk, which QEMU opened from
# physical-device-path; then the guest's kernel unplugs that disk and its
# blkfront takes over for the pattern checks (pattern_guest).  While it
# boots, dom0 samples every 5 s how many bytes the device model has read:
# the firmware's read rate under this emulation.  A try whose firmware
# stops reading before the disk connected is dropped and not counted
# (firmware_stalled, in dom0-test.sh).
BOOT_AREA_MNT=/mnt/hvm-boot-area

# The try's kernel command line into the boot area's syslinux.cfg (the
# image is not in use between tries), and the initramfs it loads:
# initrd.xz, or with the injection initramfs-corrupt (pattern_guest_try)
# corrupt-initrd.xz, a copy with one byte changed in its middle, which the
# guest's kernel must find corrupt (xz's CRC32) while the image's boot
# area stays the same through the try.
boot_area_args() { # IMAGE ARGS [INITRD]
	local m=$BOOT_AREA_MNT size
	mkdir -p "$m"
	modprobe vfat 2>/dev/null
	mount -t vfat -o loop "$1" "$m" || return 1
	sed -i -e "s|^  APPEND .*|  APPEND $2|" \
		-e "s|^  INITRD .*|  INITRD ${3:-initrd.xz}|" "$m/syslinux.cfg"
	rm -f "$m/corrupt-initrd.xz"
	if [ "${3:-}" = corrupt-initrd.xz ]; then
		cp "$m/initrd.xz" "$m/corrupt-initrd.xz"
		size=$(stat -c %s "$m/corrupt-initrd.xz")
		printf '\125' | dd of="$m/corrupt-initrd.xz" bs=1 seek=$((size / 2)) \
			conv=notrunc 2>/dev/null
		cmp -s "$m/initrd.xz" "$m/corrupt-initrd.xz" &&
			printf '\252' | dd of="$m/corrupt-initrd.xz" bs=1 \
				seek=$((size / 2)) conv=notrunc 2>/dev/null
	fi
	grep -E "APPEND|INITRD" "$m/syslinux.cfg" | sed 's/^ */e2e: hvm: syslinux.cfg: /'
	umount "$m"
}

# The boot area's bytes in the image: the FAT file system (30 MiB) that
# SYSLINUX and the vmlinuz and initrd.xz in it live in, which QEMU's
# emulated disk reads for the firmware.  Taken before a try's boot
# (after its syslinux.cfg is written) and again once the guest is gone.
BOOT_AREA_MIB=30
boot_area_sum() { # IMAGE
	dd if="$1" bs=1M count=$BOOT_AREA_MIB 2>/dev/null | sha256sum | cut -d' ' -f1
}

# The guest's kernel said its initramfs was corrupt ("Initramfs unpacking
# failed: XZ-compressed data is corrupt", once in a full check-xen).
# SYSLINUX loaded it into guest memory through the BIOS
# from QEMU's emulated IDE disk, which QEMU reads from the image itself:
# blkbackd has no part in that read, but it served the image's writes in
# the try before.  So the evidence decides: the boot area's checksum from
# before the boot against the one now, with the guest and its device model
# gone.  The same bytes before and after mean the image held the right
# initramfs while QEMU read it, and the bytes went wrong on their way from
# QEMU's read into guest memory, in the emulation (the try is dropped and
# not counted, as a firmware stall is); a changed boot area is a failure
# whoever changed it, and the test says so.
initramfs_corrupt() { # GUEST
	tr -d '\r' <"$(console "$1")" 2>/dev/null | grep -q 'Initramfs unpacking failed'
}
# 0 when the try is the emulation's to drop, 1 (with a FAIL) when the
# image's boot area changed during the try.  BEFORE is boot_area_sum's
# from before the boot.
initramfs_corrupt_judge() { # GUEST IMAGE BEFORE
	local after what
	what=$(tr -d '\r' <"$(console "$1")" | grep -m 1 -o 'Initramfs unpacking failed.*')
	after=$(boot_area_sum "$2")
	if [ "$after" != "$3" ]; then
		result FAIL "$1/boot-area-unchanged" "'$what', and the image's first $BOOT_AREA_MIB MiB changed during the try: $3 before the boot, $after after"
		return 1
	fi
	echo "e2e: $1: '$what', but the image's first $BOOT_AREA_MIB MiB were the same before the boot and after it ($after): the initramfs went wrong between QEMU's read of the image and the guest's memory"
}

# Every 5 s until OUT.stop exists: seconds, the bytes the guest's device
# model has read (rchar) and the last line on the guest's serial console.
sample_firmware_reads() { # GUEST OUT
	local t=0 domid qpid rchar last
	while [ ! -e "$2.stop" ]; do
		if domid=$(domid_of "$1") && qpid=$(device_model_pid "$domid"); then
			rchar=$(rchar_of "$qpid")
			last=$(tr -d '\r' <"$(console "$1")" 2>/dev/null |
				grep -v '^ *$' | tail -n 1 | cut -c1-70)
			echo "$t ${rchar:-?} $last"
		fi
		sleep 5
		t=$((t + 5))
	done >"$2"
}

# From the samples: how fast the firmware read, up to the sample where
# SYSLINUX said the initramfs was loaded (or the last one). A count that
# went down is a later try's device model (the try before was dropped
# before SYSLINUX was done): the time counts from that try's start.
firmware_read_rate() { # SAMPLES
	awk '$2 ~ /^[0-9]+$/ && !done { if ($2 < b) t0 = $1 - 5; t = $1 - t0; b = $2; if (/initrd\.xz.*ok/) done = 1 }
		END { if (t) printf "E2E-BENCH hvm: the device model read %d KiB in %d s (%.1f KiB/s)%s\n", b / 1024, t, b / 1024 / t, done ? ", SYSLINUX loaded" : ", not loaded" }' "$1"
}

# While the guest runs: the emulated disk's checks, and that it was booted
# from the disk, not by QEMU's direct kernel boot, SYSLINUX loading its
# files.
hvm_disk_boot_checks() { # GUEST DOMID IMAGE
	local g=$1 qpid
	hvm_emulated_disk_checks "$@"
	qpid=$(device_model_pid "$2") || return
	if tr '\0' ' ' <"/proc/$qpid/cmdline" | grep -q -- ' -kernel '; then
		result FAIL "$g/no-direct-kernel-boot" "QEMU $qpid was given -kernel"
	else
		result PASS "$g/no-direct-kernel-boot"
	fi
	if grep -q 'Loading initrd.xz' "$(console "$g")"; then
		result PASS "$g/firmware-loaded-the-kernel-from-disk" \
			"$(tr -d '\r' <"$(console "$g")" | grep -m 1 -o 'SYSLINUX [0-9.]*')"
	else
		result FAIL "$g/firmware-loaded-the-kernel-from-disk" \
			"no 'Loading initrd.xz' from SYSLINUX on the console"
	fi
}

guest_hvm_disk() {
	local g=e2e-hvmdisk img=$IMG/hvmdisk.img samples=$R/hvm-firmware-reads.txt sampler
	hvm_with_hap $g || return
	rm -f "$img" "$samples.stop"
	if ! cp "$E/guest/hvm-boot-area.fat" "$img" || ! truncate -s 64M "$img" ||
		! write_pattern_a "$img"; then
		result FAIL $g/dom0-prepare-image
		return
	fi
	sample_firmware_reads $g "$samples" &
	sampler=$!
	# Disk up 253 s after xl create here, against 110 s by direct boot.
	HVM_BOOT=disk BOOT_WAIT=600 pattern_guest $g hvm "$img" hvm_disk_boot_checks
	touch "$samples.stop"
	wait $sampler
	sed 's/^/e2e: hvm: s, bytes read by QEMU, console: /' "$samples"
	firmware_read_rate "$samples"
}

# shellcheck shell=bash disable=SC2034,SC2154 # run.sh's variables
# Part hvmboot of the real-Xen test, host side, sourced by run.sh: the boot
# area of the HVM guest that boots through its firmware from its disk
# (hvmboot.sh runs it in dom0).  A FAT file system of 30 MiB with SYSLINUX
# in its boot sector, the guest's bzImage and its initramfs (xz: the
# firmware reads every byte through QEMU's emulated IDE disk, so fewer is
# faster), and a syslinux.cfg that dom0 rewrites with each try's kernel
# command line.  dom0 puts it at the start of the guest's image, before
# the patterns at 32 MiB.
case " $parts " in
*" hvmboot "*) HOST_TOOLS="$HOST_TOOLS syslinux:syslinux mcopy:mtools
mkfs.vfat:dosfstools" ;;
esac

make_boot_area() { # STAGE-DIR
	local fat=$1/e2e/guest/hvmboot.fat
	xz -T1 -6 --check=crc32 <"$1/e2e/guest/initrd.cpio" >"$work/initrd.xz"
	rm -f "$fat"
	mkfs.vfat -n E2EBOOT -C "$fat" $((30 * 1024)) >/dev/null
	printf '%s\n' "SERIAL 0 115200" "DEFAULT e2e" "PROMPT 0" "TIMEOUT 1" \
		"LABEL e2e" "  KERNEL vmlinuz" "  INITRD initrd.xz" \
		"  APPEND console=ttyS0" >"$work/syslinux.cfg"
	mcopy -i "$fat" "$cache/vmlinuz" "$work/initrd.xz" "$work/syslinux.cfg" ::
	syslinux --install "$fat"
	say "hvmboot: boot area of $(du -k "$cache/vmlinuz" "$work/initrd.xz" |
		awk '{ s += $1 } END { print s }') KiB (bzImage and xz initramfs)"
}

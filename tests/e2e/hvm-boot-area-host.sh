# shellcheck shell=bash disable=SC2034,SC2154 # run.sh's variables
# The HVM guest's boot area (part hvm-disk of the real-Xen test), host
# side, sourced by run.sh.  The HVM guest boots as an operator's does, through
# its firmware from the disk blkbackd serves (hvm-boot-area.sh, in dom0):
# its image starts with a FAT file system of 30 MiB with SYSLINUX in its
# boot sector, the guest's bzImage and its initramfs, xz-compressed (the
# firmware reads every byte through QEMU's emulated IDE disk, so fewer is
# faster: 10.6 MB instead of 17.7), and a syslinux.cfg whose kernel
# command line dom0 writes for each try.  The patterns follow at 32 MiB.
case " $parts " in
*" hvm-disk "*) HOST_TOOLS="$HOST_TOOLS syslinux:syslinux mcopy:mtools
mkfs.vfat:dosfstools" ;;
esac

make_boot_area() { # STAGE-DIR
	local fat=$1/e2e/guest/hvm-boot-area.fat
	xz -T1 -6 --check=crc32 <"$1/e2e/guest/initrd.cpio" >"$work/initrd.xz"
	rm -f "$fat"
	mkfs.vfat -n E2EBOOT -C "$fat" $((30 * 1024)) >/dev/null
	printf '%s\n' "SERIAL 0 115200" "DEFAULT e2e" "PROMPT 0" "TIMEOUT 1" \
		"LABEL e2e" "  KERNEL vmlinuz" "  INITRD initrd.xz" \
		"  APPEND console=ttyS0" >"$work/syslinux.cfg"
	mcopy -i "$fat" "$cache/vmlinuz" "$work/initrd.xz" "$work/syslinux.cfg" ::
	syslinux --install "$fat"
	say "hvm: boot area of $(du -k "$cache/vmlinuz" "$work/initrd.xz" |
		awk '{ s += $1 } END { print s }') KiB (bzImage and xz initramfs)"
}

#!/bin/bash
# Build the cached part of the real-Xen end-to-end test: a Debian dom0 root
# with Debian's Xen and kernel (bookworm: Xen 4.17; trixie: Xen 4.20), and
# the pieces cut out of it that QEMU and the guests boot from.
#
#   build-dom0.sh SUITE OUTDIR PACKAGE...
#
# A PACKAGE that SUITE does not have under its name is looked for with the
# t64 suffix (trixie renamed libraries in the 64-bit time_t transition; the
# daemon's library packages are named after the host's, bookworm).
#
# OUTDIR (which must not exist yet) receives:
#   dom0.ext4        the dom0 root filesystem (booted with snapshot=on)
#   xen.elf          the hypervisor, gunzipped (QEMU boots it as multiboot)
#   vmlinuz, initrd.img   dom0 kernel and its initramfs-tools initrd
#   vmlinux          the same kernel uncompressed, for PV guests (faster)
#   guest-base.cpio  busybox, xen-blkfront + ext4 modules and e2fsprogs
#   kernel-version
# Nothing of blkbackd goes here: the daemon is installed per run into an
# overlay, so this cache stays valid across code changes.
set -euo pipefail

suite=$1
out=$2
shift 2
mirror=${BLKBACKD_E2E_MIRROR:-http://deb.debian.org/debian}
security=${BLKBACKD_E2E_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
tmp="$out.tmp.$$"
root="$tmp/root"

say() { printf 'build-dom0: %s\n' "$*" >&2; }

cleanup() {
	for m in dev/pts dev sys proc; do
		mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp"

say "debootstrap --variant=minbase $suite (a few minutes)"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1 || {
	tail -n 30 "$tmp/debootstrap.log" >&2
	exit 1
}

# No daemon may start inside the chroot while packages are configured.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

# The sources of an installed Debian host, updates and security fixes
# included, as on the host that builds blkbackd's package: the package
# depends on the library versions it was built against (and run.sh keys
# the cache with the host's candidate versions).
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
chroot "$root" apt-get update >"$tmp/apt-update.log" 2>&1 || {
	tail -n 30 "$tmp/apt-update.log" >&2
	exit 1
}

pkgs=()
for p in "$@"; do
	if ! chroot "$root" apt-cache show "$p" >/dev/null 2>&1 &&
		chroot "$root" apt-cache show "${p}t64" >/dev/null 2>&1; then
		say "$suite names $p ${p}t64"
		p=${p}t64
	fi
	pkgs+=("$p")
done
say "installing: ${pkgs[*]}"
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
	--no-install-recommends "${pkgs[@]}" >"$tmp/apt.log" 2>&1 || {
	tail -n 30 "$tmp/apt.log" >&2
	exit 1
}
chroot "$root" apt-get clean
rm -f "$root/usr/sbin/policy-rc.d"
rm -rf "$root"/var/lib/apt/lists/*

kver=$(basename "$(ls -d "$root"/lib/modules/* | sort -V | tail -n 1)")
say "kernel $kver"

# What the README tells operators of a dom0 where blkbackd serves
# backend/vbd: keep the kernel backend from loading (udev would load it
# through its xen-backend:vbd alias otherwise).  The trixie dom0 keeps
# xen-blkback for its phy: volumes; blkbackd serves backend/vbd3 there.
if [ "$suite" = bookworm ]; then
	printf 'blacklist xen-blkback\ninstall xen-blkback /bin/false\n' \
		>"$root/etc/modprobe.d/blkbackd.conf"
fi

# PID 1 of the dom0: hand over to the per-run script on the work disk, so
# that changing the test does not invalidate this cache.
cat >"$root/sbin/e2e-init" <<'EOF'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /work
if mount -t ext4 /dev/vdb /work && [ -x /work/e2e/dom0-init.sh ]; then
	exec /work/e2e/dom0-init.sh
fi
echo "E2E-DOM0: FAIL cannot mount the work disk /dev/vdb"
sleep 2
/bin/busybox poweroff -f
EOF
chmod +x "$root/sbin/e2e-init"
echo e2e-dom0 >"$root/etc/hostname"

say "extracting the hypervisor and kernels"
gunzip -c "$(ls "$root"/boot/xen-*-amd64.gz | sort -V | tail -n 1)" >"$tmp/xen.elf"
cp "$root/boot/vmlinuz-$kver" "$tmp/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$tmp/initrd.img"
bash "$(dirname "$0")/extract-vmlinux.sh" "$tmp/vmlinuz" "$tmp/vmlinux"
echo "$kver" >"$tmp/kernel-version"

say "guest initramfs base"
g="$tmp/guest"
mkdir -p "$g/bin" "$g/sbin" "$g/etc" "$g/lib/modules" "$g/dev" "$g/proc" \
	"$g/sys" "$g/mnt" "$g/tmp"
cp "$root/bin/busybox" "$g/bin/busybox"
# Modules in load order, decompressed so that busybox insmod takes them.
chroot "$root" modprobe -a --show-depends -S "$kver" xen-blkfront ext4 |
	awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' >"$tmp/mods"
: >"$g/lib/modules/order"
while read -r mod; do
	name=$(basename "$mod")
	case "$name" in
	*.ko.xz) xz -dc "$root$mod" >"$g/lib/modules/${name%.xz}" ;;
	*.ko.zst) zstd -qdc "$root$mod" >"$g/lib/modules/${name%.zst}" ;;
	*.ko.gz) gunzip -c "$root$mod" >"$g/lib/modules/${name%.gz}" ;;
	*) cp "$root$mod" "$g/lib/modules/$name" ;;
	esac
	name=${name%.xz}
	name=${name%.zst}
	echo "${name%.gz}" >>"$g/lib/modules/order"
done <"$tmp/mods"
# e2fsprogs and fstrim with the libraries they need, from the same root.
for bin in /sbin/mke2fs /sbin/e2fsck /sbin/fstrim /usr/bin/sha256sum; do
	[ -e "$root$bin" ] || continue
	mkdir -p "$g$(dirname "$bin")"
	cp -L "$root$bin" "$g$bin"
	chroot "$root" ldd "$bin" | awk '/=>/ { print $3 } /^\t\// { print $1 }' |
		while read -r lib; do
			[ -n "$lib" ] || continue
			mkdir -p "$g$(dirname "$lib")"
			cp -L "$root$lib" "$g$lib"
		done
done
ln -s mke2fs "$g/sbin/mkfs.ext4"
cp "$root/etc/mke2fs.conf" "$g/etc/"
(cd "$g" && find . | cpio --quiet -o -H newc) >"$tmp/guest-base.cpio"
rm -rf "$g"

say "dom0.ext4"
for m in dev/pts dev sys proc; do umount "$root/$m"; done
size_mb=$(($(du -sm "$root" | cut -f1) + 600))
mkfs.ext4 -q -F -L e2e-dom0 -d "$root" "$tmp/dom0.ext4" "${size_mb}M"
rm -rf "$root"
mv "$tmp" "$out"
trap - EXIT
say "done: $out"

# shellcheck shell=sh
# A fake host for blkbackd-takeover and the Debian maintainer scripts
# (tests/takeover.sh, tests/deb-scripts.sh), sourced after lib.sh.
#
# What runs for real: the scripts themselves, and blkbackctl (the build
# tree's, through a wrapper that gives it the test daemon's socket) asking
# a real daemon on the simulated host. What is stubbed, because it cannot
# run here without changing this machine or needs real Xen: modprobe (it
# loads or unloads no module; "loading" xen-blkback makes the fake
# /sys/module/xen_blkback and its driver directory, as the kernel would),
# systemctl (records the call; is-enabled answers from a file), xl
# (domname answers "vmDOMID") and blkbackd --check-config (prints the
# serve setting of $WORK/serve, so that a test can change it).
#
# takeover_host: $ROOT (the fake root: BLKBACKD_ROOT) with xen-blkback
# loaded and no blacklist, $WORK/bin first on PATH, $WORK/calls the
# stubs' log (one "COMMAND ARGS" a line).

takeover_host() {
	ROOT=$WORK/root
	BLKBACKD_ROOT=$ROOT
	export BLKBACKD_ROOT
	mkdir -p "$WORK/bin" "$ROOT/etc/modprobe.d" \
		"$ROOT/sys/bus/xen-backend/devices" || hard_error "mkdir"
	kernel_backend load
	: >"$WORK/calls"
	echo vbd >"$WORK/serve"
	echo disabled >"$WORK/enabled"

	cat >"$WORK/bin/modprobe" <<STUB
#!/bin/sh
echo "modprobe \$*" >>"$WORK/calls"
case "\$*" in
"-r xen-blkback") rm -rf "$ROOT/sys/module/xen_blkback" \
	"$ROOT/sys/bus/xen-backend/drivers/vbd" ;;
xen-blkback) mkdir -p "$ROOT/sys/module/xen_blkback" \
	"$ROOT/sys/bus/xen-backend/drivers/vbd" ;;
*) exit 1 ;;
esac
STUB
	cat >"$WORK/bin/systemctl" <<STUB
#!/bin/sh
echo "systemctl \$*" >>"$WORK/calls"
case "\$1" in
is-enabled) cat "$WORK/enabled" ;;
enable) echo enabled >"$WORK/enabled" ;;
disable) echo disabled >"$WORK/enabled" ;;
esac
STUB
	cat >"$WORK/bin/xl" <<STUB
#!/bin/sh
[ "\$1" = domname ] && echo "vm\$2"
STUB
	cat >"$WORK/bin/blkbackd" <<STUB
#!/bin/sh
[ "\$1" = --check-config ] && echo "serve = \$(cat "$WORK/serve")"
STUB
	cat >"$WORK/bin/blkbackctl" <<STUB
#!/bin/sh
exec "$top_builddir/tools/blkbackctl/blkbackctl" --socket "$WORK/state/control" "\$@"
STUB
	chmod +x "$WORK"/bin/*
	PATH=$WORK/bin:$top_srcdir/tools:$PATH
	export PATH
}

# kernel_backend load|unload: the fake xen-blkback's presence in sysfs.
kernel_backend() {
	case $1 in
	load) mkdir -p "$ROOT/sys/module/xen_blkback" \
		"$ROOT/sys/bus/xen-backend/drivers/vbd" ;;
	unload) rm -rf "$ROOT/sys/module/xen_blkback" \
		"$ROOT/sys/bus/xen-backend/drivers/vbd" ;;
	esac
}

# called PATTERN: a stub was called with a line matching PATTERN.
called() { grep -qx -- "$1" "$WORK/calls"; }

#!/bin/sh
# `make install DESTDIR=...` puts the daemon, the hotplug script, the systemd
# unit, the man pages and blkbackctl's bash completion where a Xen host
# expects them, with the right modes, and the installed unit starts the
# installed daemon.
. "$top_srcdir/tests/lib.sh"

make=${MAKE:-make}

# make in the build tree, detached from the make running this test (its
# flags would add directory messages and jobserver warnings).
build_make() {
	(cd "$top_builddir" &&
		MAKEFLAGS='' MFLAGS='' MAKELEVEL='' $make -s "$@")
}

# The directories configure chose, as make expands them.
make_var() {
	build_make -f Makefile -f - print-var VAR="$1" <<'MK'
print-var:
	@echo $($(VAR))
MK
}

scratch_dir
dest=$WORK/root
build_make install DESTDIR="$dest" >"$WORK/install.log" 2>&1 ||
	fail "make install DESTDIR=$dest"

sbindir=$(make_var sbindir)
xenscriptdir=$(make_var xenscriptdir)
unitdir=$(make_var systemdsystemunitdir)
mandir=$(make_var mandir)
completiondir=$(make_var bashcompletiondir)
for d in "$sbindir" "$xenscriptdir" "$unitdir" "$mandir" "$completiondir"; do
	case $d in
	/*) ;;
	*) hard_error "could not read the install directories ($d)" ;;
	esac
done

# expect_file PATH MODE: PATH exists under DESTDIR with octal mode MODE.
expect_file() {
	if [ ! -f "$dest$1" ]; then
		fail_later "$1 was not installed"
		return
	fi
	mode=$(stat -c %a "$dest$1")
	[ "$mode" = "$2" ] || fail_later "$1 has mode $mode, expected $2"
}

daemon=$sbindir/blkbackd
case " $(make_var sbin_PROGRAMS) " in
*" blkbackd/blkbackd "*) expect_file "$daemon" 755 ;;
*) fail_later "sbin_PROGRAMS does not list blkbackd/blkbackd (blkbackd/local.mk)" ;;
esac
expect_file "$xenscriptdir/blkbackd" 755
expect_file "$unitdir/blkbackd.service" 644
expect_file "$unitdir/blkbackd-metrics.socket" 644
expect_file "$unitdir/blkbackd-metrics@.service" 644
expect_file "$mandir/man8/blkbackd.8" 644
expect_file "$mandir/man5/blkbackd.conf.5" 644
expect_file "$mandir/man8/blkbackd-hotplug.8" 644
# bash-completion loads a command's completion by the command's name.
expect_file "$completiondir/blkbackctl" 644

unit=$dest$unitdir/blkbackd.service
if [ -f "$unit" ]; then
	exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
	[ "$exec_start" = "$daemon" ] ||
		fail_later "unit has ExecStart=$exec_start, expected $daemon"
	grep -q '@[a-z]*@' "$unit" && fail_later "unit has unsubstituted @vars@"
	grep -qx 'Type=notify' "$unit" || fail_later "unit is not Type=notify"
fi

# The scrape service runs the installed blkbackctl.
metrics_unit=$dest$unitdir/blkbackd-metrics@.service
if [ -f "$metrics_unit" ]; then
	exec_start=$(sed -n 's/^ExecStart=//p' "$metrics_unit")
	[ "$exec_start" = "$sbindir/blkbackctl metrics --http" ] ||
		fail_later "metrics unit has ExecStart=$exec_start"
	grep -q '@[a-z]*@' "$metrics_unit" &&
		fail_later "metrics unit has unsubstituted @vars@"
fi

# The installed script is the one that runs: it must be a POSIX sh script.
script=$dest$xenscriptdir/blkbackd
if [ -f "$script" ]; then
	head -n 1 "$script" | grep -qx '#!/bin/sh' ||
		fail_later "hotplug script does not start with #!/bin/sh"
	sh -n "$script" || fail_later "hotplug script has syntax errors"
fi

# blkbackctl finds the daemon the unit starts: its default socket is
# RUNSTATEDIR/blkbackd/control, the unit's daemon makes it in
# $RUNTIME_DIRECTORY, /run/<RuntimeDirectory=>. Both for this build (what
# blkbackctl says it uses) and for a build configured with the README's
# source-install command (what configure chose: the command's arguments
# run through configure in a scratch directory, nothing built).
if [ -f "$unit" ]; then
	rundir=$(sed -n 's/^RuntimeDirectory=//p' "$unit")
	unit_socket=/run/$rundir/control
	ctl_socket=$("$top_builddir/tools/blkbackctl/blkbackctl" --help 2>&1 |
		sed -n 's/.*control socket (default \(.*\))$/\1/p')
	[ "$ctl_socket" = "$(make_var runstatedir)/blkbackd/control" ] ||
		fail_later "blkbackctl's default socket '$ctl_socket' is not" \
			"RUNSTATEDIR/blkbackd/control"
	readme_args=$(sed -n 's|^ *\./autogen\.sh \(--prefix=[^#]*\).*|\1|p' \
		"$top_srcdir/README.md" | head -n 1)
	[ -n "$readme_args" ] ||
		hard_error "no './autogen.sh --prefix=...' line in README.md"
	mkdir "$WORK/readme-build"
	# shellcheck disable=SC2086 # the README's arguments, as words
	(cd "$WORK/readme-build" && "$top_srcdir/configure" -q $readme_args) \
		>"$WORK/readme-configure.log" 2>&1 ||
		hard_error "configure $readme_args failed (readme-configure.log)"
	readme_rundir=$(top_builddir=$WORK/readme-build make_var runstatedir)
	[ "$readme_rundir/blkbackd/control" = "$unit_socket" ] ||
		fail_later "README's './autogen.sh $readme_args' gives blkbackctl" \
			"$readme_rundir/blkbackd/control, the unit's daemon" \
			"listens on $unit_socket"
fi

finish "install layout OK under $dest"

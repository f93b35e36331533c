# NBD servers for the tests, sourced after tests/lib.sh: nbdkit on unix
# sockets under $WORK, killed at exit.

# nbd_server NAME ARGS...: an nbdkit on $WORK/NAME.sock (a stale socket
# of an earlier one replaced), in the foreground of a background job whose
# pid is in NAME_pid. It does not inherit fd 3, a held guest's stdin
# (tests/lib.sh's hold_start), which would keep that guest from ending.
nbd_server() {
	name=$1
	shift
	rm -f "$WORK/$name.sock"
	nbdkit --foreground --unix "$WORK/$name.sock" "$@" \
		>>"$WORK/$name.log" 2>&1 3>&- &
	eval "${name}_pid=$!"
	track_pid $!
	n=50
	until [ -S "$WORK/$name.sock" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "nbdkit $name did not start: $(cat "$WORK/$name.log")"
		sleep 0.1
	done
}

# uri NAME: the URI of nbd_server NAME's export.
uri() { echo "nbd+unix:///?socket=$WORK/$1.sock"; }

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

# nbdkit_pause SOCKET p|r: pause or resume an export behind nbdkit's pause
# filter (pause-control=SOCKET); true once nbdkit echoed the command in
# upper case, as it does when it took effect.
nbdkit_pause() {
	python3 - "$1" "$2" >/dev/null 2>&1 <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
sys.exit(s.recv(1) != sys.argv[2].upper().encode())
PY
}

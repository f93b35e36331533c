#!/bin/sh
# A multi-conn NBD disk whose server is slow to take its further
# connections (one per queue beyond the first), connected while four
# guests on image files do verified I/O (issue 29): each further queue
# connects on its worker at its first request, so the main loop never
# stalls over 100 ms (tests/stall-probe.py), a new guest attaches in its
# usual time meanwhile, and the slow disk's guest waits on that queue and
# then verifies every byte. Before, the main thread made those
# connections when the guest connected and waited for each handshake.
. "$top_srcdir/tests/lib.sh"
xensim_setup
requires python3 nbdkit
. "$top_srcdir/tests/lib-store-away.sh"
. "$top_srcdir/tests/lib-nbd.sh"
HOLD_S=3

# slow_proxy PATH TARGET SECONDS: a unix socket in front of TARGET's that
# passes the first connection on at once and each later one only after
# SECONDS of silence, as a server slow to accept more would; the count
# of connections it passed on goes to PATH.count.
slow_proxy() {
	rm -f "$1"
	python3 -c '
import socket, sys, threading, time
path, target, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])

def pump(a, b):
    while True:
        data = a.recv(65536)
        if not data:
            break
        b.sendall(data)
    b.shutdown(socket.SHUT_WR)

def serve(c, n):
    if n > 1:
        time.sleep(hold)
    t = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    t.connect(target)
    with open(path + ".count", "w") as f:
        f.write(str(n))
    threading.Thread(target=pump, args=(t, c), daemon=True).start()
    pump(c, t)

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
n = 0
while True:
    c = s.accept()[0]
    n += 1
    threading.Thread(target=serve, args=(c, n), daemon=True).start()
' "$1" "$2" "$3" 3>&- &
	track_pid $!
	wait_socket "$1" "the proxy"
}

start_daemon
truncate -s 16M "$WORK/slow.img"
nbd_server slow file "$WORK/slow.img"
slow_proxy "$WORK/proxy.sock" "$WORK/slow.sock" $HOLD_S

busy_guests_start 20
timed_attach 6
base=$ATTACH_MS
note "dom 6 attached in $base ms before the slow disk"
stall_probe_start

guest 5 16M
attach 5 xvda "nbd+unix:///?socket=$WORK/proxy.sock"
blkfront_bg 5 --queues 2 --depth 8 --ops 400 --verify
slow_front=$BG_PID
wait_file_line "$WORK/front-5.out" "connected" 20 ||
	fail "dom 5 never connected: $(cat "$WORK/front-5.out")"
grep -q "2 queues" "$WORK/front-5.out" ||
	fail "dom 5 did not get two queues (is the export multi-conn?):" \
		"$(cat "$WORK/front-5.out")"
# While its second queue's connection is held, nobody else waits.
assert_usual_attach 7 "$base"

blkfront_wait 5 $slow_front "the slow NBD disk's guest failed"
assert_verified 5
[ "$(cat "$WORK/proxy.sock.count")" -ge 2 ] ||
	fail "the second queue never connected through the proxy"
stall_probe_stop 100
note "the main loop's worst wait: $STALL_WORST_MS ms;" \
	"$(grep -o 'MB/s, IOPS.*' "$WORK/front-5.out" | head -n 1)"
busy_guests_wait
stop_within 5
exit 0

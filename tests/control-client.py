#!/usr/bin/env python3
"""Control-socket clients that misbehave, for the control-*.sh tests.

    control-client.py ask SOCKET REQUEST
        one request, the reply printed as it came; a read that failed
        (a reset) said on stderr
    control-client.py slow SOCKET REQUEST INTERVAL
        send REQUEST (a newline added) one byte every INTERVAL seconds;
        print "dropped after N bytes: REPLY" if the daemon answered or
        closed before the whole line was sent, else "answered: REPLY"
    control-client.py noread SOCKET REQUEST SECONDS
        send REQUEST, read nothing for SECONDS, then read what there is;
        print "bytes=N complete=0|1" (complete: the whole JSON document)
    control-client.py split SOCKET N
        N clients at once, each sending "li", then 0.5 s later "st\\n",
        and reading its reply; print "answered=A of N"
    control-client.py idle SOCKET N SECONDS
        N clients at once that send nothing; after SECONDS print
        "busy=B closed=C of N": how many were answered busy, and how many
        the daemon closed (busy or not) by then
"""
import json
import socket
import sys
import threading
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    return s


def read_all(s, say_reset=False):
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError as e:
        if say_reset:
            sys.stderr.write("control-client: %s after %d bytes\n"
                             % (e.strerror, len(data)))
    return data


def complete(data):
    try:
        json.loads(data)
        return True
    except ValueError:
        return False


def ask(path, request):
    with connect(path) as s:
        try:
            s.sendall(request.encode() + b"\n")
        except OSError:  # answered and closed before it was sent
            pass
        sys.stdout.write(read_all(s, True).decode(errors="replace"))


def slow(path, request, interval):
    line = request.encode() + b"\n"
    with connect(path) as s:
        for i in range(len(line)):
            try:
                s.sendall(line[i:i + 1])
            except OSError:
                print("dropped after %d bytes: %s" %
                      (i, read_all(s).decode(errors="replace").strip()))
                return
            time.sleep(interval)
        print("answered: %s" % read_all(s).decode(errors="replace").strip())


def noread(path, request, seconds):
    with connect(path) as s:
        s.sendall(request.encode() + b"\n")
        time.sleep(seconds)
        data = read_all(s)
        print("bytes=%d complete=%d" % (len(data), complete(data)))


def split(path, n):
    answered = []
    waits = []

    def one():
        with connect(path) as s:
            t0 = time.monotonic()
            s.sendall(b"li")
            time.sleep(0.5)
            s.sendall(b"st\n")
            data = read_all(s)
            waits.append(time.monotonic() - t0)
            if complete(data) and "devices" in json.loads(data):
                answered.append(1)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The slowest client's time from its first byte to its answer: the
    # clients' own start-up and the host's load are not in it.
    print("answered=%d of %d slowest_ms=%d"
          % (len(answered), n, max(waits, default=0) * 1000))


def idle(path, n, seconds):
    socks = [connect(path) for _ in range(n)]
    time.sleep(seconds)
    busy = closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            data = s.recv(4096)
            closed += 1
            busy += b"busy" in data
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print("busy=%d closed=%d of %d" % (busy, closed, n))


mode, path = sys.argv[1], sys.argv[2]
if mode == "ask":
    ask(path, sys.argv[3])
elif mode == "slow":
    slow(path, sys.argv[3], float(sys.argv[4]))
elif mode == "noread":
    noread(path, sys.argv[3], float(sys.argv[4]))
elif mode == "split":
    split(path, int(sys.argv[3]))
elif mode == "idle":
    idle(path, int(sys.argv[3]), float(sys.argv[4]))
else:
    sys.exit("unknown mode " + mode)

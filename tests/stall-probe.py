#!/usr/bin/env python3
"""Measure how long the daemon's main loop leaves a control client waiting.

    stall-probe.py SOCKET OUT

Every 50 ms, connect to the control socket SOCKET, send "log-level" (a
request with no effect) and read the answer to its end. On SIGTERM, write
one line to OUT:

    worst_ms=W probes=N failed=F noise_ms=S

W is the longest time one probe waited for its answer, or the time the
last one has been waiting, if it has not been answered (a stalled main
loop must not hide behind a probe that never returns); N counts that
one too. F counts probes
that got no answer at all (refused, reset, or timed out after 30 s).
"""
import os
import signal
import socket
import sys
import threading
import time

sock_path, out_path = sys.argv[1], sys.argv[2]
worst = 0.0
probes = failed = 0
started = None  # when the probe under way began
noise = 0.0


def measure_noise():
    global noise
    while True:
        before = time.monotonic()
        time.sleep(0.01)
        noise = max(noise, time.monotonic() - before - 0.01)


threading.Thread(target=measure_noise, daemon=True).start()


def finish(*_):
    pending = time.monotonic() - started if started is not None else 0.0
    # Written whole under another name, then renamed: a reader never sees
    # half a line.
    with open(out_path + ".tmp", "w") as f:
        f.write("worst_ms=%d probes=%d failed=%d noise_ms=%d\n" %
                (round(1000 * max(worst, pending)),
                 probes + (started is not None), failed,
                 round(1000 * noise)))
    os.rename(out_path + ".tmp", out_path)
    sys.exit(0)


signal.signal(signal.SIGTERM, finish)

while True:
    started = time.monotonic()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(sock_path)
            s.sendall(b"log-level\n")
            answer = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        if not answer:
            failed += 1
    except OSError:
        failed += 1
    worst = max(worst, time.monotonic() - started)
    started = None
    probes += 1
    time.sleep(0.05)

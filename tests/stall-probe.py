#!/usr/bin/env python3
"""Measure how long the daemon's main loop leaves a control client waiting.

    stall-probe.py SOCKET OUT

Every 50 ms, connect to the control socket SOCKET, send "log-level" (a
request with no effect) and read the answer to its end. On SIGTERM, write
one line to OUT:

    worst_ms=W probes=N failed=F noise_ms=S sched_ms=R

W is the longest time one probe waited for its answer, less the time the
two threads of its round trip spent runnable but not running (waiting for
a CPU): the daemon's main thread, found by the socket's peer credentials,
and this probe's own thread, each read from the kernel's schedstat. What
is left is the main loop's own doing: its work, and anything it blocked
on. R is the most such waiting taken from one probe. Where schedstat
cannot be read, W is the whole wait and S the worst delay a thread of
this probe saw in sleeping 10 ms, a measure of the host's load that the
caller adds to its bound; with schedstat, S is 0. An unanswered probe
counts with the whole time it has been waiting (a stalled main loop must
not hide behind a probe that never returns); N counts that one too. F
counts probes that got no answer at all (refused, reset before a byte
came, or timed out after 30 s). "busy", said to a probe closed for a newer
client (before or after it sent its request), is an answer.
"""
import os
import signal
import socket
import struct
import sys
import threading
import time

sock_path, out_path = sys.argv[1], sys.argv[2]
worst = 0.0
probes = failed = 0
started = None  # when the probe under way began
noise = 0.0
sched_worst = 0.0
sched_ok = True  # every probe so far read both threads' schedstat


def runqueue_wait(tid, pid=None):
    """Seconds thread TID (of PID) has waited runnable for a CPU, or None."""
    path = "/proc/%d/task/%d/schedstat" % (pid or os.getpid(), tid)
    try:
        with open(path) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


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
        f.write("worst_ms=%d probes=%d failed=%d noise_ms=%d sched_ms=%d\n"
                % (round(1000 * max(worst, pending)),
                   probes + (started is not None), failed,
                   0 if sched_ok else round(1000 * noise),
                   round(1000 * sched_worst)))
    os.rename(out_path + ".tmp", out_path)
    sys.exit(0)


signal.signal(signal.SIGTERM, finish)

me = threading.get_native_id()
daemon = None  # the daemon's pid, its main thread's tid too

while True:
    mine = runqueue_wait(me)
    theirs = runqueue_wait(daemon, daemon) if daemon else None
    started = time.monotonic()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(sock_path)
            if daemon is None:
                daemon = struct.unpack("3i", s.getsockopt(
                    socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
                theirs = runqueue_wait(daemon, daemon)
            try:
                s.sendall(b"log-level\n")
            except OSError:
                pass  # closed before it was sent: read why
            answer = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
            except OSError:
                pass  # a reset after an answer still answered
    except OSError:
        answer = b""
    if not answer:
        failed += 1
    waited = time.monotonic() - started
    mine_after = runqueue_wait(me)
    theirs_after = runqueue_wait(daemon, daemon) if daemon else None
    if None in (mine, theirs, mine_after, theirs_after):
        sched_ok = False
    else:
        runnable = (mine_after - mine) + (theirs_after - theirs)
        sched_worst = max(sched_worst, runnable)
        waited = max(0.0, waited - runnable)
    worst = max(worst, waited)
    started = None
    probes += 1
    time.sleep(0.05)

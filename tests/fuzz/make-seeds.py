#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of the fuzz harnesses into tests/fuzz/corpus/.

The seeds are committed; this script says what each one is and rewrites
them all (run it from anywhere after changing an input format). Each seed
is a case from docs/security.md or a regression: keep the names stable.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

READ, WRITE, BARRIER, FLUSH, DISCARD, INDIRECT = 0, 1, 2, 3, 5, 6
X86_64, X86_32 = 1, 0
GIB = 1 << 30


def write(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- request: header, slot, indirect segment list (tests/fuzz/request.c)

def header(abi=X86_64, readonly=False, discard=True, barrier=True,
           ss_index=0, max_indirect=256, image=GIB, start=0, order=0):
    flags = (abi | readonly << 1 | discard << 2 | barrier << 3
             | ss_index << 4)
    return struct.pack("<BHQIB", flags, max_indirect, image, start, order)


def seg(gref, first, last):
    return struct.pack("<IBBH", gref, first, last, 0)


def offsets(abi):
    return (8, 16, 24) if abi == X86_64 else (4, 12, 20)


def slot_size(abi):
    return 112 if abi == X86_64 else 108


def rw(abi, op, sector, segs, nr=None, rid=7):
    id_off, sector_off, tail = offsets(abi)
    s = bytearray(slot_size(abi))
    s[0] = op
    s[1] = len(segs) if nr is None else nr
    struct.pack_into("<H", s, 2, 0)
    struct.pack_into("<Q", s, id_off, rid)
    struct.pack_into("<Q", s, sector_off, sector)
    for i, sg in enumerate(segs[:11]):
        s[tail + 8 * i:tail + 8 * i + 8] = sg
    return bytes(s)


def discard(abi, sector, nr_sectors, rid=9):
    id_off, sector_off, tail = offsets(abi)
    s = bytearray(slot_size(abi))
    s[0] = DISCARD
    struct.pack_into("<Q", s, id_off, rid)
    struct.pack_into("<Q", s, sector_off, sector)
    struct.pack_into("<Q", s, tail, nr_sectors)
    return bytes(s)


def indirect(abi, inner, sector, nr, grefs, rid=11):
    id_off, sector_off, tail = offsets(abi)
    s = bytearray(slot_size(abi))
    s[0] = INDIRECT
    s[1] = inner
    struct.pack_into("<H", s, 2, nr)
    struct.pack_into("<Q", s, id_off, rid)
    struct.pack_into("<Q", s, sector_off, sector)
    for i, g in enumerate(grefs[:8]):
        struct.pack_into("<I", s, tail + 4 + 4 * i, g)
    return bytes(s)


def full_pages(n):
    return [seg(100 + i, 0, 7) for i in range(n)]


def request_seeds():
    for abi, tag in ((X86_64, "64"), (X86_32, "32")):
        w = lambda name, data: write("request", f"{name}-{tag}", data)
        w("read-one-page", header(abi) + rw(abi, READ, 8, [seg(5, 0, 7)]))
        w("write-11-segments",
          header(abi, start=0xfffffffe, order=4)
          + rw(abi, WRITE, 0, full_pages(11)))
        w("read-last-sector",
          header(abi) + rw(abi, READ, GIB // 512 - 1, [seg(5, 7, 7)]))
        w("read-past-end",
          header(abi) + rw(abi, READ, GIB // 512 - 1, [seg(5, 6, 7)]))
        w("sector-wraps-2-64",
          header(abi) + rw(abi, READ, 2**64 - 1, [seg(5, 0, 7)]))
        w("nr-segments-0", header(abi) + rw(abi, READ, 0, []))
        w("nr-segments-12",
          header(abi) + rw(abi, WRITE, 0, full_pages(11), nr=12))
        w("first-after-last", header(abi) + rw(abi, READ, 0, [seg(5, 4, 3)]))
        w("last-sect-8", header(abi) + rw(abi, READ, 0, [seg(5, 0, 8)]))
        w("write-read-only",
          header(abi, readonly=True) + rw(abi, WRITE, 0, [seg(5, 0, 7)]))
        w("flush-empty", header(abi) + rw(abi, FLUSH, 0, []))
        # Linux blkfront's empty flush: the block layer's sector -1.
        w("flush-empty-sector-minus-1",
          header(abi) + rw(abi, FLUSH, 2**64 - 1, []))
        w("flush-with-data", header(abi) + rw(abi, FLUSH, 64, full_pages(2)))
        w("barrier-not-offered",
          header(abi, barrier=False) + rw(abi, BARRIER, 0, [seg(5, 0, 7)]))
        w("unknown-operation", header(abi) + rw(abi, 200, 0, [seg(5, 0, 7)]))
        w("large-sectors-4k",
          header(abi, ss_index=3) + rw(abi, WRITE, 3, [seg(5, 0, 0)]))
        w("large-sectors-4k-last-sect-1",
          header(abi, ss_index=3) + rw(abi, WRITE, 3, [seg(5, 0, 1)]))
        w("discard", header(abi) + discard(abi, 2048, 4096))
        w("discard-past-end", header(abi) + discard(abi, GIB // 512, 1))
        w("discard-wraps", header(abi) + discard(abi, 8, 2**64 - 4))
        w("discard-read-only",
          header(abi, readonly=True) + discard(abi, 0, 8))
        w("discard-not-offered",
          header(abi, discard=False) + discard(abi, 0, 8))
        w("indirect-read-512",
          header(abi, max_indirect=4096)
          + indirect(abi, READ, 0, 512, [77])
          + b"".join(full_pages(512)))
        w("indirect-write-4096",
          header(abi, max_indirect=4096, order=2, start=12345)
          + indirect(abi, WRITE, 1024, 4096, list(range(200, 208)))
          + b"".join(full_pages(4096)))
        w("indirect-4097",
          header(abi, max_indirect=4096)
          + indirect(abi, READ, 0, 4097, list(range(200, 208))))
        w("indirect-above-limit",
          header(abi, max_indirect=256)
          + indirect(abi, READ, 0, 257, [1]))
        w("indirect-not-offered",
          header(abi, max_indirect=0) + indirect(abi, READ, 0, 8, [1]))
        w("indirect-flush-inside",
          header(abi) + indirect(abi, FLUSH, 0, 8, [1]))
        w("indirect-bad-segment",
          header(abi)
          + indirect(abi, READ, 0, 3, [1])
          + seg(5, 0, 7) + seg(6, 3, 2) + seg(7, 0, 7))
        w("indirect-past-end",
          header(abi, image=1 << 20)
          + indirect(abi, WRITE, 2000, 7, [1])
          + b"".join(full_pages(7)))


# ---- ring: header, then steps (tests/fuzz/ring.c)

PRODUCE, SET_REQ_PROD, SET_RSP_EVENT, TAKE, ANSWER, PUSH, FINAL, PEEK = range(8)


def ring(abi, order, start):
    return struct.pack("<BI", abi | order << 1, start)


def produce(n):
    return struct.pack("<BH", PRODUCE, n)


def take(n):
    return struct.pack("<BB", TAKE, n)


def answer(n):
    return struct.pack("<BB", ANSWER, n)


def set_prod(v):
    return struct.pack("<BI", SET_REQ_PROD, v)


def set_rsp_event(v):
    return struct.pack("<BI", SET_RSP_EVENT, v)


PUSH_B, FINAL_B, PEEK_B = bytes([PUSH]), bytes([FINAL]), bytes([PEEK])


def ring_seeds():
    for abi, tag in ((X86_64, "64"), (X86_32, "32")):
        w = lambda name, data: write("ring", f"{name}-{tag}", data)
        w("steady", ring(abi, 0, 0) + (produce(5) + take(9) + answer(5)
                                       + PUSH_B + FINAL_B) * 4)
        w("wraps-2-32", ring(abi, 4, 0xfffffff0)
          + (produce(300) + take(255) + take(100) + answer(255)
             + answer(100) + PUSH_B + FINAL_B) * 3)
        w("full-ring-unanswered", ring(abi, 0, 0) + produce(32) + take(40)
          + produce(10) + take(10) + FINAL_B + answer(1) + take(5) + FINAL_B)
        w("prod-beyond-size", ring(abi, 1, 7) + set_prod(7 + 65) + take(1))
        w("prod-backwards", ring(abi, 0, 100) + produce(10) + take(3)
          + set_prod(90) + take(20) + answer(10) + PUSH_B + FINAL_B)
        w("never-consumed", ring(abi, 2, 5) + set_rsp_event(5)
          + (produce(64) + take(255) + answer(255) + PUSH_B) * 6)
        w("rsp-event-far", ring(abi, 0, 0) + set_rsp_event(0x80000000)
          + produce(3) + take(3) + answer(3) + PUSH_B)
        w("poller-peeks", ring(abi, 1, 40) + PEEK_B + produce(2) + PEEK_B
          + take(2) + PEEK_B + set_prod(1000) + PEEK_B + take(1))


# ---- xenbus: text nodes (tests/fuzz/xenbus.c)

def nodes(*lines):
    return b"".join(l if isinstance(l, bytes) else l.encode() + b"\n"
                    for l in lines)


ONE_QUEUE = ("ring-ref=8", "event-channel=5", "state=3")


def xenbus_seeds():
    w = lambda name, data: write("xenbus", name, data)
    w("one-page-ring", nodes(*ONE_QUEUE))
    w("order-2-x86_64", nodes("ring-page-order=2", "protocol=x86_64-abi",
                              "ring-ref0=8", "ring-ref1=9", "ring-ref2=10",
                              "ring-ref3=11", "event-channel=5",
                              "feature-persistent=1", "state=4"))
    w("four-queues", nodes("multi-queue-num-queues=4", "ring-page-order=1",
                           "protocol=x86_32-abi",
                           "feature-large-sector-size=1",
                           *(f"queue-{q}/ring-ref{i}={100 + 2 * q + i}"
                             for q in range(4) for i in range(2)),
                           *(f"queue-{q}/event-channel={q + 3}"
                             for q in range(4))))
    w("max-offered", nodes("!max-ring-page-order=4",
                           "!multi-queue-max-queues=64",
                           "ring-page-order=4", "multi-queue-num-queues=2",
                           *(f"queue-{q}/ring-ref{i}={i}"
                             for q in range(2) for i in range(16)),
                           "queue-0/event-channel=1",
                           "queue-1/event-channel=4294967295"))
    w("ring-page-order-20", nodes("ring-page-order=20", *ONE_QUEUE))
    w("ring-page-order-99", nodes("ring-page-order=99", *ONE_QUEUE))
    w("order-above-offer", nodes("!max-ring-page-order=1",
                                 "ring-page-order=2", *ONE_QUEUE))
    w("num-queues-2-32-plus-1",
      nodes("multi-queue-num-queues=4294967297", *ONE_QUEUE))
    w("num-queues-1000", nodes("multi-queue-num-queues=1000", *ONE_QUEUE))
    w("num-queues-0", nodes("multi-queue-num-queues=0", *ONE_QUEUE))
    w("queue-missing", nodes("multi-queue-num-queues=2",
                             "queue-0/ring-ref=1", "queue-0/event-channel=2"))
    w("event-channel-2-32", nodes("ring-ref=8", "event-channel=4294967296"))
    w("event-channel-negative", nodes("ring-ref=8", "event-channel=-1"))
    w("ring-ref-missing", nodes("event-channel=5"))
    w("ring-ref-not-a-number", nodes("ring-ref=0x10", "event-channel=5"))
    w("ring-ref-trailing-space", nodes("ring-ref=8 ", "event-channel=5"))
    w("ring-ref-empty", nodes("ring-ref=", "event-channel=5"))
    w("protocol-unknown", nodes("protocol=x86_64-abi-", *ONE_QUEUE))
    w("protocol-arm", nodes("protocol=arm-abi", *ONE_QUEUE))
    w("persistent-2", nodes("feature-persistent=2", *ONE_QUEUE))
    w("persistent-not-offered", nodes("!feature-persistent=0",
                                      "feature-persistent=1", *ONE_QUEUE))
    w("state-garbage", nodes("state=3x", "ring-ref=8", "event-channel=5"))
    w("state-9", nodes("state=9", "ring-ref=8", "event-channel=5"))
    w("what-len-1", nodes("!what-len=1", "ring-ref=x"))
    w("what-len-10", nodes("!what-len=10", "ring-page-order=7"))
    # Regressions: a NUL inside a value was parsed as the text before it.
    w("nul-in-order", nodes(b"ring-page-order=1\0junk\n", *ONE_QUEUE))
    w("nul-in-protocol", nodes(b"protocol=x86_64-abi\0\n", *ONE_QUEUE))
    w("nul-in-ring-ref", nodes(b"ring-ref=8\0\n", "event-channel=5"))
    w("nul-in-persistent", nodes(b"feature-persistent=1\0\n", *ONE_QUEUE))


# ---- pgrant: capacity, budget, then steps (tests/fuzz/pgrant.c)

GET, PUT, AGE, REVOKE, TOUCH, SHRINK = range(6)
READ_ONLY_PAGE = 7  # pages 7, 15, 23, ... are granted read-only
ROOMY = 39  # a budget of 40 mappings: more than any cache holds


def get(page):
    return bytes([GET, page])


def get_raw(gref):
    return bytes([GET, 255]) + struct.pack("<I", gref)


def put(i=0):
    return bytes([PUT, i])


def cache(cap, budget=ROOMY):
    """A cache of cap + 1 mappings on a budget of budget + 1."""
    return bytes([cap, budget])


def pgrant_seeds():
    w = lambda name, data: write("pgrant", name, data)
    w("pin-and-release", cache(3) + get(0) + get(0) + bytes([TOUCH, 1])
      + put() + put())
    w("full-then-aged", cache(1) + get(0) + get(1) + get(2) + put()
      + bytes([AGE]) + get(2) + put())
    w("read-only-grant", cache(3) + get(READ_ONLY_PAGE))
    w("never-granted", cache(3) + get_raw(0x7FFFF0) + get_raw(0))
    w("revoke-pinned", cache(3) + get(3) + bytes([REVOKE, 3]) + put()
      + bytes([REVOKE, 3, AGE, REVOKE, 3]) + get(3))
    w("revoke-and-regrant", cache(3) + bytes([REVOKE, 4]) + get(4)
      + bytes([TOUCH, 0]) + put())
    w("same-page-many-segments", cache(31) + get(1) * 20 + put() * 20)
    w("age-keeps-pins", cache(7) + b"".join(get(p) for p in range(8))
      + put(2) + put(0) + bytes([AGE, TOUCH, 1, AGE]))
    w("budget-spent-then-shrunk", cache(31, 3)
      + b"".join(get(p) + put() for p in range(5))
      + get(0) + bytes([SHRINK, 1]) + get(4) + put() + put())
    w("paused-after-error", cache(7) + get(READ_ONLY_PAGE) + get(0)
      + bytes([AGE]) + get(0) + put())
    w("shrink-keeps-pins", cache(7) + get(0) + get(1) + get(2) + put(1)
      + bytes([SHRINK, 0, TOUCH, 0]))


# ---- control: reason buffer size - 1, then the line (tests/fuzz/control.c)

def control_seeds():
    w = lambda name, line, why=159: write("control", name,
                                          bytes([why]) + line)
    w("list", b"list")
    w("stats-all", b"stats")
    w("stats-one", b"stats 7/51712")
    w("stats-blanks", b" \tstats\t 7/51712  ")
    w("stats-domid-2-32", b"stats 4294967296/51712")
    w("stats-devid-max", b"stats 1/4294967295")
    w("stats-negative", b"stats -1/51712")
    w("stats-plus", b"stats +1/51712")
    w("stats-no-slash", b"stats 751712")
    w("stats-two-slashes", b"stats 7/5/1")
    w("stats-leading-zeros", b"stats 007/051712")
    w("stats-extra-word", b"stats 7/51712 x")
    w("log-level-ask", b"log-level")
    w("log-level-set", b"log-level debug")
    w("log-level-31-bytes", b"log-level " + b"x" * 31)
    w("log-level-32-bytes", b"log-level " + b"x" * 32)
    w("log-level-high-bytes", b"log-level \xc3\xa9t\xc3\xa9")
    w("resize-all", b"resize")
    w("resize-one", b"resize 3/768")
    w("reload", b"reload")
    w("reload-argument", b"reload now")
    w("limit-show", b"limit 3/768")
    w("limit-set", b"limit 3/768 1000 1048576")
    w("limit-keep", b"limit 3/768 - 0")
    w("limit-one-value", b"limit 3/768 1000")
    w("limit-2-64", b"limit 3/768 18446744073709551616 0")
    w("limit-max", b"limit 3/768 18446744073709551615 -")
    w("limit-not-a-number", b"limit 3/768 1k -")
    w("nul-inside", b"list\0junk")
    w("cr-inside", b"stats\r 1/2")
    w("del-byte", b"list\x7f")
    w("five-words", b"limit 3/768 1 2 3")
    w("empty", b"")
    w("blanks-only", b" \t ")
    w("unknown", b"shutdown")
    w("why-len-1", b"nonsense", why=0)
    w("why-len-8", b"stats x", why=7)
    w("127-bytes", b"stats " + b"1" * 121)
    w("snapshot", b"snapshot 5/51712 /srv/xen/snap.img")
    w("snapshot-rbd-name", b"snapshot 5/51712 before-upgrade")
    w("snapshot-no-dest", b"snapshot 5/51712")
    w("snapshot-dest-511", b"snapshot 5/51712 /" + b"d" * 510)
    w("snapshot-dest-512", b"snapshot 5/51712 /" + b"d" * 511)
    w("snapshot-long-device", b"snapshot " + b"1" * 40 + b" /a")
    w("move", b"move 5/51712 /srv/xen/new.img")
    w("move-bw", b"move 5/51712 /srv/xen/new.img 52428800")
    w("move-bw-unit", b"move 5/51712 /srv/xen/new.img 50M")
    w("move-rbd", b"move 5/51712 rbd:pool/new")
    w("move-no-dest", b"move 5/51712")
    w("move-dest-511", b"move 5/51712 /" + b"d" * 510 + b" 1")
    w("move-cancel", b"move-cancel 5/51712")
    w("move-cancel-dest", b"move-cancel 5/51712 /a")
    w("snapshot-copy", b"snapshot-copy 5/51712 /srv/xen/copy.img")
    w("snapshot-copy-bw", b"snapshot-copy 5/51712 /srv/xen/copy.img 52428800")
    w("snapshot-copy-bw-unit", b"snapshot-copy 5/51712 /srv/xen/copy.img 50M")
    w("snapshot-copy-rbd", b"snapshot-copy 5/51712 rbd:pool/copy")
    w("snapshot-copy-no-dest", b"snapshot-copy 5/51712")
    w("snapshot-copy-dest-511",
      b"snapshot-copy 4294967295/4294967295 /" + b"d" * 510 +
      b" 18446744073709551615")


# ---- config: blkbackd.conf's bytes (tests/fuzz/config.c)

def config_seeds():
    w = lambda name, data: write("config", name, data)
    sample = os.path.join(HERE, "..", "..", "tools", "blkbackd.conf")
    with open(sample, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    w("shipped-sample", b"".join(lines))
    w("shipped-sample-uncommented",
      b"".join(l[1:] if l.startswith(b"#") and b" = " in l else l
               for l in lines))
    w("empty", b"")
    w("every-kind", b"workers = 4\ncache = writeback\npin-workers = yes\n"
      b"state-dir = /run/blkbackd\n; a comment\n# another\n\n")
    w("no-final-newline", b"workers = 2")
    w("crlf", b"workers = 2\r\ncache = none\r\n")
    w("indented", b"   workers = 2\n\tcache = none\n")
    w("unknown-setting", b"wrokers = 2\n")
    w("section", b"[daemon]\nworkers = 2\n")
    w("set-twice", b"workers = 2\nworkers = 3\n")
    w("out-of-range", b"max-ring-page-order = 5\nworkers = 0\n")
    w("number-past-long", b"workers = 99999999999999999999999\n")
    w("not-a-number", b"workers = 0x10\nworkers2 = -1\n")
    w("bad-choice", b"cache = sometimes\npersistent-grants = maybe\n")
    w("relative-path", b"state-dir = run/blkbackd\n")
    w("command-line-only", b"config = /etc/other.conf\nhelp = yes\n")
    w("not-a-setting-line", b"workers\n= 2\n")
    w("empty-value", b"workers =\ncache = \n")
    w("long-line", b"workers = " + b"1" * 300 + b"\ncache = none\n")
    w("nul-in-value", b"workers = 2\0junk\ncache = none\n")
    w("nul-before-setting", b"\0\nworkers = 2\n")
    w("rbd-allow", b"rbd-allow-no-exclusive-lock = yes\n")
    # Regression: a long line that starts with a NUL passed for short, and
    # its tail was read as the next line.
    w("nul-first-in-long-line", b"\0" + b"\xff" * 300 + b"\nworkers = 2\n")
    w("every-error-at-once", b"wrokers = 2\n[x]\ncache = sometimes\n"
      b"workers = 1\nworkers = 2\nnonsense\n")


# ---- vbd: the device state machine on xenstore events (tests/fuzz/vbd.c)

(FE_VALUE, FE_RM, FE_STATE, BE_VALUE, BE_RM, DELIVER, SETTLE, HOLD, CLOSED,
 UNPLUG, REMOVE, REPLUG, DOMAIN_DIES, RESIZE, TIMERS, BROKEN, MOVE,
 FAIL_CONNECT) = range(18)
FE_KEYS = ["state", "ring-ref", "event-channel", "protocol",
           "feature-persistent", "feature-large-sector-size",
           "multi-queue-num-queues", "ring-page-order", "ring-ref0",
           "ring-ref1", "queue-0/ring-ref", "queue-0/event-channel",
           "queue-1/ring-ref", "queue-1/event-channel", "backend"]
BE_KEYS = ["online", "params", "mode", "hotplug-status", "script",
           "frontend", "dev", "device-type", "discard-enable", "removable",
           "limit-iops", "limit-bytes-per-second"]
WORDS = ["", "x86_64-abi", "x86_32-abi", "connected", "error", "w", "r",
         "-1", "08", " 4", "4\n", "0x4", "4294967296",
         "18446744073709551616", "cdrom", "/etc/xen/scripts/block",
         "FE", "relative/path", "other-frontend", "/nonexistent.img",
         "null:1M"]
# The set-up byte: the image, read-only, a hotplug script, rings held.
IMAGE, MISSING, NULL_IMAGE, DIRECTORY = 0, 1, 2, 3
RO, SCRIPT, HELD = 4, 8, 16
INITIALISING, INITWAIT, INITIALISED, CONNECTED, CLOSING, CLOSED = range(1, 7)


def num(n):
    return bytes([n])


def word(w):
    return bytes([200 + WORDS.index(w)])


def raw(b):
    return bytes([240 + len(b)]) + b


def fe(key, value):
    return bytes([FE_VALUE, FE_KEYS.index(key)]) + value


def fe_state(n):
    return bytes([FE_STATE]) + num(n)


def be(key, value):
    return bytes([BE_VALUE, BE_KEYS.index(key)]) + value


def op(*codes):
    return bytes(codes)


def rings(state=INITIALISED):
    """A Linux blkfront's one ring, then its state."""
    return (fe("ring-ref", num(8)) + fe("event-channel", num(9))
            + fe("protocol", word("x86_64-abi")) + fe_state(state))


def connected():
    return op(SETTLE) + rings() + op(SETTLE) + fe_state(CONNECTED) + op(SETTLE)


def closed():
    return fe_state(CLOSING) + op(SETTLE) + fe_state(CLOSED) + op(SETTLE)


def vbd_seeds():
    def w(name, setup, steps):
        write("vbd", name, bytes([setup]) + steps)

    w("connect", IMAGE, connected())
    w("connect-then-close", IMAGE, connected() + closed())
    w("close-while-rings-held", HELD, connected() + closed()
      + op(HOLD, SETTLE))
    w("toolstack-removes", IMAGE, connected() + op(REMOVE, SETTLE))
    w("toolstack-unplugs", IMAGE, connected() + op(UNPLUG, SETTLE)
      + fe_state(CLOSED) + op(SETTLE, REMOVE, SETTLE))
    w("unplug-while-connecting", IMAGE, op(SETTLE) + rings() + op(UNPLUG)
      + op(SETTLE))
    w("online-0-connected", IMAGE, connected() + be("online", num(0))
      + op(SETTLE))
    w("open-fails", MISSING, op(SETTLE) + rings() + op(SETTLE))
    w("open-fails-with-script", MISSING | SCRIPT, op(SETTLE)
      + be("hotplug-status", word("error")) + op(SETTLE) + closed())
    w("image-is-a-directory", DIRECTORY, connected())
    w("null-image", NULL_IMAGE, connected() + op(RESIZE, 1, SETTLE))
    w("read-only", RO, connected())
    w("hotplug-waits", SCRIPT, connected()
      + be("hotplug-status", word("connected")) + op(SETTLE))
    w("frontend-jumps-ahead", IMAGE, rings(CONNECTED) + op(SETTLE))
    w("frontend-state-9", IMAGE, connected() + fe_state(9) + op(SETTLE))
    w("frontend-state-garbage", IMAGE, connected()
      + fe("state", raw(b"4\0junk")) + op(SETTLE)
      + fe("state", word(" 4")) + op(SETTLE))
    w("frontend-state-removed", IMAGE, connected() + op(FE_RM, 0, SETTLE))
    w("frontend-restarts-connected", IMAGE, connected()
      + fe_state(INITIALISING) + op(SETTLE) + rings() + op(SETTLE))
    w("two-quick-reconnects", IMAGE, connected()
      + (fe_state(CLOSING) + fe_state(CLOSED) + fe_state(INITIALISING)
         + rings()) * 2 + op(SETTLE))
    w("two-reconnects-held", HELD, connected()
      + (fe_state(CLOSING) + op(SETTLE) + fe_state(CLOSED) + op(CLOSED)
         + fe_state(INITIALISING) + rings() + op(HOLD, SETTLE, HOLD)) * 2)
    w("events-late-and-reversed", IMAGE, op(SETTLE) + rings()
      + op(DELIVER, 7, 255, 254, 253, 252, 251, 250, 249)
      + fe_state(CLOSING) + op(DELIVER, 2, 1, 0, SETTLE))
    w("resize", IMAGE, connected() + op(RESIZE, 1, SETTLE, RESIZE, 0))
    w("domain-dies", IMAGE, connected() + op(DOMAIN_DIES, SETTLE))
    w("domain-dies-held", HELD, connected() + op(DOMAIN_DIES, SETTLE)
      + op(REMOVE, SETTLE, HOLD, SETTLE))
    w("ring-broken", IMAGE, connected() + op(BROKEN, 0, SETTLE) + closed()
      + rings() + op(SETTLE))
    w("ring-moves", IMAGE, connected() + op(MOVE, 0, 1, SETTLE)
      + op(MOVE, 0, 0, CLOSED, SETTLE))
    w("ring-moves-while-closing", HELD, connected() + op(MOVE, 0, 1)
      + fe_state(CLOSING) + op(SETTLE, HOLD, SETTLE))
    w("connect-over-budget", IMAGE, op(SETTLE, FAIL_CONNECT, 0) + rings()
      + op(SETTLE) + closed() + rings() + op(SETTLE))
    w("multi-queue", IMAGE, op(SETTLE)
      + fe("multi-queue-num-queues", num(2))
      + fe("queue-0/ring-ref", num(8)) + fe("queue-0/event-channel", num(9))
      + fe("queue-1/ring-ref", num(10))
      + fe("queue-1/event-channel", num(11))
      + fe("protocol", word("x86_32-abi")) + fe_state(INITIALISED)
      + op(SETTLE))
    w("ring-page-order-9", IMAGE, op(SETTLE) + fe("ring-page-order", num(9))
      + fe("ring-ref0", num(8)) + rings() + op(SETTLE))
    w("frontend-path-garbage", IMAGE, be("frontend", word("relative/path"))
      + op(SETTLE) + rings() + op(SETTLE))
    w("params-change-connected", IMAGE, connected()
      + be("params", num(1)) + op(SETTLE) + closed() + rings()
      + op(SETTLE))
    w("replug", IMAGE, connected() + op(REMOVE, SETTLE, REPLUG, SETTLE)
      + rings() + op(SETTLE))
    w("limits", IMAGE, connected() + be("limit-iops", raw(b"100"))
      + op(SETTLE) + be("limit-iops", word("-1")) + op(SETTLE, TIMERS))
    w("mode-garbage", IMAGE, be("mode", raw(b"rw")) + op(SETTLE))
    # Regression: a device that failed while its rings closed slowly kept
    # its failure when the toolstack removed its directory and plugged the
    # disk again: the new device stayed Initialising for ever.
    w("removed-while-rings-close", HELD, connected() + op(BROKEN, 0, SETTLE)
      + op(REMOVE, REPLUG, SETTLE) + rings() + op(SETTLE, HOLD, SETTLE))


if __name__ == "__main__":
    request_seeds()
    ring_seeds()
    xenbus_seeds()
    pgrant_seeds()
    control_seeds()
    config_seeds()
    vbd_seeds()

#!/usr/bin/env python3
# The checks of tests/vbd-move-kill.sh, after a daemon was killed during a
# move of a disk.
#
#   move-kill-check.py images SERVED FIRST [DEST...]
#
# Is the guest on exactly one image, and is every other one gone or marked?
# SERVED: the image the daemon holds open for the disk now (its own
# account, from /proc/PID/fd). FIRST: the image the guest started on.
# DEST...: every destination a move was started to, in order. A finished
# move leaves its source marked (user.blkbackd.moved-to, the destination);
# an abandoned one leaves no copy. So, from FIRST, the marks lead from move
# to move, each to a later destination, and end at an image without a
# mark: the one the daemon serves. Every destination off that chain must
# be gone. Prints the chain.
#
#   move-kill-check.py writes BEFORE WRITES READ
#
# Does the image hold every write the guest was answered, and nothing
# else? WRITES: a round of the numbered writer (xensim-blkfront --check
# numbered-writes: "A SEQ BLOCK SENT_NS ACKED_NS STATUS" per write, all of
# them ended). READ and BEFORE: the image read back (--check numbered-read:
# "B BLOCK SEQ", -1 for a block never written, -2 for one that holds no
# whole numbered write) after the round and before it ("-": a new image).
# Every write must have been answered OKAY; each block must hold the last
# write of the round to it, or, if the round wrote none there, what it
# held before. Prints what it counted.
#
# Exits 1 with what is wrong.
import errno
import os
import sys

MARK = "user.blkbackd.moved-to"


def mark_of(path):
    try:
        return os.getxattr(path, MARK).decode()
    except OSError as e:
        if e.errno in (errno.ENODATA, errno.ENOENT):
            return None
        raise


def check_images(served, images):
    bad = []
    chain = [images[0]]
    while True:
        here = chain[-1]
        if not os.path.exists(here):
            bad.append("%s, on the chain of marks, is gone" % here)
            break
        to = mark_of(here)
        if to is None:
            break
        if to not in images[images.index(here) + 1:]:
            bad.append("%s is marked as moved to %s, no later destination"
                       % (here, to))
            break
        chain.append(to)
    if not bad and chain[-1] != served:
        bad.append("the marks end at %s, but the daemon serves %s"
                   % (chain[-1], served))
    for dest in images[1:]:
        if dest not in chain and os.path.exists(dest):
            bad.append("%s, the copy of a move that did not switch, is "
                       "still there (marked: %s)" % (dest, mark_of(dest)))
    return bad, "%d switched, %d abandoned and removed: %s" % (
        len(chain) - 1, len(images) - len(chain),
        " -> ".join(os.path.basename(p) for p in chain))


def read_back(path):
    held = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == "B":
                held[int(p[1])] = p[2]
    if not held:
        sys.exit("no blocks read back in " + path)
    return held


def check_writes(before_path, writes_path, read_path):
    bad = []
    last = {}
    answered = 0
    with open(writes_path) as f:
        for line in f:
            p = line.split()
            if len(p) != 6 or p[0] != "A":
                continue
            seq, block = int(p[1]), int(p[2])
            answered += 1
            if p[5] != "OKAY":
                bad.append("write %d was answered %s" % (seq, p[5]))
            last[block] = max(seq, last.get(block, -1))
    if not answered:
        sys.exit("no numbered writes in " + writes_path)
    held = read_back(read_path)
    before = {} if before_path == "-" else read_back(before_path)
    kept = 0
    for block, got in sorted(held.items()):
        if block in last:
            want, why = str(last[block]), "its last write"
        else:
            want, why = before.get(block, "-1"), "what it held before"
            kept += 1
        if got != want:
            bad.append("block %d holds %s, not %s (%s)"
                       % (block, got, want, why))
    return bad, ("%d writes answered; %d blocks hold their last write, %d "
                 "not written kept theirs" % (answered, len(held) - kept,
                                               kept))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "images":
        bad, said = check_images(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 5 and sys.argv[1] == "writes":
        bad, said = check_writes(*sys.argv[2:5])
    else:
        sys.exit("usage: move-kill-check.py images SERVED FIRST [DEST...]\n"
                 "       move-kill-check.py writes BEFORE WRITES READ")
    if bad:
        print("%d problem(s):" % len(bad))
        for b in bad[:10]:
            print("  " + b)
        sys.exit(1)
    print(said)


main()

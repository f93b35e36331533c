#!/usr/bin/env python3
# After a daemon was killed during moves of a disk, is the guest on exactly
# one image, and is every other one gone or marked? (tests/vbd-move-kill.sh)
#
#   move-kill-check.py SERVED FIRST [DEST...]
#
# SERVED: the image the daemon holds open for the disk now (its own
# account, from /proc/PID/fd). FIRST: the image the guest started on.
# DEST...: every destination a move was started to, in order.
#
# A finished move leaves its source marked (user.blkbackd.moved-to, the
# destination); an abandoned one leaves no copy. So, from FIRST, the marks
# lead from move to move, each to a later destination, and end at an image
# without a mark: the one the daemon serves. Every destination off that
# chain must be gone. Prints the chain; exits 1 with what is wrong.
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


def main():
    served, images = sys.argv[1], sys.argv[2:]
    if not images:
        sys.exit("usage: move-kill-check.py SERVED FIRST [DEST...]")
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
    if bad:
        print("%d problem(s):" % len(bad))
        for b in bad:
            print("  " + b)
        sys.exit(1)
    print("%d switched, %d abandoned and removed: %s"
          % (len(chain) - 1, len(images) - len(chain),
             " -> ".join(os.path.basename(p) for p in chain)))


main()

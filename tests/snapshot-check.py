#!/usr/bin/env python3
# Does a snapshot hold exactly the writes it must? (tests/vbd-snapshot.sh)
#
#   snapshot-check.py WRITES REPLY READ
#
# WRITES: the numbered writer's output (xensim-blkfront --check
# numbered-writes): "A SEQ BLOCK SENT_NS ACKED_NS STATUS" per write, sent
# and answered as the guest saw them, on CLOCK_MONOTONIC; every STATUS
# must be OKAY (the guest sees a pause, never an error).
# REPLY: the daemon's JSON answer to the snapshot (blkbackctl --json), whose
# monotonic_ns gives the pause: "stopped" (before the first ring was told
# to stop taking requests) and "drained" (every ring closed, nothing in
# flight), on the same clock.
# READ: the snapshot read back by another guest (--check numbered-read):
# "B BLOCK SEQ" per block, SEQ -1 for a block never written, -2 for one
# that holds no whole numbered write (or a status: the read failed).
#
# For every block, the write the snapshot holds must be
#   - at least as new as the last write to it the guest saw answered
#     before "stopped": an acknowledged write is never lost;
#   - a write sent before "drained": nothing the guest sent once the
#     device had stopped taking requests may be in it (such a write can
#     only have been taken after the pause, or the copy was not taken
#     under it);
#   - whole, at its own block.
# Writes in between (sent before the stop took effect, answered after
# "stopped") may be in it or not: they were in flight or still on the ring.
# Prints what it counted; exits 1 with the first few violations.
import json
import sys


def main():
    writes_path, reply_path, read_path = sys.argv[1:4]
    with open(reply_path) as f:
        mono = json.load(f)["monotonic_ns"]
    stopped, drained = mono["stopped"], mono["drained"]
    by_seq = {}
    by_block = {}
    with open(writes_path) as f:
        for line in f:
            p = line.split()
            if len(p) != 6 or p[0] != "A":
                continue
            if p[5] != "OKAY":
                sys.exit("the guest's write %s was answered %s" % (p[1], p[5]))
            seq, block, sent, acked = (int(x) for x in p[1:5])
            by_seq[seq] = (block, sent, acked)
            by_block.setdefault(block, []).append(seq)
    if not by_seq:
        sys.exit("no numbered writes in " + writes_path)
    if not 0 < stopped <= drained:
        sys.exit("the reply's pause cannot be true: stopped %d, drained %d"
                 % (stopped, drained))
    bad = []
    must, counted, ambiguous_in, ambiguous_out = 0, 0, 0, 0
    with open(read_path) as f:
        for line in f:
            p = line.split()
            if len(p) != 3 or p[0] != "B":
                continue
            block = int(p[1])
            counted += 1
            if not p[2].lstrip("-").isdigit():
                bad.append("block %d could not be read back: %s"
                           % (block, p[2]))
                continue
            held = int(p[2])
            acked_before = [s for s in by_block.get(block, [])
                            if by_seq[s][2] < stopped]
            last = max(acked_before) if acked_before else -1
            must += last >= 0
            if held == -2:
                bad.append("block %d holds no whole numbered write" % block)
                continue
            if held >= 0 and (held not in by_seq or
                              by_seq[held][0] != block):
                bad.append("block %d holds write %d, never sent there"
                           % (block, held))
                continue
            if held < last:
                bad.append("block %d holds write %d, but write %d to it was "
                           "answered %.3f ms before the pause: lost"
                           % (block, held, last,
                              (stopped - by_seq[last][2]) / 1e6))
                continue
            if held >= 0 and by_seq[held][1] >= drained:
                bad.append("block %d holds write %d, sent %.3f ms after the "
                           "device had drained: taken after the pause began"
                           % (block, held,
                              (by_seq[held][1] - drained) / 1e6))
                continue
            if held > last:
                ambiguous_in += 1
            # Newer writes it does not hold, sent before drained: on the
            # ring or in flight at the stop, not in the copy.
            ambiguous_out += sum(1 for s in by_block.get(block, [])
                                 if s > max(held, last) and
                                 by_seq[s][1] < drained)
    if not counted:
        sys.exit("no blocks read back in " + read_path)
    if bad:
        print("%d of %d blocks wrong:" % (len(bad), counted))
        for b in bad[:10]:
            print("  " + b)
        sys.exit(1)
    print("%d blocks: %d held the last write answered before the pause; "
          "%d held a write in flight at the stop, %d newer writes sent "
          "before the drain were rightly left out; none sent after it in"
          % (counted, must, ambiguous_in, ambiguous_out))


main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""resume-pause-report.py DIR — the pause a guest saw per worker crash.

DIR holds what tests/libvirt/test-worker-resume.sh leaves with
SLUICE_RESUME_OUT=DIR after its "pause" phase: console.log (the guest's
resume-probe lines: GAP <end_ms> <gap_us>, guest CLOCK_MONOTONIC, every
round of its read loop longer than 2 ms), kill-times.log (KILL pause <µs
since the epoch>, the host's clock) and service.log ("resumed in N ms").

The guest's clock and the host's run at the same rate (TCG's virtual clock
follows the host's) with an unknown offset.  The offset is the one that
puts the most kills just before a gap's end; then each kill's pause is the
largest gap ending from 100 ms before to 400 ms after it.  A gap runs from
the last read answered before the kill to the first answered after it: it
bounds the pause from SIGKILL to the next answered request from above.
Prints the pauses, their median and max, and the largest gap matched to no
kill (what the loop sees without a crash).
"""
import re
import statistics
import sys


def section(lines, phase):
    out, inside = [], False
    for line in lines:
        if line.startswith("STARTED " + phase):
            inside = True
        elif line.startswith("ENDED " + phase):
            break
        elif inside:
            out.append(line)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: resume-pause-report.py DIR")
    d = sys.argv[1]
    with open(d + "/console.log", errors="replace") as f:
        lines = [l.strip() for l in f]
    gaps = []
    for line in section(lines, "pause"):
        m = re.match(r"GAP (\d+) (\d+)$", line)
        if m:
            gaps.append((int(m.group(1)), int(m.group(2)) / 1000.0))
    with open(d + "/kill-times.log") as f:
        kills = [int(l.split()[2]) / 1000.0 for l in f if l.startswith("KILL pause ")]
    with open(d + "/service.log", errors="replace") as f:
        resumed = [int(m.group(1)) for m in re.finditer(r"sluice-fs for \S+ resumed in (\d+) ms", f.read())]
    if not gaps or not kills:
        sys.exit("no GAP lines or no kills of the pause phase in " + d)

    def matched(offset, window=(-100.0, 400.0)):
        picks = []
        for k in kills:
            lo, hi = k + offset + window[0], k + offset + window[1]
            near = [g for g in gaps if lo <= g[0] <= hi]
            picks.append(max(near, key=lambda g: g[1]) if near else None)
        return picks

    # candidate offsets: a gap's end minus a kill; the best explains most kills
    # with a gap ending within 60 ms of it, larger gaps first on a tie
    big = sorted(gaps, key=lambda g: -g[1])[: 4 * len(kills)]
    best, best_score = None, None
    for g in big:
        for k in kills:
            off = g[0] - k
            hits = [p for p in matched(off, (-60.0, 60.0)) if p]
            score = (len(hits), sum(p[1] for p in hits))
            if best_score is None or score > best_score:
                best, best_score = off, score
    picks = matched(best)
    pauses = [p[1] for p in picks if p]
    used = {p for p in picks if p}
    others = [g[1] for g in gaps if g not in used]
    print("kills %d, matched to a gap %d" % (len(kills), len(pauses)))
    print("pause per crash seen by the guest (ms): " + " ".join("%.1f" % p for p in pauses))
    if pauses:
        print("median %.1f ms, max %.1f ms" % (statistics.median(pauses), max(pauses)))
    print("largest gap without a kill: %.1f ms (of %d gaps > 2 ms)" % (max(others) if others else 0, len(gaps)))
    if resumed:
        print("service's 'resumed in' (crash seen → worker resumed): median %d ms, max %d ms (n=%d)"
              % (statistics.median(resumed), max(resumed), len(resumed)))


if __name__ == "__main__":
    main()

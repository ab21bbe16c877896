#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""cost-annotate.py N DIR_N DIR_2N [TOP] — where one iteration's instructions go.

DIR_N and DIR_2N hold the callgrind output files (cg/out.*) of two runs of
the same row, N and 2N iterations (bench/cost-run.sh --annotate makes
them).  Each function's self cost in the 2N run minus the N run, divided by
N, is what one iteration spends in it: start-up and set-up cancel out as
they do for the total.  Prints the TOP (default 30) largest, with the
inclusive cost (the function and what it calls) beside.
"""
import glob
import os
import re
import subprocess
import sys
from collections import Counter

LINE = re.compile(r'^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*?)(?:\s+\[[^\]]*\])?\s*$')


def costs(directory, inclusive):
    """function -> instructions, summed over every output file of a run"""
    total = Counter()
    for f in sorted(glob.glob(os.path.join(directory, 'cg', 'out.*'))):
        out = subprocess.run(['callgrind_annotate', '--auto=no', '--threshold=100',
                              '--inclusive=' + ('yes' if inclusive else 'no'), f],
                             capture_output=True, text=True, check=True).stdout
        table = False
        for line in out.splitlines():
            if 'file:function' in line:
                table = True
                continue
            if not table or line.startswith('-'):
                continue
            if not line.strip():
                if total:
                    break
                continue
            m = LINE.match(line)
            if m:
                name = m.group(2)
                # "/long/path/daemon/virtqueue.c:vq_pop" -> "virtqueue.c:vq_pop"
                if ':' in name:
                    path, func = name.rsplit(':', 1)
                    name = os.path.basename(path) + ':' + func
                total[name] += int(m.group(1).replace(',', ''))
    return total


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    n = int(sys.argv[1])
    top = int(sys.argv[4]) if len(sys.argv) == 5 else 30
    self_a, self_b = costs(sys.argv[2], False), costs(sys.argv[3], False)
    incl_a, incl_b = costs(sys.argv[2], True), costs(sys.argv[3], True)
    rows = []
    for name in set(self_a) | set(self_b):
        per = (self_b[name] - self_a[name]) / n
        if abs(per) >= 0.5:
            rows.append((per, (incl_b[name] - incl_a[name]) / n, name))
    rows.sort(reverse=True)
    print('| self / iteration | inclusive | function |')
    print('|---:|---:|---|')
    for per, incl, name in rows[:top]:
        print(f'| {per:,.1f} | {incl:,.1f} | {name} |')
    rest = sum(r[0] for r in rows[top:])
    if rows[top:]:
        print(f'| {rest:,.1f} | | ({len(rows) - top} more functions) |')
    print(f'| {sum(r[0] for r in rows):,.1f} | | total |')


if __name__ == '__main__':
    main()

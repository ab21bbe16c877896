#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gb-analyse.py RAW [REQUESTS] — summarises a traced bench/run.sh run (--trace).

For every RAW/SET.CONFIG.REP:
  .strace  (--trace strace)  system calls of the daemon, all threads: the total, the
           per-request count and the most frequent calls;
  .perf    (--trace perf)    perf stat: CPU ms, context switches, migrations, page
           faults, each also per request;
  .daemon  (--trace debug)   the requests the daemon logged, counted per opcode
           (sluice-fs -d, Rust virtiofsd --log-level debug, legacy virtiofsd -d).
Requests: sluice-fs's own counter (its SIGUSR1 dump); for the other daemons the
notifications they sent (write() calls on the call eventfd, from strace), else the
REQUESTS argument (e.g. sluice-fs's count for the same workload: the debug runs show
that every daemon gets the same requests for the same guest workload).
"""
import collections
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import read  # noqa: E402  (the same tolerant reader as the report)


def sluice_requests(daemon):
    dump = daemon.split("--- run-guest: SIGUSR1 (counters follow) ---")
    if len(dump) < 2:
        return None
    m = re.search(r"^\s+requests\s+(\d+)$", dump[-1], re.M)
    return int(m.group(1)) if m else None


def parse_strace(text):
    calls = {}
    for line in text.splitlines():
        parts = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(parts) >= 5 and re.match(r"^[0-9.]+$", parts[0]) and parts[-1] != "total":
            try:
                calls[parts[-1]] = int(parts[3])
            except ValueError:
                pass
    return calls


def parse_perf(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([0-9.,]+)\s+(?:msec\s+)?([a-z-]+)", line)
        if m:
            out[m.group(2)] = float(m.group(1).replace(",", ""))
    return out


OPCODE_RES = [
    re.compile(r"debug: unique=\d+ ([A-Z_]+) "),          # sluice-fs
    re.compile(r"Received request: opcode=([A-Za-z]+)"),   # Rust virtiofsd
    re.compile(r"unique: \d+, opcode: ([A-Z_]+) "),        # legacy virtiofsd
]


def opcodes(text):
    c = collections.Counter()
    for line in text.splitlines():
        for rx in OPCODE_RES:
            m = rx.search(line)
            if m:
                c[m.group(1).upper()] += 1
                break
    return c


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    raw = sys.argv[1]
    fallback = int(sys.argv[2]) if len(sys.argv) == 3 else None
    bases = sorted({re.sub(r"\.(console|daemon|status|strace|perf)$", "", p)
                    for p in glob.glob(os.path.join(raw, "*.*.*"))})
    perf_rows, strace_rows, op_rows = [], [], []
    for base in bases:
        name = os.path.basename(base)
        daemon = read(base + ".daemon")
        req = sluice_requests(daemon)
        st = parse_strace(read(base + ".strace")) if os.path.exists(base + ".strace") else None
        src = "counter"
        if req is None and st and st.get("write"):
            req, src = st["write"], "notifications"
        if req is None and fallback:
            req, src = fallback, "given"
        results = dict(re.findall(r"^RESULT (\S+) ([0-9.]+)", read(base + ".console"), re.M))
        figs = " ".join(f"{k} {float(v):.0f}" for k, v in results.items())
        if st:
            total = sum(st.values())
            top = sorted(st.items(), key=lambda kv: -kv[1])[:10]
            per = f"{total / req:.1f}" if req else "—"
            strace_rows.append(f"| {name} | {req or '—'} ({src}) | {total} | {per} | " +
                               ", ".join(f"{k} {v}" for k, v in top) + " |")
        if os.path.exists(base + ".perf"):
            p = parse_perf(read(base + ".perf"))

            def pr(key, scale=1.0):
                v = p.get(key)
                if v is None:
                    return "—"
                return f"{v:.0f}" + (f" ({v * scale / req:.2f})" if req else "")
            perf_rows.append(f"| {name} | {req or '—'} | {pr('task-clock', 1000)} | "
                             f"{pr('context-switches')} | {pr('cpu-migrations')} | {pr('page-faults')} | {figs} |")
        ops = opcodes(daemon)
        if ops:
            op_rows.append(f"| {name} | {sum(ops.values())} | " +
                           ", ".join(f"{k} {v}" for k, v in ops.most_common()) + " |")
    if op_rows:
        print("### Requests per opcode (debug logs)\n")
        print("| run | requests | per opcode |\n|---|---:|---|")
        print("\n".join(op_rows) + "\n")
    if strace_rows:
        print("### System calls (strace -c -f, all threads)\n")
        print("| run | requests | syscalls | per request | most frequent |\n|---|---:|---:|---:|---|")
        print("\n".join(strace_rows) + "\n")
    if perf_rows:
        print("### perf stat of the daemon (per request in brackets; CPU in ms, per request in µs)\n")
        print("| run | requests | CPU ms | context switches | migrations | page faults | figures |")
        print("|---|---:|---:|---:|---:|---:|---|")
        print("\n".join(perf_rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

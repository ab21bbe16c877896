#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bigtree-report.py RAW [--peers "A B"] [--meta FILE] — the tables of bench/bigtree.sh.

Reads RAW/PEER.REP.{params,samples,console,status} and prints, per phase, a
Markdown table: wall time median (min–max), daemon CPU median (min–max), the
CPU and wall ratios against Rust virtiofsd (< 1 = less than Rust), the peak
descriptors; then the runs that failed a phase.  The daemon CPU of 9p is
QEMU's threads other than the vCPU (its 9p server); QEMU's own CPU beside the
virtiofs daemons is given for scale.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys

PHASES = ["extract", "walk", "du", "grep", "rm"]
NAMES = {"sluice": "sluice-fs", "rust": "Rust virtiofsd", "virtiofsd": "legacy virtiofsd",
         "9p": "9p (QEMU)"}


def load(raw):
    runs = []
    for p in sorted(glob.glob(os.path.join(raw, "*.params"))):
        base = p[:-len(".params")]
        params = dict(kv.split("=", 1) for kv in open(p).read().split() if "=" in kv)
        run = {"base": base, "params": params, "phases": {}, "limits": None, "results": [],
               "fails": [], "errors": []}
        samples = []
        if os.path.exists(base + ".samples"):
            for line in open(base + ".samples"):
                try:
                    samples.append(json.loads(line))
                except ValueError:
                    pass
        start = {}
        for s in samples:
            if s["kind"] == "limits":
                run["limits"] = s
            if s["kind"] != "mark":
                continue
            w = s["mark"].split()
            name, what = w[0], w[1]
            if what == "start":
                start[name] = s
            elif what == "end" and name in start:
                a = start[name]
                tps = s.get("ticks_per_s", 100)
                ph = {"wall": s["t"] - a["t"],
                      "guest_wall": float(w[2]) - float(a["mark"].split()[2]),
                      "status": int(w[3]) if len(w) > 3 else None,
                      "daemon_cpu": (s["daemon_cpu"] - a["daemon_cpu"]) / tps,
                      "fds": s.get("peak_daemon_fds"), "qemu_fds": s.get("peak_qemu_fds"),
                      "vcsw": (s["daemon_vcsw"] - a["daemon_vcsw"]) if "daemon_vcsw" in a else None}
                if ("qemu_threads" in s and "qemu_threads" in a and s.get("qemu_cpu") is not None
                        and a.get("qemu_cpu") is not None and s["qemu_threads"]):
                    qt = (s["qemu_cpu"] - a["qemu_cpu"]) / tps
                    # The vCPU: the busiest thread other than the main loop's.
                    main_tid = str(s.get("qemu_pid"))
                    d = {t: v - a["qemu_threads"].get(t, 0) for t, v in s["qemu_threads"].items()
                         if t != main_tid}
                    qv = max(d.values()) / tps if d else 0
                    ph["qemu_cpu"], ph["qemu_other"] = qt, qt - qv
                if params.get("peer") == "9p":
                    ph["daemon_cpu"] = ph.get("qemu_other")
                    ph["fds"] = ph["qemu_fds"]
                gone = not s.get("qemu_fds")
                if gone:
                    # QEMU had gone when the host sampled the end mark: the
                    # daemon was exiting (closing its descriptors) or gone, so
                    # its CPU is not the phase's alone.
                    ph["daemon_cpu"] = None
                    ph["vcsw"] = None
                    ph.pop("qemu_other", None)
                run["phases"][name] = ph
        if os.path.exists(base + ".console"):
            for line in open(base + ".console", errors="replace"):
                line = line.strip("\r\n")
                if line.startswith("RESULT "):
                    run["results"].append(line[7:])
                elif line.startswith("FAIL "):
                    run["fails"].append(line[5:])
                elif line.startswith("INFO ") and "error line(s)" in line:
                    run["errors"].append(line[5:].replace(", first:", ""))
        runs.append(run)
    return runs


def fmt_s(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--peers", default="sluice rust virtiofsd 9p")
    ap.add_argument("--meta")
    a = ap.parse_args()
    runs = load(a.raw)
    peers = [p for p in a.peers.split() if any(r["params"].get("peer") == p for r in runs)]
    peers += sorted({r["params"].get("peer") for r in runs} - set(peers))
    print("# Big tree: linux-source-6.1 in a Linux 6.12 guest\n")
    if a.meta and os.path.exists(a.meta):
        print(open(a.meta).read().strip() + "\n")
    print("Wall: host clock between the guest's phase marks; CPU: utime+stime of the daemon's "
          "processes over the phase (9p: QEMU's threads other than the vCPU); medians of the "
          "repetitions whose phase ended with status 0, (min–max); ratios: sluice-fs / peer "
          "medians (CPU ≤ 0.7 is the target; wall > 1 = slower than the peer). Peak fds: the most "
          "descriptors the daemon held during the phase (counted every 5 s and at the marks).\n")
    print("Runs: " + "; ".join(
        f"{r['params'].get('peer')}.{r['params'].get('rep')} (nofile {r['params'].get('nofile')}, "
        f"drop every {r['params'].get('drop_every')} s"
        + (f", limits {r['limits']['daemon'] if r['limits'] else '?'}" if r["params"].get("peer") != "9p"
           else f", QEMU limit {r['limits']['qemu'] if r['limits'] else '?'}") + ")"
        for r in runs) + "\n")

    def done(ph, x):
        # xargs says 123 when some stat failed: the walk still did its work
        # (the failures are listed under the tables).
        return x["status"] == 0 or (ph == "walk" and x["status"] == 123)

    def by_rep(peer, ph):
        return {r["params"].get("rep"): r["phases"][ph] for r in runs
                if r["params"].get("peer") == peer and ph in r["phases"] and done(ph, r["phases"][ph])}

    def paired(peer, ph, key):
        """peer / Rust of the same repetition (neighbours in time), median (min–max)."""
        mine, rust = by_rep(peer, ph), by_rep("rust", ph)
        q = [mine[k][key] / rust[k][key] for k in mine
             if k in rust and mine[k][key] is not None and rust[k][key]]
        if not q:
            return "–"
        return f"{statistics.median(q):.2f} ({min(q):.2f}–{max(q):.2f}, {len(q)})"

    def ok_runs(peer, ph):
        return [r["phases"][ph] for r in runs
                if r["params"].get("peer") == peer and ph in r["phases"] and done(ph, r["phases"][ph])]

    def med(vals):
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    for ph in PHASES:
        print(f"## {ph}\n")
        print("| peer | n | wall s median (min–max) | daemon CPU s median (min–max) | CPU vs Rust "
              "| wall vs Rust | CPU vs Rust, same rep: median (min–max, n) | wall vs Rust, same rep "
              "| peak fds | QEMU CPU s (non-vCPU) | daemon sleeps (vol. cs) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        rust_w = med([x["wall"] for x in ok_runs("rust", ph)])
        rust_c = med([x["daemon_cpu"] for x in ok_runs("rust", ph)])
        for peer in peers:
            xs = ok_runs(peer, ph)
            failed = sum(1 for r in runs if r["params"].get("peer") == peer
                         and ph in r["phases"] and not done(ph, r["phases"][ph]))
            if not xs:
                print(f"| {NAMES.get(peer, peer)} | 0 | failed ({failed}) | | | | | | | | |")
                continue
            w = [x["wall"] for x in xs]
            c = [x["daemon_cpu"] for x in xs if x["daemon_cpu"] is not None]
            mw, mc = med(w), med(c)
            nc = f" (CPU of {len(c)})" if len(c) != len(xs) else ""
            cr = f"{mc / rust_c:.2f}" if rust_c and mc is not None else "–"
            wr = f"{mw / rust_w:.2f}" if rust_w else "–"
            fds = max(x["fds"] or 0 for x in xs)
            qo = med([x.get("qemu_other") for x in xs])
            print(f"| {NAMES.get(peer, peer)} | {len(xs)}{f' (+{failed} failed)' if failed else ''}{nc} "
                  f"| {fmt_s(mw)} ({fmt_s(min(w))}–{fmt_s(max(w))}) "
                  f"| {fmt_s(mc) if mc is not None else '–'}"
                  f"{f' ({fmt_s(min(c))}–{fmt_s(max(c))})' if c else ''} | {cr} | {wr} "
                  f"| {paired(peer, ph, 'daemon_cpu')} | {paired(peer, ph, 'wall')} | {fds} "
                  f"| {fmt_s(qo) if qo is not None else '–'} "
                  f"| {int(med([x.get('vcsw') for x in xs])) if med([x.get('vcsw') for x in xs]) is not None else '–'} |")
        print()
    print("## Checks and failures\n")
    for r in runs:
        tag = f"{r['params'].get('peer')}.{r['params'].get('rep')}"
        bits = [", ".join(r["results"])] if r["results"] else []
        if r["fails"]:
            bits.append("FAIL: " + "; ".join(r["fails"]))
        if r["errors"]:
            bits.append("; ".join(r["errors"]))
        missing = [p for p in PHASES if p not in r["phases"]]
        if missing:
            bits.append("no marks for " + ",".join(missing))
        print(f"- {tag}: " + (" — ".join(bits) if bits else "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""report.py — turns bench/run.sh's raw logs into results.md and results.json.

Reads RAW/SET.CONFIG.REP.console (RESULT/INFO lines of guest-bench),
RAW/SET.CONFIG.REP.daemon (sluice-fs's SIGUSR1 counters and the wrapper's
"bench-cpu" lines, for sluice-fs and Rust virtiofsd) and RAW/SET.CONFIG.REP.status
(run-guest.sh's verdict).  Every figure is the median over the repetitions; "±" is
half the range relative to the median, a rough measure of how noisy that figure was.
Ratios are normalised so that > 1 always means sluice-fs did better:
sluice-fs / peer for rates (MiB/s, IOPS), peer / sluice-fs for costs (µs/op, s).
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys

# name, unit, higher is better, description
FIGURES = [
    ("stat", "µs/op", False, "cold stat (caches dropped: one LOOKUP per name)"),
    ("create", "µs/op", False, "open(O_CREAT|O_EXCL) + close of an empty file"),
    ("unlink", "µs/op", False, "unlink of an empty file"),
    ("seq_write", "MiB/s", True, "1 MiB writes + fsync"),
    ("seq_read", "MiB/s", True, "1 MiB reads after dropping caches"),
    ("randread", "IOPS", True, "4 KiB pread, O_DIRECT, random offsets, one at a time"),
    ("randwrite", "IOPS", True, "4 KiB pwrite, O_DIRECT, random offsets, one at a time"),
    ("randwrite_jobs", "IOPS", True, "4 KiB pwrite, O_DIRECT, in 2 jobs (own file each), one at a time each"),
    ("tree_extract", "s", False, "build: write a tree of small files"),
    ("tree_build", "s", False, "build: readdir+stat all, read each source, write an object"),
    ("tree_rm", "s", False, "build: remove the tree"),
    ("tree_total", "s", False, "build: the three steps"),
]

LABELS = {
    "sluice": "sluice-fs",
    "sluice-always": "sluice-fs cache=always",
    "sluice-poll0": "sluice-fs poll 0",
    "sluice-poll200": "sluice-fs poll 200",
    "sluice-q1": "sluice-fs 1 queue",
    "sluice-q2": "sluice-fs 2 queues",
    "sluice-q2-poll0": "sluice-fs 2 queues poll 0",
    "rust": "Rust virtiofsd",
    "virtiofsd": "legacy virtiofsd",
    "9p-mmap": "9p mmap",
    "9p-loose": "9p loose",
}
# The order of the columns; the sluice-fs configuration the ratios are about (per set)
# and the peers it is compared with, the one that matters first.
ORDER = ["sluice", "sluice-q2", "sluice-poll0", "sluice-q2-poll0", "sluice-q1", "sluice-always",
         "sluice-poll200", "rust", "virtiofsd", "9p-mmap", "9p-loose"]
PEERS = ["rust", "virtiofsd", "9p-mmap", "9p-loose"]
SET_TITLES = {
    "6.1": "Linux 6.1 guest (Debian 12), 1 vCPU, 1 request queue",
    "6.12": "Linux 6.12 guest (Debian 13), 1 vCPU, 1 request queue",
    "mq": "Linux 6.12 guest, 2 vCPUs: 4 KiB random writes, 1 job and 2 jobs",
}


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def parse_run(raw, set_, config, rep):
    base = os.path.join(raw, f"{set_}.{config}.{rep}")
    run = {"rep": rep, "ok": False, "results": {}, "info": [], "counters": {}, "cpu_s": None}
    status = read(base + ".status")
    run["ok"] = "1 PASS, 0 FAIL" in status and "FAIL:" not in status
    m = re.search(r"guest ran ([0-9.]+) s", status)
    run["guest_s"] = float(m.group(1)) if m else None
    for line in read(base + ".console").splitlines():
        line = line.strip()
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "RESULT":
            try:
                run["results"][parts[1]] = float(parts[2])
            except ValueError:
                pass
        elif parts and parts[0] in ("INFO", "FAIL"):
            run["info"].append(line)
        m = re.match(r"INFO guest kernel (\S+),", line)
        if m:
            run["guest_kernel"] = m.group(1)
    daemon = read(base + ".daemon")
    # Only the block that follows run-guest's SIGUSR1 marker: the counters at the end.
    dump = daemon.split("--- run-guest: SIGUSR1 (counters follow) ---")
    if len(dump) > 1:
        for line in dump[-1].splitlines():
            m = re.match(r"\s+([A-Za-z0-9_-]+)\s+(\d+)$", line)
            if m:
                run["counters"][m.group(1)] = int(m.group(2))
    m = re.search(r"bench-cpu \(times.*\n.*\n(\d+)m([0-9.]+)s (\d+)m([0-9.]+)s", daemon)
    if m:
        run["cpu_s"] = 60 * int(m.group(1)) + float(m.group(2)) + 60 * int(m.group(3)) + float(m.group(4))
    return run


def queue_totals(counters):
    """Request queues only (queue0 is hiprio: FORGETs, no synchronous waits)."""
    tot = {k: 0 for k in ("requests", "kicks", "polled", "batches", "poll-refused")}
    per_queue = {}
    for key, value in counters.items():
        m = re.match(r"queue(\d+)-(requests|kicks|polled|batches|poll-refused)$", key)
        if m and int(m.group(1)) >= 1:
            tot[m.group(2)] += value
            if m.group(2) == "requests":
                per_queue[int(m.group(1))] = value
    tot["per_queue"] = [per_queue[q] for q in sorted(per_queue)]
    return tot


def summary(values, higher=None):
    """Median, spread and (for figures) the best repetition."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    med = statistics.median(values)
    spread = (max(values) - min(values)) / 2 / med if med else 0.0
    out = {"median": med, "spread": spread, "values": values}
    if higher is not None:
        out["best"] = max(values) if higher else min(values)
    return out


def fmt(v):
    if v is None:
        return "—"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def cell(s):
    if not s:
        return "—"
    return f"{fmt(s['median'])} ±{s['spread'] * 100:.0f}%"


def ratio(ours, peer, higher, key="median"):
    if not ours or not peer or not ours[key] or not peer[key]:
        return None
    return ours[key] / peer[key] if higher else peer[key] / ours[key]


def noise_verdict(ours, peer, higher):
    """'ahead', 'behind' or 'level': ahead/behind only when the ranges do not overlap."""
    if not ours or not peer:
        return None
    lo_o, hi_o = min(ours["values"]), max(ours["values"])
    lo_p, hi_p = min(peer["values"]), max(peer["values"])
    if not higher:
        lo_o, hi_o, lo_p, hi_p = -hi_o, -lo_o, -hi_p, -lo_p
    if lo_o > hi_p:
        return "ahead"
    if hi_o < lo_p:
        return "behind"
    return "level"


def set_table(md, set_, data, reps, key):
    configs = [c for c in ORDER if c in data]
    ours = "sluice-q2" if set_ == "mq" and "sluice-q2" in data else "sluice"
    if ours not in data:
        ours = next((c for c in configs if c.startswith("sluice")), None)
    refs = [c for c in configs if c.startswith("sluice")]
    peers = [p for p in PEERS if p in data]
    names = [f for f in FIGURES if any(data[c]["figures"].get(f[0]) for c in configs)]
    # Ratio columns: our main configuration vs each peer; the other sluice-fs
    # configurations vs Rust virtiofsd (the peer that matters).
    cols = [(ours, p) for p in peers]
    if "rust" in data:
        cols += [(c, "rust") for c in refs if c != ours]
    if set_ == "mq" and "sluice-q1" in data and ours != "sluice-q1":
        cols.append((ours, "sluice-q1"))
    head = ["figure", "unit"] + [data[c]["label"] for c in configs] + \
           [f"{data[a]['label']} vs {data[b]['label']}" for a, b in cols]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|")
    ratios = {}
    for name, unit, higher, _ in names:
        row = [name, unit + (" ↑" if higher else " ↓")]
        for c in configs:
            f = data[c]["figures"].get(name)
            row.append(cell(f) if key == "median" else fmt(f["best"] if f else None))
        for a, b in cols:
            fa, fb = data[a]["figures"].get(name), data[b]["figures"].get(name)
            r = ratio(fa, fb, higher, key)
            v = noise_verdict(fa, fb, higher) if key == "median" and reps > 1 else None
            ratios.setdefault(f"{a} vs {b}", {})[name] = {"ratio": r, "ranges": v}
            text = "—" if r is None else f"{r:.2f}×"
            if v == "ahead":
                text = f"**{text}**"
            elif v == "behind":
                text = f"_{text}_"
            row.append(text)
        md.append("| " + " | ".join(row) + " |")
    return ratios


def counters_table(md, data):
    rows = [c for c in ORDER if c in data and (data[c]["queue_counters"] or data[c]["daemon_cpu_s"])]
    if not rows:
        return
    md.append("")
    md.append("Daemon side, whole guest run (medians): requests on the request queues, kicks "
              "(wake-ups by a guest notification), polled (picked up by the busy-poll without one), "
              "polls refused (spins skipped or cut short for want of a spare CPU, from the hotpath fix on), "
              "requests per queue; CPU = the daemon's user+system time (sluice-fs and Rust virtiofsd).")
    md.append("")
    md.append("| daemon | requests | kicks | polled % | polls refused | per queue | daemon CPU s |")
    md.append("|---|---:|---:|---:|---:|---|---:|")
    for c in rows:
        d = data[c]
        q = d["queue_counters"] or {}
        med = {k: (q[k]["median"] if q.get(k) else None) for k in ("requests", "kicks", "polled", "poll-refused")}
        pct = 100 * med["polled"] / med["requests"] if med["requests"] and med["polled"] is not None else None
        pq = d.get("per_queue") or []
        md.append("| " + " | ".join([
            d["label"], fmt(med["requests"]), fmt(med["kicks"]),
            "—" if pct is None else f"{pct:.1f}", fmt(med["poll-refused"]), " / ".join(str(x) for x in pq) or "—",
            cell(d["daemon_cpu_s"])]) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sets", required=True, help="'SET=CONFIG,CONFIG SET=…'")
    ap.add_argument("--reps", type=int, required=True)
    ap.add_argument("--workload", default="")
    ap.add_argument("--mq-workload", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--versions", default="")
    ap.add_argument("--trace", default="none")
    ap.add_argument("--user", default="")
    a = ap.parse_args()

    sets = []
    for item in a.sets.split():
        name, _, cs = item.partition("=")
        sets.append((name, [c for c in cs.split(",") if c]))

    all_data = {}
    kernels = set()
    for set_, configs in sets:
        data = {}
        for c in configs:
            runs = [parse_run(a.raw, set_, c, r) for r in range(1, a.reps + 1)]
            good = [r for r in runs if r["ok"]]
            kernels.update(r["guest_kernel"] for r in good if r.get("guest_kernel"))
            figs = {f[0]: summary([r["results"].get(f[0]) for r in good], f[2]) for f in FIGURES}
            totals = [queue_totals(r["counters"]) for r in good if r["counters"]]
            counters = {k: summary([t[k] for t in totals])
                        for k in ("requests", "kicks", "polled", "batches", "poll-refused")}
            per_queue = None
            if totals:
                nq = max(len(t["per_queue"]) for t in totals)
                per_queue = [round(statistics.median([t["per_queue"][i] for t in totals if len(t["per_queue"]) > i]))
                             for i in range(nq)]
            ops = {}
            for r in good:
                for k, v in r["counters"].items():
                    if k.startswith("op-"):
                        ops.setdefault(k[3:], []).append(v)
            data[c] = {
                "label": LABELS.get(c, c),
                "runs": runs,
                "ok_runs": len(good),
                "figures": figs,
                "queue_counters": counters if totals else None,
                "per_queue": per_queue,
                "ops": {k: statistics.median(v) for k, v in ops.items()},
                "daemon_cpu_s": summary([r["cpu_s"] for r in good]),
                "guest_s": summary([r["guest_s"] for r in good]),
            }
        all_data[set_] = data

    now = datetime.datetime.now().astimezone()
    md = [f"# sluice-fs guest benchmark — {now:%Y-%m-%d %H:%M %Z}", ""]
    md.append(f"Machine: {a.machine}. Guests: TCG, 512 MiB, the tests/guest image "
              f"(kernels {', '.join(sorted(kernels)) or '?'}). Versions: {a.versions}. "
              f"Workload: guest-bench {a.workload} (mq set: {a.mq_workload}). "
              f"Medians of {a.reps} interleaved repetition(s); ± is half the range. "
              f"sluice-fs and Rust virtiofsd ran as user {a.user}.")
    if a.trace in ("strace", "debug"):
        md.append("")
        md.append(f"**Traced run (--trace {a.trace}): the daemons were slowed down by the tracing; "
                  "the figures below mean nothing, the counts do.**")
    failed = [f"{s}/{c} ({len(d['runs']) - d['ok_runs']} of {len(d['runs'])})"
              for s, data in all_data.items() for c, d in data.items() if d["ok_runs"] < len(d["runs"])]
    if failed:
        md.append("")
        md.append("**Failed runs (left out of the medians):** " + ", ".join(failed) + "; see raw/*.status.")
    md.append("")
    md.append("Ratios: > 1 means the first-named did better (it / peer for MiB/s and IOPS, peer / it "
              "for µs/op and s). **Bold**: ahead with the ranges of the repetitions apart; _italic_: "
              "behind with the ranges apart; plain: within the noise. ↑ higher is better, ↓ lower.")
    ratios = {}
    for set_, _ in sets:
        data = all_data[set_]
        md.append("")
        md.append(f"## {SET_TITLES.get(set_, set_)}")
        md.append("")
        ratios[set_] = {"median": set_table(md, set_, data, a.reps, "median")}
        if a.reps > 1:
            md.append("")
            md.append(f"Best of {a.reps} (noise only ever slows a run down):")
            md.append("")
            ratios[set_]["best"] = set_table(md, set_, data, a.reps, "best")
        counters_table(md, data)

    notes = sorted({i for data in all_data.values() for d in data.values() for r in d["runs"]
                    for i in r["info"] if "direct=0" in i or i.startswith("FAIL")})
    if notes:
        md.append("")
        md.append("Notes from the guest: " + "; ".join(notes))
    md.append("")

    with open(os.path.join(a.out, "results.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    with open(os.path.join(a.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({
            "date": now.isoformat(timespec="seconds"),
            "machine": a.machine,
            "versions": a.versions,
            "guest_kernels": sorted(kernels),
            "workload": a.workload,
            "mq_workload": a.mq_workload,
            "reps": a.reps,
            "trace": a.trace,
            "user": a.user,
            "figures": [{"name": n, "unit": u, "higher_is_better": h, "what": w} for n, u, h, w in FIGURES],
            "sets": all_data,
            "ratios": ratios,
        }, f, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

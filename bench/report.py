#!/usr/bin/env python3
"""report.py — turns bench/run.sh's raw logs into results.md and results.json.

Reads RAW/CONFIG.REP.console (RESULT/INFO lines of guest-bench),
RAW/CONFIG.REP.daemon (sluice-fs's SIGUSR1 counters and the wrapper's
"bench-cpu:" line) and RAW/CONFIG.REP.status (run-guest.sh's verdict).
Every figure is the median over the repetitions; "±" is half the range
relative to the median, a rough measure of how noisy that figure was.
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
    "virtiofsd": "virtiofsd (legacy)",
    "9p-mmap": "9p mmap",
    "9p-loose": "9p loose",
}
POLL_US = {"sluice-poll0": 0, "sluice": 50, "sluice-always": 50, "sluice-poll200": 200}
MAIN = ["sluice", "sluice-always", "virtiofsd", "9p-mmap", "9p-loose"]
POLL = ["sluice-poll0", "sluice", "sluice-poll200", "sluice-always"]
PEERS = ["virtiofsd", "9p-mmap", "9p-loose"]


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def parse_run(raw, config, rep):
    base = os.path.join(raw, f"{config}.{rep}")
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
    daemon = read(base + ".daemon")
    # Only the block that follows run-guest's SIGUSR1 marker: the counters at the end.
    dump = daemon.split("--- run-guest: SIGUSR1 (counters follow) ---")
    if len(dump) > 1:
        for line in dump[-1].splitlines():
            m = re.match(r"\s+([a-z0-9-]+)\s+(\d+)$", line)
            if m:
                run["counters"][m.group(1)] = int(m.group(2))
    m = re.search(r"bench-cpu \(times.*\n.*\n(\d+)m([0-9.]+)s (\d+)m([0-9.]+)s", daemon)
    if m:
        run["cpu_s"] = 60 * int(m.group(1)) + float(m.group(2)) + 60 * int(m.group(3)) + float(m.group(4))
    return run


def queue_totals(counters):
    """Request queues only (queue0 is hiprio: FORGETs, no synchronous waits)."""
    tot = {k: 0 for k in ("requests", "kicks", "polled", "batches")}
    for key, value in counters.items():
        m = re.match(r"queue(\d+)-(requests|kicks|polled|batches)$", key)
        if m and int(m.group(1)) >= 1:
            tot[m.group(2)] += value
    return tot


def summary(values, higher=None):
    """Median, spread and (for figures) the best repetition: on a shared machine noise
    only ever slows a run down, so the best one is the closest to the real cost."""
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--reps", type=int, required=True)
    ap.add_argument("--workload", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--user", default="")
    a = ap.parse_args()

    configs = a.configs.split()
    data = {}
    for c in configs:
        runs = [parse_run(a.raw, c, r) for r in range(1, a.reps + 1)]
        good = [r for r in runs if r["ok"]]
        figs = {f[0]: summary([r["results"].get(f[0]) for r in good], f[2]) for f in FIGURES}
        totals = [queue_totals(r["counters"]) for r in good if r["counters"]]
        counters = {k: summary([t[k] for t in totals]) for k in ("requests", "kicks", "polled", "batches")}
        data[c] = {
            "label": LABELS.get(c, c),
            "runs": runs,
            "ok_runs": len(good),
            "figures": figs,
            "queue_counters": counters if totals else None,
            "daemon_cpu_s": summary([r["cpu_s"] for r in good]),
            "guest_s": summary([r["guest_s"] for r in good]),
        }

    now = datetime.datetime.now().astimezone()
    md = []
    md.append(f"# sluice-fs benchmark — {now:%Y-%m-%d %H:%M %Z}")
    md.append("")
    md.append(f"Machine: {a.machine}. Guest: TCG, 1 vCPU, 512 MiB, the tests/guest image. "
              f"Workload: guest-bench {a.workload}. Medians of {a.reps} interleaved repetition(s); "
              f"± is half the range. sluice-fs ran as user {a.user}.")
    failed = [f"{c} ({len(d['runs']) - d['ok_runs']} of {len(d['runs'])})"
              for c, d in data.items() if d["ok_runs"] < len(d["runs"])]
    if failed:
        md.append("")
        md.append("**Failed runs (left out of the medians):** " + ", ".join(failed) +
                  "; see raw/*.status.")
    md.append("")
    md.append("Ratios: > 1 means sluice-fs (default options) did better "
              "(sluice-fs / peer for MiB/s and IOPS, peer / sluice-fs for µs/op and s).")
    md.append("")
    main_cols = [c for c in MAIN if c in data]
    peer_cols = [p for p in PEERS if p in data and "sluice" in data]
    ratios = {}
    # With one repetition the best is the median: one table is enough.
    for key in ("median", "best") if a.reps > 1 else ("median",):
        if key == "best":
            md.append("")
            md.append(f"### Best of {a.reps}")
            md.append("")
            md.append("The best repetition of each (noise on a shared machine only ever slows a run "
                      "down, so this is the closer estimate of what each backend costs when the machine "
                      "is quiet); ratios the same way.")
            md.append("")
        head = ["figure", "unit"] + [data[c]["label"] for c in main_cols] + \
               [f"sluice-fs vs {data[p]['label']}" for p in peer_cols]
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|")
        for name, unit, higher, _ in FIGURES:
            row = [name, unit + (" ↑" if higher else " ↓")]
            for c in main_cols:
                f = data[c]["figures"][name]
                row.append(cell(f) if key == "median" else fmt(f["best"] if f else None))
            for p in peer_cols:
                r = ratio(data["sluice"]["figures"][name], data[p]["figures"][name], higher, key)
                ratios.setdefault(key, {}).setdefault(p, {})[name] = r
                row.append("—" if r is None else f"{r:.2f}×")
            md.append("| " + " | ".join(row) + " |")
        if key == "median":
            md.append("")
            md.append("↑ higher is better, ↓ lower is better.")

    poll_cols = [c for c in POLL if c in data]
    if poll_cols:
        md.append("")
        md.append("## Busy-poll (--poll-us) and the request-queue counters")
        md.append("")
        md.append("Counters from sluice-fs's SIGUSR1 dump, request queues only, whole guest run "
                  "(medians): a *kick* is a wake-up by a guest notification, *polled* a request picked "
                  "up while busy-polling without one, a *batch* one drain of the ring. "
                  "CPU is the daemon's user+system time for the whole run.")
        md.append("")
        head = ["sluice-fs", "poll µs", "requests", "kicks", "polled", "polled %", "req/batch",
                "daemon CPU s", "stat µs", "create µs", "randread IOPS", "randwrite IOPS", "build s"]
        md.append("| " + " | ".join(head) + " |")
        md.append("|---|" + "|".join(["---:"] * (len(head) - 1)) + "|")
        for c in poll_cols:
            d = data[c]
            q = d["queue_counters"] or {}
            med = {k: (q[k]["median"] if q.get(k) else None) for k in ("requests", "kicks", "polled", "batches")}
            pct = 100 * med["polled"] / med["requests"] if med["requests"] and med["polled"] is not None else None
            rpb = med["requests"] / med["batches"] if med["requests"] and med["batches"] else None
            f = d["figures"]
            row = [d["label"], str(POLL_US[c]),
                   fmt(med["requests"]), fmt(med["kicks"]), fmt(med["polled"]),
                   "—" if pct is None else f"{pct:.1f}", "—" if rpb is None else f"{rpb:.2f}",
                   cell(d["daemon_cpu_s"]), cell(f["stat"]), cell(f["create"]),
                   cell(f["randread"]), cell(f["randwrite"]), cell(f["tree_total"])]
            md.append("| " + " | ".join(row) + " |")

    notes = sorted({i for d in data.values() for r in d["runs"] for i in r["info"]
                    if "direct=0" in i or i.startswith("FAIL")})
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
            "workload": a.workload,
            "reps": a.reps,
            "sluice_user": a.user,
            "figures": [{"name": n, "unit": u, "higher_is_better": h, "what": w} for n, u, h, w in FIGURES],
            "configs": data,
            "ratios_sluice_vs": ratios,
        }, f, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

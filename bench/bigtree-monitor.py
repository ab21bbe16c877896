#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bigtree-monitor.py — the host side of one big-tree guest (see bench/bigtree.sh).

Watches the guest console for the workload's "BIGTREE-MARK NAME start|end ..."
lines and, at each, writes one JSON line with the host's clock, the CPU time
(utime + stime from /proc/PID/stat, all threads, in clock ticks) and the open
descriptors of the daemon's processes and of QEMU (QEMU split into its vCPU
threads and the rest: for 9p the rest is the 9p server).  Every few seconds it
also counts the descriptors, so that each phase's peak is known.  The daemon's
processes are the ones whose command line names the shared folder
(--shared-dir=DIR, source=DIR); QEMU is the one writing the console file.

Ends when QEMU has gone (or after --timeout seconds).
"""
import argparse
import json
import os
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None


def pids_matching(pred):
    out = []
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        args = cmdline(d)
        if args and pred(args):
            out.append(int(d))
    return sorted(out)


def stat_fields(path):
    """(comm, fields after comm) of a /proc stat file; comm may hold spaces."""
    with open(path) as f:
        s = f.read()
    lp, rp = s.index("("), s.rindex(")")
    return s[lp + 1:rp], s[rp + 2:].split()


def cpu_ticks(pid):
    try:
        _, f = stat_fields(f"/proc/{pid}/stat")
        return int(f[11]) + int(f[12])   # utime, stime (fields 14, 15)
    except (OSError, ValueError):
        return None


def utime_ticks(pid):
    try:
        _, f = stat_fields(f"/proc/{pid}/stat")
        return int(f[11])
    except (OSError, ValueError):
        return None


def qemu_threads(pid):
    """ticks of each QEMU thread: QEMU names no threads unless told
    (debug-threads), so the report takes the busiest one other than the main
    loop's for the vCPU."""
    out = {}
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                _, f = stat_fields(f"/proc/{pid}/task/{t}/stat")
            except (OSError, ValueError):
                continue
            out[t] = int(f[11]) + int(f[12])
    except OSError:
        pass
    return out


def ctx_switches(pid):
    """voluntary and involuntary context switches of all the threads of pid:
    with one request at a time, a daemon that sleeps between requests pays a
    wake-up for each."""
    vol = invol = 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            vol += int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches:"):
                            invol += int(line.split()[1])
            except OSError:
                continue
    except OSError:
        pass
    return vol, invol


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def nofile(pid):
    try:
        with open(f"/proc/{pid}/limits") as f:
            for line in f:
                if line.startswith("Max open files"):
                    p = line.split()
                    return f"{p[3]}/{p[4]}"
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--console", required=True)
    ap.add_argument("--share", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--fd-every", type=float, default=5.0)
    ap.add_argument("--no-daemon", action="store_true", help="9p: QEMU serves the share")
    a = ap.parse_args()
    is9p = a.no_daemon

    share = os.path.realpath(a.share)
    daemon_args = {f"--shared-dir={share}", f"source={share}", f"--shared-dir={a.share}",
                   f"source={a.share}"}
    console_arg = f"file:{a.console}"

    def is_daemon(args):
        return any(x in daemon_args for x in args) and not any("bigtree-monitor" in x for x in args)

    def is_qemu(args):
        return "qemu-system" in args[0] and any(console_arg in x for x in args)

    out = open(a.out, "a", buffering=1)

    def emit(rec):
        rec["t"] = round(time.monotonic(), 3)
        out.write(json.dumps(rec) + "\n")

    deadline = time.monotonic() + a.timeout
    daemons, qemu, seen_qemu = [], None, False
    limits_done = False
    pos = 0
    partial = b""
    last_fd = 0.0
    peak = {"daemon_fds": 0, "qemu_fds": 0}
    dead_cpu = {}   # last CPU seen of daemon processes that have gone
    last_cpu = {}

    def daemon_cpu():
        total = 0
        for p in daemons:
            c = cpu_ticks(p)
            if c is not None:
                last_cpu[p] = c
        for p, c in last_cpu.items():
            total += c
        return total

    def sample(kind, **extra):
        nonlocal peak
        dfd = sum(fd_count(p) or 0 for p in daemons)
        qfd = fd_count(qemu) if qemu else None
        peak["daemon_fds"] = max(peak["daemon_fds"], dfd)
        if qfd:
            peak["qemu_fds"] = max(peak["qemu_fds"], qfd)
        rec = {"kind": kind, "daemon_cpu": daemon_cpu(), "daemon_fds": dfd,
               "daemon_pids": daemons, "qemu_fds": qfd, "peak_daemon_fds": peak["daemon_fds"],
               "peak_qemu_fds": peak["qemu_fds"], "ticks_per_s": TICKS}
        if qemu:
            rec["qemu_cpu"] = cpu_ticks(qemu)
            rec["qemu_pid"] = qemu
            if kind == "mark":
                rec["qemu_threads"] = qemu_threads(qemu)
        if kind == "mark":
            cs = [ctx_switches(p) for p in daemons]
            rec["daemon_vcsw"] = sum(c[0] for c in cs)
            rec["daemon_ivcsw"] = sum(c[1] for c in cs)
            rec["daemon_utime"] = sum(utime_ticks(p) or 0 for p in daemons)
        rec.update(extra)
        emit(rec)
        return rec

    last_scan = 0.0
    while time.monotonic() < deadline:
        # Processes: the daemon may fork (Rust virtiofsd's sandbox) or restart.
        # A scan of /proc costs: often until both are found, then every 5 s.
        if time.monotonic() - last_scan >= (5.0 if (daemons or is9p) and qemu else 0.2):
            last_scan = time.monotonic()
            for p in pids_matching(is_daemon):
                if p not in daemons:
                    daemons.append(p)
            if qemu is None:
                q = pids_matching(is_qemu)
                if q:
                    qemu, seen_qemu = q[0], True
        if not limits_done and (daemons or is9p) and qemu:
            limits_done = True
            emit({"kind": "limits", "daemon": {str(p): nofile(p) for p in daemons},
                  "qemu": nofile(qemu),
                  "daemon_cmd": [" ".join(cmdline(p) or []) for p in daemons]})
        # New console lines.
        try:
            with open(a.console, "rb") as f:
                f.seek(pos)
                chunk = f.read()
                pos += len(chunk)
        except OSError:
            chunk = b""
        data = partial + chunk
        lines = data.split(b"\n")
        partial = lines.pop()
        for raw in lines:
            line = raw.decode(errors="replace").strip("\r ")
            i = line.find("BIGTREE-MARK ")
            if i >= 0:
                sample("mark", mark=line[i + len("BIGTREE-MARK "):])
                peak = {"daemon_fds": 0, "qemu_fds": 0}   # peaks per phase
        now = time.monotonic()
        if now - last_fd >= a.fd_every and (daemons or qemu):
            last_fd = now
            sample("fds")
        if seen_qemu and qemu and not os.path.exists(f"/proc/{qemu}"):
            emit({"kind": "qemu-gone"})
            return 0
        time.sleep(0.2)
    emit({"kind": "timeout"})
    return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: an idle desktop's Sluice sleeps.  With shares running and
nobody looking, neither sluice-service nor its sluice-fs workers wake up;
stats are sampled only for the shares a client watches, and only while it
is on the bus.

    test-idle.py CASE      (CASE: see CASES at the bottom)

  idle-shares     20 running shares, no VM, no client: the service and the
                  20 workers together make at most a handful of voluntary
                  context switches in 10 s.  A `sluicectl stats --watch` on
                  one share: that share's Stats follow its traffic, another
                  share's do not; the watcher killed (no UnwatchStats): the
                  sampling stops.

Wake-ups are counted, not timed: voluntary_ctxt_switches in
/proc/PID/task/*/status grows by one each time a thread sleeps.  Anything
periodic (a sampling timer: 20 shares x 5 samples a second here) makes
hundreds in the window however loaded the machine is, and nothing periodic
makes ~0 however slow it is; the limits leave room for a stray wake-up (a
late reply to the test's last call) but not for a timer.
Runs against the real service on test-service.py's private bus (Env).
"""
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for = st.Failure, st.check, st.wait_for

SHARES = 20
WINDOW_S = 10
# the budget, 30 in 30 s for the whole stack, scaled to the window
IDLE_LIMIT = 10
SHARE_IFACE = "org.sluice.Sluice1.Share"


def thread_counts(pids):
    """{tid: voluntary context switches} of every thread of pids."""
    counts = {}
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            counts[tid] = int(line.split()[1])
            except OSError:
                pass
    return counts


def wakeups_in(pids, seconds):
    """Wake-ups in a window, thread by thread: a thread new in the window
    counts from 0 (one that ended in it is lost with its count)."""
    before = thread_counts(pids)
    time.sleep(seconds)  # the window counted, not a wait for something
    return sum(n - before.get(tid, 0) for tid, n in thread_counts(pids).items())


def requests(env, tag):
    """The "requests" counters in Share.Stats as the service last published
    it (the share's and its queues', summed: a property read samples
    nothing), or None when Stats is empty."""
    path = env.share(tag)["object_path"]
    r = env.gdbus_call(path, "org.freedesktop.DBus.Properties.Get", SHARE_IFACE, "Stats")
    found = re.findall(r"'requests': <(?:uint64 )?(\d+)>", r.stdout)
    return sum(int(n) for n in found) if found else None


def case_idle_shares(env):
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    service = env.start_service()
    for i in range(1, SHARES + 1):
        env.mkdir("share", f"s{i}")
        env.ctl("add", env.path("share", f"s{i}"), "--tag", f"s{i}", "--no-autostart")
        env.ctl("start", f"s{i}")
    wait_for(lambda: all(s["state"] == "running" for s in env.ctl_json("list")), 120,
             f"{SHARES} shares to run")
    workers = env.worker_pids()
    check(len(workers) == SHARES, f"workers: {workers}")
    # Each share samples its worker once when it starts: wait until those are in.
    wait_for(lambda: all(requests(env, f"s{i}") is not None for i in range(1, SHARES + 1)), 60,
             "every share's first sample")
    pids = [service.pid] + workers
    idle = wakeups_in(pids, WINDOW_S)
    check(idle <= IDLE_LIMIT,
          f"the service and {SHARES} idle workers woke up {idle} times in {WINDOW_S} s (limit {IDLE_LIMIT})")
    print(f"idle: {idle} wake-ups of the service and {SHARES} workers in {WINDOW_S} s")

    # A client watches s1: s1's Stats follow its traffic, s2's (unwatched) stay.
    sock1, sock2 = env.share("s1")["socket_path"], env.share("s2")["socket_path"]
    watch = subprocess.Popen([env.ctl_bin, "--json", "stats", "s1", "--watch"], env=env.env,
                             stdout=subprocess.PIPE, text=True, **env.user_kwargs())
    try:
        check(watch.stdout.readline().startswith("{"), "sluicectl stats --watch printed no first sample")
        s1_before, s2_before = requests(env, "s1"), requests(env, "s2")
        check(env.vmm(sock1, "ls").returncode == 0 and env.vmm(sock2, "ls").returncode == 0,
              "ls through the test VMM")
        wait_for(lambda: requests(env, "s1") > s1_before, 30, "the watched share's Stats to count the ls")
        # s2's worker counted its ls too, but nobody watches s2: its Stats stay.
        check(requests(env, "s2") == s2_before,
              f"the unwatched share's Stats changed: {s2_before} -> {requests(env, 's2')}")
        w1 = env.worker_pids("s1")
        check(wakeups_in(w1, 2) >= 3, "the watched share's worker is not sampled (interval 200 ms)")
    finally:
        watch.send_signal(signal.SIGKILL)  # gone without UnwatchStats: its name leaves the bus
        watch.wait()

    # The watcher's name is gone: the service stops sampling s1 by itself
    # (a quiet second: five samples would have been due in it).
    wait_for(lambda: wakeups_in(w1 + [service.pid], 1) == 0, 30,
             "the sampling to stop after the watcher was killed")
    # a one-shot `sluicectl stats` still reads fresh figures (s2's ls)
    fresh = env.ctl_json("stats", "s2")["stats"]
    check(fresh["requests"] > s2_before, f"sluicectl stats s2 is not fresh: {fresh}")
    env.stop_service(service)


CASES = st.cases_in(globals())

if __name__ == "__main__":
    # test-service.py's runner (Env, clean-up, logs on failure) with these cases
    sys.exit(st.main(CASES))

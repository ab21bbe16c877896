#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: a worker restarted on purpose, the frontend kept.

    test-share-restart.py CASE      (CASE: see CASES at the bottom)

  share-restart   `sluicectl restart TAG` (Share.Restart) while a frontend
                  is connected: the worker hands over (SIGTERM, its store
                  kept) and the next one serves the very same connection;
                  the share never leaves "running", nothing says "crashed",
                  the Event is "resumed".  A share that is not running:
                  exit 1 with a sentence; no SHARE or two: exit 2.
  share-restart-real  the same with the real sluice-fs and sluice-test-vmm
                  reading over one connection: the read after the restart
                  answers, the Event says the guest was not interrupted.
  worker-upgrade  the sluice-fs on disk is replaced (a new file renamed over
                  it, as a package manager does): the service restarts each
                  running share's worker into it by itself, one at a time,
                  each keeping its connection.
  worker-upgrade-broken  the new file cannot run: the first share's worker
                  fails (after its retries), the round stops there, the
                  second share keeps its worker and its connection.

The worker is tests/service's fake-resume-worker.py, which speaks the
control channel and the store protocol: what is tested is the service, not
sluice-fs's resume (tests/frontend).  Each wait is for a condition with a
bound (no sleeps).  Runs on test-service.py's private bus (Env).
"""
import importlib.util
import os
import shutil
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(_here, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


st = _load("service_test", "test-service.py")
wr = _load("worker_resume_test", "test-worker-resume.py")
Failure, check, wait_for = st.Failure, st.check, st.wait_for


def need_fake():
    if not wr.fake_usable():
        print("SKIP: /usr/bin/python3 has no gi (python3-gi) for the fake worker")
        sys.exit(77)


def fake_pid(env, tag):
    pids = wr.fake_pids(env, tag)
    check(len(pids) == 1, f"workers of {tag}: {pids}")
    return pids[0]


def fake_binary(env):
    """The fake worker copied where a package would put sluice-fs, and the
    service told to run it: its path (the fake finds its workers by that
    name: wr.fake_pids)."""
    need_fake()
    binary = os.path.join(env.mkdir("libexec"), "fake-resume-worker.py")
    shutil.copy2(wr.FAKE, binary)
    os.chmod(binary, 0o755)
    env.own(binary)
    env.env["SLUICE_FS"] = binary
    return binary


def replace_binary(env, binary, text):
    """A package manager's way: the new file written beside BINARY, then
    renamed over it."""
    fresh = binary + ".new"
    with open(fresh, "w") as f:
        f.write(text)
    os.chmod(fresh, 0o755)
    env.own(fresh)
    os.rename(fresh, binary)


def started_share(env, tag):
    """Share TAG running and a frontend it serves: (share, frontend, pid)."""
    env.ctl("add", env.mkdir(tag), "--tag", tag)
    env.ctl("start", tag)
    s = env.share(tag)
    pid = fake_pid(env, tag)
    frontend = wr.Frontend(s["socket_path"])
    check(frontend.line() == f"hello {pid}", f"the first worker of {tag} did not serve the frontend")
    return s, frontend, pid


def check_handed_over(env, tag, frontend, old):
    """The next worker of TAG took the frontend's connection over from OLD."""
    pid = wr.new_worker(env, tag, old, lambda t: wr.fake_pids(env, t))
    check(frontend.line() == f"resumed {pid}", f"the restarted worker of {tag} did not take the connection over")
    names = wr.environ_of(pid).get(b"LISTEN_FDNAMES", b"").decode().split(":")
    check("conn" in names and "state" in names, f"LISTEN_FDNAMES after the restart: {names}")
    return pid


def case_share_restart(env):
    """sluicectl restart: the same connection served by the next worker; the share runs on."""
    need_fake()
    env.env["SLUICE_FS"] = env.reachable(wr.FAKE)
    service = env.start_service()
    s, frontend, old = started_share(env, "docs")
    monitor = st.Monitor(env, s["object_path"])

    env.ctl("restart", "docs")
    pid = check_handed_over(env, "docs", frontend, old)
    monitor.wait_for("Share.Event ('resumed'", 30)
    text = monitor.text()
    check("'crashed'" not in text and "<'starting'>" not in text and "<'stopped'>" not in text,
          f"the share showed the restart: {text}")
    check(env.share("docs")["state"] == "running", f"after the restart: {env.share('docs')}")

    # by D-Bus too, and the answer comes once the next worker is ready
    env.gdbus_call(s["object_path"], "org.sluice.Sluice1.Share.Restart")
    check_handed_over(env, "docs", frontend, pid)

    # refused with a sentence, not a crash of anything
    env.ctl("stop", "docs")
    r = env.ctl("restart", "docs", rc=1)
    check("not running" in r.stderr, f"restart of a stopped share: {r.stderr!r}")
    env.ctl("restart", rc=2)
    env.ctl("restart", "docs", "docs", rc=2)
    env.ctl("restart", "--bogus", "docs", rc=2)
    r = env.ctl("restart", "nosuchshare", rc=1)
    check(r.stderr.startswith("sluicectl: "), f"restart of no share: {r.stderr!r}")
    monitor.stop()
    env.stop_service(service)


def case_share_restart_real(env):
    """The real sluice-fs with a test VMM reading: sluicectl restart, and the next read answers."""
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    with open(env.path("share", "hello.txt"), "w") as f:
        f.write("hello")
    service = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "docs")
    env.ctl("start", "docs")
    s = env.share("docs")
    monitor = st.Monitor(env, s["object_path"])
    session = wr.Session(env, s["socket_path"])
    try:
        out, status = session.command("read hello.txt")
        check(status == "ok" and out == ["hello"], f"read before the restart: {out} {status}")
        old = env.worker_pids("docs")
        env.ctl("restart", "docs")
        wr.new_worker(env, "docs", old[0])
        out, status = session.command("read hello.txt")
        check(status == "ok" and out == ["hello"], f"read after the restart: {out} {status}")
        monitor.wait_for("Share.Event ('resumed'", 30)
        check("without interrupting the guest" in monitor.text(), f"the Event: {monitor.text()}")
        check(env.share("docs")["state"] == "running", f"after the restart: {env.share('docs')}")
    finally:
        session.close()
    monitor.stop()
    env.stop_service(service)


def case_worker_upgrade(env):
    """A new sluice-fs renamed over the old one: every running worker restarted into it, one by one."""
    binary = fake_binary(env)
    service = env.start_service()
    _, docs, docs_pid = started_share(env, "docs")
    _, music, music_pid = started_share(env, "music")

    with open(wr.FAKE) as f:
        replace_binary(env, binary, f.read() + "# the upgraded one\n")

    check_handed_over(env, "docs", docs, docs_pid)
    check_handed_over(env, "music", music, music_pid)
    log = env.service_log(service)
    check("sluice-fs changed on disk" in log, f"the change was not logged: {log}")
    check(log.index("docs: restarting its worker into the new sluice-fs")
          < log.index("music: restarting its worker into the new sluice-fs"),
          f"not one after the other: {log}")
    for tag in ("docs", "music"):
        check(env.share(tag)["state"] == "running", f"after the upgrade: {env.share(tag)}")
    env.stop_service(service)


def case_worker_upgrade_broken(env):
    """A new sluice-fs that cannot run: the first share fails, the others keep their workers."""
    binary = fake_binary(env)
    service = env.start_service()
    _, docs, docs_pid = started_share(env, "docs")
    _, music, music_pid = started_share(env, "music")

    replace_binary(env, binary, "#!/bin/sh\necho 'this sluice-fs is broken' >&2\nexit 1\n")

    env.wait_state("docs", "failed", timeout=90)
    # whichever comes first: the round stopping, or going on to music
    wait_for(lambda: any(line in env.service_log(service) for line in
                         ("stopped restarting the others", "music: restarting its worker")), 30,
             "the round to stop or go on after docs failed")
    log = env.service_log(service)
    check("music: restarting its worker" not in log, f"music was restarted into the broken binary: {log}")
    check("stopped restarting the others" in log, f"no log line saying the round stopped: {log}")
    check(wr.fake_pids(env, "music") == [music_pid], f"music's worker: {wr.fake_pids(env, 'music')} != {music_pid}")
    check(env.share("music")["state"] == "running", f"music after the broken upgrade: {env.share('music')}")
    env.stop_service(service)


CASES = st.cases_in(globals())

if __name__ == "__main__":
    sys.exit(st.main(CASES))

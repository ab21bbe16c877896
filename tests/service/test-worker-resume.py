#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: a worker crash the frontend does not notice.  The real
service runs a real sluice-fs with --resume and keeps its fd store; the
frontend is tests/frontend's sluice-test-vmm in "session" mode: one
vhost-user connection kept across the crashes, as a guest's mount is.

    test-worker-resume.py CASE      (CASE: see CASES at the bottom)

  worker-resume   SIGKILL of the worker while a frontend is connected: the
                  worker is relaunched at once with the stored fds
                  (LISTEN_FDNAMES has conn and state, LISTEN_PID is its own
                  pid), the same connection is served on, the share never
                  leaves "running", Event "resumed" says how long it took and
                  what became of the requests, Stats count the crash.
                  Crashes of a worker that was serving are resumed every
                  time.  A worker that dies taking up what was in flight (a
                  poisoned request) is relaunched with --replay=no (Event
                  "recovered": requests failed); dying at two resumes
                  within 30 s drops the stored state, so the frontend sees
                  its connection end and the share takes the old path
                  (Event "crashed").  The
                  worker is a stand-in that speaks the protocol
                  (fake-resume-worker.py): sluice-fs's own resume needs the
                  FUSE tables' part of the work, tested in tests/frontend.
  worker-resume-real  the real sluice-fs with sluice-test-vmm connected:
                  killed, it is relaunched at once with every stored fd at
                  3.. (listen, conn, state, mem-0, kick-0, call-0, …),
                  LISTEN_PID its own, the control and folder fds after them.

Each wait is for a condition with a bound (no sleeps).
Runs against the real service on test-service.py's private bus (Env).
"""
import importlib.util
import os
import select
import signal
import socket
import subprocess
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for = st.Failure, st.check, st.wait_for


class Session:
    """sluice-test-vmm session: one frontend connection, commands on stdin."""

    def __init__(self, env, sock):
        self.proc = subprocess.Popen([env.vmm_bin, "--timeout=20000", "--socket", sock, "session"],
                                     env=env.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1, **env.user_kwargs())
        self.pending = b""

    def command(self, line, timeout=30):
        """Sends LINE; returns (output lines, "ok" or "error: ..."), or
        (lines, None) when the session ended.  Reads the pipe itself: a
        buffered reader would keep the answer's last line out of select's
        sight."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = []
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self.pending:
                got, self.pending = self.pending.split(b"\n", 1)
                got = got.decode(errors="replace")
                if got == "ok" or got.startswith("error"):
                    return out, got
                out.append(got)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"no answer to {line!r} within {timeout} s (so far {out})")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return out, None
            self.pending += chunk

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read()


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)


def cmdline_of(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


def fake_pids(env, tag):
    """The fake workers of share TAG (env.worker_pids() knows sluice-fs by name)."""
    share = env.share(tag)
    if share is None or env.socket_dir() is None:
        return []
    socket_arg = "--socket-path=" + os.path.join(env.socket_dir(), f"{share['id']}.sock")
    pids = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = cmdline_of(entry)
            with open(f"/proc/{entry}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if any(a.endswith("fake-resume-worker.py") for a in argv) and socket_arg in argv and not zombie:
            pids.append(int(entry))
    return pids


def new_worker(env, tag, old, pids=None):
    pids = pids or env.worker_pids
    return wait_for(lambda: (lambda p: p if len(p) == 1 and p[0] != old else None)(pids(tag)),
                    30, f"a new worker of {tag} (the old one was {old})")[0]


FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake-resume-worker.py")


def fake_usable():
    return subprocess.run(["/usr/bin/python3", "-c", "import gi"], capture_output=True).returncode == 0


class Frontend:
    """A plain connection to the share's socket, the fake worker's "frontend"."""

    def __init__(self, sock_path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(sock_path)
        self.pending = b""

    def line(self, timeout=30):
        """The next line, or None at EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"nothing from the worker within {timeout} s (so far {self.pending!r})")
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                continue
            chunk = self.sock.recv(4096)
            if not chunk:
                return None
            self.pending += chunk
        got, self.pending = self.pending.split(b"\n", 1)
        return got.decode()


def case_worker_resume(env):
    """SIGKILL while a frontend is served: resumed at once, unnoticed; a crash loop drops the store.

    The worker is fake-resume-worker.py, a stand-in that speaks the control
    channel and the store protocol but no FUSE: what is tested here is the
    service (its keeper, the relaunch, the share's machine, Event and
    Stats), not sluice-fs's resume."""
    if not fake_usable():
        print("SKIP: /usr/bin/python3 has no gi (python3-gi) for the fake worker")
        sys.exit(77)
    env.env["SLUICE_FS"] = env.reachable(FAKE)
    die_file = env.path("die-while-resuming")
    env.env["FAKE_DIE_FILE"] = die_file
    service = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "docs")
    env.ctl("start", "docs")
    s = env.share("docs")
    monitor = st.Monitor(env, s["object_path"])
    first = fake_pids(env, "docs")
    check(len(first) == 1, f"workers: {first}")
    fake = lambda tag: fake_pids(env, tag)  # noqa: E731
    check("--resume" in cmdline_of(first[0]), f"launched without --resume: {cmdline_of(first[0])}")
    check(b"LISTEN_FDS" not in environ_of(first[0]), "a first launch got stored fds")
    frontend = Frontend(s["socket_path"])
    check(frontend.line() == f"hello {first[0]}", "the first worker did not serve the frontend")

    # ---- one crash: the same connection, served by the next worker ----
    os.kill(first[0], signal.SIGKILL)
    pid = new_worker(env, "docs", first[0], fake)
    check(frontend.line() == f"resumed {pid}", "the relaunched worker did not take the connection over")
    names = environ_of(pid).get(b"LISTEN_FDNAMES", b"").decode().split(":")
    check(sorted(names) == ["conn", "listen", "state"], f"LISTEN_FDNAMES of the relaunch: {names}")
    check(environ_of(pid).get(b"LISTEN_PID") == str(pid).encode(),
          f"LISTEN_PID is not the worker's own: {environ_of(pid).get(b'LISTEN_PID')} != {pid}")
    check("--replay=no" not in cmdline_of(pid), f"first relaunch: {cmdline_of(pid)}")
    monitor.wait_for("Share.Event ('resumed'", 30)
    text = monitor.text()
    check("recovered from a worker crash in" in text and "2 requests answered again, 0 failed" in text,
          f"the resumed Event: {text}")
    check("'crashed'" not in text and "<'starting'>" not in text,
          f"the share showed the crash it resumed from: {text}")
    check(env.share("docs")["state"] == "running", f"after the resume: {env.share('docs')}")
    stats = env.ctl_json("stats", "docs")["stats"]
    check(stats.get("worker-crashes") == 1 and stats.get("resume-replayed") == 2
          and stats.get("resume-failed") == 0, f"Stats after one crash: {stats}")

    # ---- crashes of a worker that was serving are resumed every time ----
    for n in range(2, 6):
        os.kill(pid, signal.SIGKILL)
        pid = new_worker(env, "docs", pid, fake)
        check(frontend.line() == f"resumed {pid}", "a relaunch did not take the connection over")
        check("--replay=no" not in cmdline_of(pid), f"a worker that was serving: {cmdline_of(pid)}")
        # serving again (the service saw it ready) before the next kill
        wait_for(lambda: monitor.text().count("Share.Event ('resumed'") >= n, 30,
                 f"the resumed Event of relaunch {n}")
    stats = env.ctl_json("stats", "docs")["stats"]
    check(stats.get("worker-crashes") == 5 and stats.get("resume-replayed") == 10,
          f"Stats after five crashes of serving workers: {stats}")

    # ---- a worker dies taking up what was in flight: the next answers it EIO ----
    with open(die_file, "w") as f:
        f.write("replaying")
    os.kill(pid, signal.SIGKILL)
    pid2 = wait_for(lambda: [p for p in fake("docs") if p != pid and "--replay=no" in cmdline_of(p)],
                    30, "a relaunch with --replay=no after the one that died resuming")[0]
    check(frontend.line() == f"resumed {pid2}", "the --replay=no relaunch did not take the connection over")
    # something failed: a normal "recovered", not the quiet "resumed"
    monitor.wait_for("Share.Event ('recovered'", 30)
    check("0 requests answered again, 2 failed" in monitor.text(), f"the Event: {monitor.text()}")
    stats = env.ctl_json("stats", "docs")["stats"]
    check(stats.get("worker-crashes") == 7 and stats.get("resume-replayed") == 10
          and stats.get("resume-failed") == 2, f"Stats (totals across launches): {stats}")

    # ---- dying at every resume: the stored state is dropped, the frontend sees the end ----
    with open(die_file, "w") as f:
        f.write("always")
    os.kill(pid2, signal.SIGKILL)
    check(frontend.line() is None, "the frontend's connection did not end when the state was dropped")
    monitor.wait_for("Share.Event ('crashed'", 30)
    env.wait_state("docs", "running", timeout=60)
    pid3 = new_worker(env, "docs", pid2, fake)
    check(b"conn" not in environ_of(pid3).get(b"LISTEN_FDNAMES", b""),
          f"the dropped connection was passed on: {environ_of(pid3).get(b'LISTEN_FDNAMES')}")
    check("stored state is dropped" in env.service_log(service), "no log line about the dropped state")
    monitor.stop()
    env.stop_service(service)
    wait_for(lambda: not fake_pids(env, "docs"), 30, "the fake worker to exit with the service")


def case_worker_resume_real(env):
    """The real sluice-fs with a test VMM connected: killed, it is relaunched at once with its store.

    Only the keeper's side is checked (what sluice-fs takes over is
    tests/frontend's): the stored fds come back at 3.. under their names,
    LISTEN_PID is the new process's own, and the share runs on."""
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    with open(env.path("share", "hello.txt"), "w") as f:
        f.write("hello")
    service = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "docs")
    env.ctl("start", "docs")
    s = env.share("docs")
    session = Session(env, s["socket_path"])
    try:
        out, status = session.command("read hello.txt")
        check(status == "ok" and out == ["hello"], f"read before the crash: {out} {status}")
        old = env.worker_pids("docs")
        check(len(old) == 1, f"workers: {old}")
        os.kill(old[0], signal.SIGKILL)
        pid = new_worker(env, "docs", old[0])
        names = environ_of(pid).get(b"LISTEN_FDNAMES", b"").decode().split(":")
        for name in ("listen", "conn", "state", "mem-0", "kick-0", "call-0"):
            check(name in names, f"{name} is not among the stored fds passed on: {names}")
        check(environ_of(pid).get(b"LISTEN_FDS") == str(len(names)).encode(), "LISTEN_FDS != the names")
        check(environ_of(pid).get(b"LISTEN_PID") == str(pid).encode(), "LISTEN_PID is not the worker's own")
        args = cmdline_of(pid)
        control = [int(a.split("=", 1)[1]) for a in args if a.startswith("--control-fd=")]
        folder = [int(a.split("=", 1)[1]) for a in args if a.startswith("--shared-dir-fd=")]
        check(control == [3 + len(names)] and folder == [4 + len(names)],
              f"the service's own fds do not follow the stored ones: {args}")
        env.wait_state("docs", "running", timeout=60)
    finally:
        session.close()
    env.stop_service(service)


CASES = st.cases_in(globals())

if __name__ == "__main__":
    sys.exit(st.main(CASES))

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: sluice-service SIGKILLed (faults above the daemon).

    test-service-faults.py CASE      (CASE: see CASES at the bottom)

It reuses test-service.py's private bus and helpers (Env): the service, its
workers and every client run as SLUICE_TEST_USER under root.  A killed
service is never activated behind the test's back: the bus's activation
file is removed, and any instance a half-sent sluicectl call still managed
to start is killed too.

  config-kill-points  the same at fixed points of a save (strace injects the
                 kill at the temporary file's fsync and at the rename).
  config-kill    shares.ini survives a SIGKILL at any point of a change:
                 after every kill the file parses and holds the state before
                 or after the change, and a restarted service lists exactly it.
  service-kill   the workers outlive a SIGKILLed service while a frontend is
                 connected, keep serving it, and a restarted service replaces
                 them (see service/worker-orphans.h): never two workers on one socket.

SLUICE_TEST_SEED fixes the random choices; the seed is printed either way.
The assertions never depend on where a kill lands.
"""
import configparser
import glob
import importlib.util
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for = st.Failure, st.check, st.wait_for

CONFIG_ITERATIONS = 30


def no_activation(env):
    os.unlink(env.path("services", "org.sluice.Sluice1.service"))
    env.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
             "--object-path", "/org/freedesktop/DBus", "--method",
             "org.freedesktop.DBus.ReloadConfig"], timeout=30)


def name_owner_pid(env):
    r = env.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                 "--object-path", "/org/freedesktop/DBus", "--method",
                 "org.freedesktop.DBus.GetConnectionUnixProcessID", st.BUS_NAME], timeout=30)
    if r.returncode != 0:
        return None
    return int(r.stdout.strip().strip("(),").split()[-1])


def kill_service(env, proc):
    proc.kill()
    proc.wait(30)
    # a client call that was on its way may have activated another instance
    pid = name_owner_pid(env)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not env.name_owned(), 30, "the service's bus name to be released")


def ini_state(env):
    """{tag: (path, read-only)} from shares.ini, failing when it does not parse."""
    path = env.path("config", "sluice", "shares.ini")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        text = f.read()
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    try:
        parser.read_string(text)
    except configparser.Error as e:
        raise Failure(f"shares.ini does not parse after a kill ({e}):\n{text}")
    state = {}
    for group in parser.sections():
        check(group.startswith("share "), f"shares.ini has a group [{group}]:\n{text}")
        g = parser[group]
        check("tag" in g and "path" in g and g.get("read-only") in ("true", "false"),
              f"[{group}] is incomplete:\n{text}")
        state[g["tag"]] = (g["path"], g["read-only"] == "true")
    return state


def listed_state(env):
    return {s["tag"]: (s["path"], bool(s["read_only"])) for s in env.ctl_json("list")}


def ctl_async(env, *args):
    return subprocess.Popen([env.ctl_bin, *args], env=env.env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, **env.user_kwargs())


def case_config_kill(env):
    seed = int(os.environ.get("SLUICE_TEST_SEED", str(time.time_ns() % 1000000)))
    rnd = random.Random(seed)
    print(f"seed {seed} (SLUICE_TEST_SEED={seed} repeats this run)")
    no_activation(env)
    service = env.start_service()

    # How long one change takes from the client's start: the kills land anywhere in it.
    env.mkdir("share", "probe")
    t0 = time.monotonic()
    env.ctl("add", env.path("share", "probe"), "--tag", "probe", "--no-autostart")
    env.ctl("set", "probe", "readonly", "on")
    env.ctl("remove", "probe")
    window = (time.monotonic() - t0) / 3 * 1.5
    print(f"kill window {window * 1000:.0f} ms")

    state = listed_state(env)
    outcomes = {"old": 0, "new": 0}
    cut_saves = 0   # kills that left a save's temporary file behind
    for i in range(CONFIG_ITERATIONS):
        new = dict(state)
        roll = rnd.random()
        if len(state) < 2 or roll < 0.4:
            tag = f"t{i}"
            path = env.mkdir("share", tag)
            ro = rnd.random() < 0.5
            new[tag] = (path, ro)
            args = ["add", path, "--tag", tag, "--no-autostart"] + (["--readonly"] if ro else [])
        elif roll < 0.7:
            tag = rnd.choice(sorted(state))
            path, ro = state[tag]
            new[tag] = (path, not ro)
            args = ["set", tag, "readonly", "off" if ro else "on"]
        else:
            tag = rnd.choice(sorted(state))
            del new[tag]
            args = ["remove", tag]

        client = ctl_async(env, *args)
        time.sleep(rnd.uniform(0, window))
        kill_service(env, service)
        client.wait(60)

        on_disk = ini_state(env)
        check(on_disk in (state, new),
              f"iteration {i} ({' '.join(args)}): shares.ini holds neither the old nor the new "
              f"state\nold: {state}\nnew: {new}\nfile: {on_disk}")
        outcomes["new" if on_disk == new else "old"] += 1
        cut_saves += bool(glob.glob(env.path("config", "sluice", "shares.ini.??????")))
        service = env.start_service()
        listed = listed_state(env)
        check(listed == on_disk, f"iteration {i}: the restarted service lists {listed}, "
                                 f"shares.ini holds {on_disk}")
        bad = glob.glob(env.path("config", "sluice", "shares.ini.bad-*"))
        check(not bad, f"iteration {i}: the service found shares.ini damaged and kept {bad}")
        left = glob.glob(env.path("config", "sluice", "shares.ini.??????"))
        check(not left, f"iteration {i}: the restarted service left {left}")
        state = on_disk
    print(f"{CONFIG_ITERATIONS} kills: {outcomes['old']} before the change was saved, "
          f"{outcomes['new']} after, {cut_saves} in the middle of a save (a temporary file left)")
    env.stop_service(service)


def start_service_under_strace(env, *strace_args):
    """The service under strace(1), which injects the kill; returns the strace process."""
    log = open(env.path(f"service-{len(env.services)}.log"), "w+")
    proc = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null", *strace_args, env.service_bin],
                            env=env.env, stdout=log, stderr=subprocess.STDOUT, **env.user_kwargs())
    proc.log = log
    env.services.append(proc)
    wait_for(lambda: proc.poll() is not None or env.name_owned(), 60, "sluice-service under strace")
    check(proc.poll() is None, f"sluice-service under strace exited: {env.service_log(proc)}")
    return proc


def case_config_kill_points(env):
    """The kill at fixed points of a save, injected by strace(1): at the temporary
    file's fsync (written, not yet renamed) and at the rename itself."""
    if shutil.which("strace") is None:
        print("SKIP: strace is not installed")
        sys.exit(77)
    no_activation(env)
    ini = env.path("config", "sluice", "shares.ini")
    service = env.start_service()
    env.ctl("add", env.mkdir("share", "first"), "--tag", "first", "--no-autostart")
    env.stop_service(service)
    points = {
        "fsync": ["-e", "trace=fsync,fdatasync", "-e", "inject=fsync,fdatasync:signal=SIGKILL"],
        "rename": ["-e", "trace=rename,renameat,renameat2",
                   "-e", "inject=rename,renameat,renameat2:signal=SIGKILL"],
    }
    for point, args in points.items():
        before = ini_state(env)
        proc = start_service_under_strace(env, *args)
        env.ctl("add", env.mkdir("share", point), "--tag", point, "--no-autostart", rc=None)
        proc.wait(60)
        wait_for(lambda: not env.name_owned(), 30, "the killed service's bus name to go")
        # strace ends the way its tracee did
        check(proc.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL),
              f"the service was not killed at the save's {point} (status {proc.returncode}): "
              f"{env.service_log(proc)}")
        after = ini_state(env)
        check(after == before, f"killed at the save's {point}: shares.ini holds {after}, "
                               f"expected the state before the change {before}")
        left = glob.glob(ini + ".*")
        print(f"killed at {point}: shares.ini intact; temporary files left: {[os.path.basename(p) for p in left]}")
        service = env.start_service()
        check(listed_state(env) == before, f"after the kill at {point}: {listed_state(env)}")
        check(not glob.glob(ini + ".*"), f"the restarted service left {glob.glob(ini + '.*')}")
        # the next save works with the leftover next to it
        env.ctl("add", env.path("share", point), "--tag", point, "--no-autostart")
        check(point in ini_state(env), f"the save after the kill at {point}: {ini_state(env)}")
        env.stop_service(service)


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def listeners(path):
    """Listening sockets bound to path (/proc/net/unix: __SO_ACCEPTCON in Flags)."""
    n = 0
    with open("/proc/net/unix") as f:
        next(f)
        for line in f:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == path and int(fields[3], 16) & 0x10000:
                n += 1
    return n


class Frontend:
    """sluice-test-vmm session: one vhost-user connection that stays up, as a
    guest's mount does; cmd() sends one command line and returns (ok, output)."""

    def __init__(self, env, socket):
        self.proc = subprocess.Popen([env.vmm_bin, "--timeout=5000", "--socket", socket, "session"],
                                     env=env.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, **env.user_kwargs())
        self.buf = b""

    def cmd(self, line, timeout=60):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        out = []
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                ready, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
                chunk = os.read(self.proc.stdout.fileno(), 4096) if ready else b""
                if not chunk:
                    raise Failure(f"the test frontend gave no answer to {line!r} "
                                  f"({'exited' if ready else 'timed out'}); so far {out}")
                self.buf += chunk
            text, self.buf = self.buf.split(b"\n", 1)
            text = text.decode(errors="replace")
            if text == "ok" or text.startswith("error: "):
                return text == "ok", "\n".join(out) if text == "ok" else text
            out.append(text)

    def expect(self, line, output=None):
        ok, got = self.cmd(line)
        check(ok, f"{line!r} through the connected frontend: {got}")
        if output is not None:
            check(got == output, f"{line!r} through the connected frontend gave {got!r}, expected {output!r}")

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(60)


def share_socket(env, tag):
    return os.path.join(env.socket_dir(), f"{env.share(tag)['id']}.sock")


def case_service_kill(env):
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    no_activation(env)
    env.mkdir("share", "a")
    env.mkdir("share", "b")
    service = env.start_service()
    env.ctl("add", env.path("share", "a"), "--tag", "served")
    env.ctl("add", env.path("share", "b"), "--tag", "idle")
    env.ctl("start", "served")
    env.ctl("start", "idle")
    env.wait_state("served", "running")
    env.wait_state("idle", "running")
    sock = share_socket(env, "served")
    [served] = env.worker_pids("served")
    [idle] = env.worker_pids("idle")
    fe = Frontend(env, sock)
    fe.expect("write before.txt one")

    # SIGKILL: the idle worker goes with the service; the one serving a
    # frontend stops listening (its socket is removed) and goes on serving.
    kill_service(env, service)
    wait_for(lambda: not pid_alive(idle), 30, "the idle worker to exit with the service")
    wait_for(lambda: listeners(sock) == 0 and not os.path.exists(sock), 30,
             "the orphaned worker to stop listening and remove its socket")
    check(pid_alive(served), "the worker serving a frontend died with the service")
    fe.expect("write during.txt two")
    fe.expect("read before.txt", "one")
    with open(env.path("share", "a", "during.txt")) as f:
        check(f.read() == "two", "during.txt on the host")

    # A restarted service: the same shares, a new worker listening on the
    # socket, the orphan still serving its frontend, one listener only.
    service = env.start_service()
    check(sorted(s["tag"] for s in env.ctl_json("list")) == ["idle", "served"],
          f"shares after the restart: {env.ctl_json('list')}")
    env.wait_state("served", "running")
    new = [p for p in env.worker_pids("served") if p != served]
    check(len(new) == 1 and pid_alive(served), f"workers of the share: {env.worker_pids('served')}")
    check(listeners(sock) == 1, f"{listeners(sock)} listeners on {sock}")
    r = env.vmm(sock, "read", "during.txt")
    check(r.returncode == 0 and r.stdout == "two", f"a new frontend: {r.returncode} {r.stdout!r} {r.stderr}")
    fe.expect("write after.txt three")
    fe.expect("read during.txt", "two")
    check("still serves a frontend of served" in env.service_log(service), env.service_log(service))

    # The frontend leaves (the VM shut down): the orphan exits by itself.
    fe.close()
    wait_for(lambda: not pid_alive(served), 30, "the orphan to exit after its frontend left")
    check(env.worker_pids("served") == new and listeners(sock) == 1,
          f"after the orphan left: {env.worker_pids('served')}, {listeners(sock)} listeners")
    r = env.vmm(sock, "read", "after.txt")
    check(r.returncode == 0 and r.stdout == "three", f"after.txt: {r.returncode} {r.stdout!r} {r.stderr}")

    # An orphan cannot be switched to read-only: switching the share ends it.
    fe = Frontend(env, sock)
    fe.expect("write x.txt four")
    kill_service(env, service)
    wait_for(lambda: listeners(sock) == 0, 30, "the second orphan to stop listening")
    service = env.start_service()
    env.wait_state("served", "running")
    check(pid_alive(new[0]), "the second orphan died before read-only was switched on")
    env.ctl("set", "served", "readonly", "on")
    wait_for(lambda: not pid_alive(new[0]), 30, "read-only on to end the writable orphan")
    ok, got = fe.cmd("write y.txt five")
    check(not ok, "the ended orphan's frontend could still write")
    check(not os.path.exists(env.path("share", "a", "y.txt")), "y.txt was written")
    fe.close()
    r = env.vmm(sock, "write", "z.txt", "six")
    check(r.returncode == 1 and "EROFS" in r.stderr, f"write after read-only on: {r.returncode} {r.stderr}")

    # RemoveShare ends an orphan too, Stop ends that of a share the restarted
    # service did not start, and the service's own exit ends the rest.
    def orphan_after_restart(tag, state="running"):
        nonlocal service
        socket = share_socket(env, tag)
        [pid] = env.worker_pids(tag)
        frontend = Frontend(env, socket)
        frontend.expect("ls")
        kill_service(env, service)
        wait_for(lambda: listeners(socket) == 0, 30, f"the orphan of {tag} to stop listening")
        service = env.start_service()
        env.wait_state(tag, state)
        check(pid_alive(pid), f"the orphan of {tag} died before it was asked to")
        return pid, frontend

    pid, fe = orphan_after_restart("served")
    env.ctl("remove", "served")
    wait_for(lambda: not pid_alive(pid), 30, "RemoveShare to end the orphan of the removed share")
    fe.close()

    # Autostart off: the restarted service shows the share "stopped" while
    # the orphan serves its VM; Stop of the stopped share ends the orphan.
    env.mkdir("share", "c")
    env.ctl("add", env.path("share", "c"), "--tag", "manual", "--no-autostart")
    env.ctl("start", "manual")
    env.wait_state("manual", "running")
    pid, fe = orphan_after_restart("manual", "stopped")
    env.ctl("stop", "manual")
    wait_for(lambda: not pid_alive(pid), 30, "Stop of a stopped share to end its orphan")
    fe.close()

    env.ctl("start", "idle")
    env.wait_state("idle", "running")
    pid, fe = orphan_after_restart("idle")
    env.stop_service(service)   # it checks that no sluice-fs outlives it
    check(not pid_alive(pid), "the orphan outlived the service's exit")
    fe.close()


CASES = st.cases_in(globals())


if __name__ == "__main__":
    # test-service.py's runner (Env, clean-up, logs on failure) with these cases
    sys.exit(st.main(CASES))

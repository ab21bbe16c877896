#!/usr/bin/env python3
"""tests/service: sluice-service SIGKILLed (issue 10, faults above the daemon).

    test-service-faults.py CASE      (CASE: see CASES at the bottom)

It reuses test-service.py's private bus and helpers (Env): the service, its
workers and every client run as SLUICE_TEST_USER under root.  A killed
service is never activated behind the test's back: the bus's activation
file is removed, and any instance a half-sent sluicectl call still managed
to start is killed too.

  config-kill    shares.ini survives a SIGKILL at any point of a change:
                 after every kill the file parses and holds the state before
                 or after the change, and a restarted service lists exactly it.
  service-kill   the workers outlive a SIGKILLed service while a frontend is
                 connected, keep serving it, and a restarted service replaces
                 them (see service/worker.c): never two workers on one socket.

SLUICE_TEST_SEED fixes the random choices; the seed is printed either way.
The assertions never depend on where a kill lands.
"""
import configparser
import glob
import importlib.util
import os
import random
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
    outcomes = {"old": 0, "new": 0, "same": 0}
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
        outcomes["same" if state == new else "new" if on_disk == new and on_disk != state
                 else "old"] += 1
        service = env.start_service()
        listed = listed_state(env)
        check(listed == on_disk, f"iteration {i}: the restarted service lists {listed}, "
                                 f"shares.ini holds {on_disk}")
        bad = glob.glob(env.path("config", "sluice", "shares.ini.bad-*"))
        check(not bad, f"iteration {i}: the service found shares.ini damaged and kept {bad}")
        state = on_disk
    left = [p for p in glob.glob(env.path("config", "sluice", "shares.ini.*"))]
    print(f"{CONFIG_ITERATIONS} kills: {outcomes['old']} before the change was saved, "
          f"{outcomes['new']} after; temporary files left by kills: {len(left)}")
    env.stop_service(service)


CASES = {name[len("case_"):].replace("_", "-"): fn for name, fn in globals().items()
         if name.startswith("case_")}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {'|'.join(CASES)}", file=sys.stderr)
        return 2
    env = None
    try:
        env = st.Env()
        CASES[sys.argv[1]](env)
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"FAIL: {e}")
        if env is not None:
            env.dump_logs()
        return 1
    finally:
        if env is not None:
            env.close()
    print(f"PASS: {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/install: what `meson install` puts on a machine, and the systemd user
units run the way systemd would run them.

    test-units.py CASE      (install | share-unit | fs-unit)

Every case installs the build into a DESTDIR of its own first.  There is no
systemd --user on the test machines (systemd is not PID 1): the unit cases
read ExecStart=/ExecStop= from the installed unit files, expand what systemd
would expand (%i, %t, %E, the environment file) and run those commands as
the test user, with a NOTIFY_SOCKET the test binds, as systemd does for
Type=notify.  tests/service/test-service.py's Env provides the private
session bus and the real sluice-service (D-Bus activated).
"""
import importlib.util
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

BUILD = os.environ["SLUICE_BUILD_ROOT"]
SOURCE = os.environ["SLUICE_SOURCE_ROOT"]
_spec = importlib.util.spec_from_file_location(
    "sluice_service_test", os.path.join(SOURCE, "tests", "service", "test-service.py"))
svc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(svc)
Failure, check, wait_for = svc.Failure, svc.check, svc.wait_for

UNITS = ("sluice-service.service", "sluice-share@.service", "sluice-fs@.service")


def install(destdir):
    """meson install into destdir; returns the install prefix."""
    r = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet",
                        "--destdir", destdir], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"meson install failed: {r.stdout}{r.stderr}")
    r = subprocess.run(["meson", "introspect", "--buildoptions", BUILD], capture_output=True,
                       text=True, timeout=60)
    prefix = [o["value"] for o in json.loads(r.stdout) if o["name"] == "prefix"]
    return prefix[0]


def installed_files(destdir):
    found = set()
    for root, _, files in os.walk(destdir):
        for name in files:
            found.add("/" + os.path.relpath(os.path.join(root, name), destdir))
    return found


def unit_path(destdir, prefix, unit):
    return os.path.join(destdir + prefix, "lib", "systemd", "user", unit)


def unit_values(path, key):
    """The values of key= in a unit file (comments and sections ignored)."""
    values = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(key + "="):
                values.append(line[len(key) + 1:])
    return values


def expand(command, destdir, specifiers, environment):
    """A unit's command line as systemd runs it: specifiers, ${VAR} as one
    word, $VAR split into words; the program from the DESTDIR."""
    for spec, value in specifiers.items():
        command = command.replace(spec, value)
    argv = []
    for word in shlex.split(command):
        if re.fullmatch(r"\$[A-Za-z_][A-Za-z0-9_]*", word):
            argv += environment.get(word[1:], "").split()
            continue
        argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                           lambda m: environment.get(m.group(1), ""), word))
    argv[0] = destdir + argv[0]
    return argv


def read_env_file(path):
    environment = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                environment[key] = value
    return environment


class Notify:
    """A NOTIFY_SOCKET: a datagram socket, at a path (as systemd's) or abstract."""

    def __init__(self, env, abstract=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            self.address = f"@sluice-test-notify-{os.getpid()}-{time.monotonic_ns()}"
            self.sock.bind("\0" + self.address[1:])
        else:
            self.address = env.path("notify")
            self.sock.bind(self.address)
            os.chmod(self.address, 0o666)
        self.messages = []

    def wait(self, field, timeout, what, proc=None):
        """The first message (after those seen) with a line field, e.g. READY=1."""
        deadline = time.monotonic() + timeout
        while True:
            for i, message in enumerate(self.messages):
                if field in message.split("\n"):
                    del self.messages[:i + 1]
                    return message
            self.messages.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"timed out after {timeout} s waiting for {field} ({what})")
            if proc is not None and proc.poll() is not None:
                # what is still queued counts; then nothing more can come
                readable, _, _ = select.select([self.sock], [], [], 0)
                if not readable:
                    raise Failure(f"{what}: exited with {proc.returncode} before {field}")
            readable, _, _ = select.select([self.sock], [], [], min(left, 0.5))
            if readable:
                self.messages.append(self.sock.recv(4096).decode(errors="replace"))

    def drain(self):
        """The messages queued now (and forgets them)."""
        messages, self.messages = self.messages, []
        while select.select([self.sock], [], [], 0)[0]:
            messages.append(self.sock.recv(4096).decode(errors="replace"))
        return messages

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------- cases

def case_install(env):
    """The installed file list has the units, the D-Bus activation file, the
    desktop files and the man pages; systemd-analyze verify accepts the units
    (and does refuse a broken one); the man pages name the units."""
    destdir = env.path("dest")
    prefix = install(destdir)
    files = installed_files(destdir)
    expected = [f"{prefix}/lib/systemd/user/{u}" for u in UNITS] + [
        f"{prefix}/share/dbus-1/services/org.sluice.Sluice1.service",
        f"{prefix}/bin/sluicectl", f"{prefix}/bin/sluice-service", f"{prefix}/libexec/sluice-fs",
        f"{prefix}/share/man/man1/sluicectl.1", f"{prefix}/share/man/man1/sluice-fs.1",
        f"{prefix}/share/man/man1/sluice-service.1",
    ]
    if os.path.exists(os.path.join(BUILD, "applet", "sluice-applet")):
        expected += [f"{prefix}/share/applications/org.sluice.Applet.desktop",
                     f"{prefix}/bin/sluice-applet"]
        check(any(f.endswith("/xdg/autostart/org.sluice.Applet-autostart.desktop") for f in files),
              f"no autostart entry among {sorted(files)}")
    missing = [f for f in expected if f not in files]
    check(not missing, f"not installed: {missing}; installed: {sorted(files)}")

    # D-Bus activation goes through the installed unit, which runs the installed service.
    activation = os.path.join(destdir + prefix, "share/dbus-1/services/org.sluice.Sluice1.service")
    check(unit_values(activation, "SystemdService") == ["sluice-service.service"], "SystemdService=")
    check(unit_values(activation, "Exec") == [f"{prefix}/bin/sluice-service"], "Exec=")
    for unit in UNITS:
        for key in ("ExecStart", "ExecStop"):
            for command in unit_values(unit_path(destdir, prefix, unit), key):
                program = shlex.split(command)[0]
                check(destdir + program in {destdir + f for f in files},
                      f"{unit}: {key} runs {program}, which is not installed")

    for page, unit in (("sluicectl.1", "sluice-share@"), ("sluice-fs.1", "sluice-fs@"),
                       ("sluice-service.1", "sluice-service.service")):
        with open(os.path.join(destdir + prefix, "share/man/man1", page)) as f:
            check(unit in f.read().replace("\\-", "-"), f"{page} does not mention {unit}")

    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print("systemd-analyze verify: SKIPPED, no systemd-analyze here (Debian: systemd)")
        return
    # verify looks for each command's program: point them into the DESTDIR.
    units = env.mkdir("verify")
    for unit in UNITS:
        with open(unit_path(destdir, prefix, unit)) as f:
            text = f.read().replace(prefix + "/", destdir + prefix + "/")
        with open(os.path.join(units, unit), "w") as f:
            f.write(text)
    with open(os.path.join(units, "broken@.service"), "w") as f:
        f.write("[Service]\nType=notify\nExecStart=/nonexistent/sluice-fs\nBogusKey=1\n")
    runtime = env.mkdir("verify-runtime", mode=0o700)
    verify_env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
    for unit in UNITS + ("broken@.service",):
        r = subprocess.run([analyze, "verify", "--man=no", "--user", "--recursive-errors=no",
                            os.path.join(units, unit)], capture_output=True, text=True,
                           timeout=60, env=verify_env, cwd=units)
        output = (r.stdout + r.stderr).strip()
        if unit == "broken@.service":
            check(r.returncode != 0 and "nonexistent" in output and "BogusKey" in output,
                  f"systemd-analyze verify let a broken unit pass: {r.returncode} {output}")
        else:
            check(r.returncode == 0 and not output, f"systemd-analyze verify {unit}: {output}")
    print(f"systemd-analyze verify: {', '.join(UNITS)} clean")


def service_pid(env):
    r = env.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                 "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", svc.BUS_NAME],
                check_rc=0)
    return int(r.stdout.strip("()\n, ").split()[-1])


def case_share_unit(env):
    """sluice-share@TAG.service's ExecStart/ExecStop against the real service,
    activated over D-Bus by the first: active (READY=1) once the share runs,
    inactive (exit 0) when ExecStop stopped it or on SIGTERM (the share stops),
    still active over a worker crash the service recovers from, failed (exit 1)
    when the share fails, the service goes away or the share does not exist."""
    destdir = env.path("dest")
    prefix = install(destdir)
    unit = unit_path(destdir, prefix, "sluice-share@.service")
    check(unit_values(unit, "Type") == ["notify"], "Type=notify")
    tag = "my-docs"   # a "-": %i keeps it, %I would make it "/"
    specifiers = {"%i": tag}
    start_argv = expand(unit_values(unit, "ExecStart")[0], destdir, specifiers, {})
    stop_argv = expand(unit_values(unit, "ExecStop")[0], destdir, specifiers, {})
    start_argv[0] = env.reachable(start_argv[0])
    stop_argv[0] = env.reachable(stop_argv[0])
    notify = Notify(env)
    unit_env = dict(env.env, NOTIFY_SOCKET=notify.address)

    check(not env.name_owned(), "the service runs before the unit")
    env.ctl("add", env.path("share"), "--tag", tag, "--no-autostart")

    def start_unit():
        proc = subprocess.Popen(start_argv, env=unit_env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **env.user_kwargs())
        ready = notify.wait("READY=1", 120, "sluicectl start --wait", proc)
        check(proc.poll() is None, "ExecStart exited after READY=1")
        s = env.share(tag)
        check(s["state"] == "running" and len(env.worker_pids(tag)) == 1,
              f"READY=1 but the share is {s}")
        check(f"STATUS={tag}: " in ready, f"no STATUS= with READY=1: {ready!r}")
        return proc

    def exit_status(proc, timeout=60):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise Failure(f"ExecStart did not exit within {timeout} s")
        return proc.returncode, err

    # systemctl --user start, then stop: ExecStop stops the share; ExecStart exits 0.
    proc = start_unit()
    env.run(stop_argv, check_rc=0)
    status, err = exit_status(proc)
    check(status == 0, f"after ExecStop, ExecStart exited {status}: {err}")
    check(env.share(tag)["state"] == "stopped", f"after ExecStop: {env.share(tag)}")
    wait_for(lambda: not env.worker_pids(tag), 30, "the worker to exit after ExecStop")

    # systemd's SIGTERM alone (ExecStop failed, systemctl kill): the share stops too.
    proc = start_unit()
    proc.send_signal(signal.SIGTERM)
    status, err = exit_status(proc)
    notify.wait("STOPPING=1", 30, "SIGTERM")
    check(status == 0, f"after SIGTERM, ExecStart exited {status}: {err}")
    check(env.share(tag)["state"] == "stopped", f"after SIGTERM: {env.share(tag)}")

    # A worker crash the service recovers from: the unit stays active.
    proc = start_unit()
    old = env.worker_pids(tag)
    os.kill(old[0], signal.SIGKILL)
    wait_for(lambda: env.share(tag)["state"] == "running" and env.worker_pids(tag) not in ([], old),
             60, "the service to restart the worker")
    check(proc.poll() is None, f"a recovered worker crash ended the unit: {proc.poll()}")
    # A share that fails for good (its folder is gone: the service's check
    # before the restart fails it): the unit fails, with the reason in its log.
    os.rename(env.path("share"), env.path("share-gone"))
    os.kill(env.worker_pids(tag)[0], signal.SIGKILL)
    status, err = exit_status(proc, 120)
    os.rename(env.path("share-gone"), env.path("share"))
    check(status == 1 and f"“{tag}” failed: The folder" in err and "does not exist" in err,
          f"a failed share: ExecStart exited {status}: {err}")

    # The service killed: the unit fails (Restart=on-failure starts it again).
    proc = start_unit()
    os.kill(service_pid(env), signal.SIGKILL)
    status, err = exit_status(proc)
    check(status == 1 and "sluice-service stopped" in err,
          f"after the service was killed, ExecStart exited {status}: {err}")
    env.check_no_workers()
    # ... and the restart brings the share back through a freshly activated service.
    proc = start_unit()
    env.run(stop_argv, check_rc=0)
    check(exit_status(proc)[0] == 0, "the restarted unit did not stop cleanly")

    # No such share: a failed unit, and never READY=1.
    argv = expand(unit_values(unit, "ExecStart")[0], destdir, {"%i": "nope"}, {})
    argv[0] = start_argv[0]
    notify.drain()
    r = env.run(argv, env=unit_env)
    check(r.returncode == 1 and "nope" in r.stderr, f"unknown share: {r.returncode} {r.stderr}")
    check(not any("READY=1" in m.split("\n") for m in notify.drain()),
          "READY=1 for a share that does not exist")
    os.kill(service_pid(env), signal.SIGTERM)
    wait_for(lambda: not env.name_owned(), 30, "the activated service to exit")
    env.check_no_workers()
    notify.close()


def run_fs_unit(env, destdir, prefix, name, notify):
    unit = unit_path(destdir, prefix, "sluice-fs@.service")
    config_home = env.path("config")
    specifiers = {"%i": name, "%t": env.path("run"), "%E": config_home, "%h": env.path("home")}
    env_file = unit_values(unit, "EnvironmentFile")[0]
    for spec, value in specifiers.items():
        env_file = env_file.replace(spec, value)
    environment = read_env_file(env_file)
    argv = expand(unit_values(unit, "ExecStart")[0], destdir, specifiers, environment)
    argv[0] = env.reachable(argv[0])
    # RuntimeDirectory= and its mode, as systemd makes them
    runtime_dir = unit_values(unit, "RuntimeDirectory")[0].replace("%i", name)
    env.mkdir("run", *runtime_dir.split("/"), mode=int(unit_values(unit, "RuntimeDirectoryMode")[0], 8))
    socket_path = env.path("run", runtime_dir, "socket")
    check(f"--socket-path={socket_path}" in argv, f"the socket is not in the runtime dir: {argv}")
    watchdog_usec = 400000
    proc = subprocess.Popen(argv, env=dict(env.env, NOTIFY_SOCKET=notify.address,
                                           WATCHDOG_USEC=str(watchdog_usec)),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            **env.user_kwargs())
    try:
        ready = notify.wait("READY=1", 60, "sluice-fs", proc)
        # READY=1 means "connect now": the socket must accept at once.
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(socket_path)
        except OSError as e:
            raise Failure(f"READY=1 came, but connecting to {socket_path} failed: {e}")
        probe.close()
        check("STATUS=Serving" in ready, f"READY=1 without a STATUS= line: {ready!r}")
        with open(f"/proc/{proc.pid}/status") as f:
            check(re.search(r"^Seccomp:\s+2$", f.read(), re.M), "sluice-fs runs without its seccomp filter")
        with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
            cmdline = f.read().decode().split("\0")
        for option in environment.get("OPTIONS", "").split():
            check(option in cmdline, f"{option} from the options file is not on the command line: {cmdline}")
        notify.wait("WATCHDOG=1", 60, "with WATCHDOG_USEC set", proc)
        notify.wait("WATCHDOG=1", 60, "a second ping", proc)
        proc.send_signal(signal.SIGTERM)
        notify.wait("STOPPING=1", 60, "after SIGTERM", proc)
        out, _ = proc.communicate(timeout=60)
        check(proc.returncode == 0, f"sluice-fs exited {proc.returncode} after SIGTERM:\n{out}")
        check(not os.path.exists(socket_path), "the socket is left behind")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def case_fs_unit(env):
    """sluice-fs@NAME.service's ExecStart with its options file: READY=1 after
    the socket listens (seccomp and Landlock on), WATCHDOG=1 when
    WATCHDOG_USEC is set, STOPPING=1 on SIGTERM and exit 0; with a path
    NOTIFY_SOCKET (systemd's) and an abstract one."""
    destdir = env.path("dest")
    prefix = install(destdir)
    unit = unit_path(destdir, prefix, "sluice-fs@.service")
    check(unit_values(unit, "Type") == ["notify"], "Type=notify")
    env.mkdir("config", "sluice")
    env.mkdir("config", "sluice", "fs")
    env.write("config/sluice/fs/docs.conf",
              f"# sluice-fs@docs.service\nSHARED_DIR={env.path('share')}\nOPTIONS=--cache=never --xattr\n")
    for abstract in (False, True):
        notify = Notify(env, abstract=abstract)
        try:
            run_fs_unit(env, destdir, prefix, "docs", notify)
        finally:
            notify.close()
            if not abstract:
                os.unlink(notify.address)


CASES = {"install": case_install, "share-unit": case_share_unit, "fs-unit": case_fs_unit}

if __name__ == "__main__":
    # test-service.py's runner: its Env, its logs on failure, its clean-up.
    sys.exit(svc.main(CASES))

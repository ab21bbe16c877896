#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: the real sluice-service, real sluice-fs workers and sluicectl
on a private session bus (a dbus-daemon of our own whose servicedir holds an
activation file for the build's service).

    test-service.py CASE      (CASE: see CASES at the bottom)

As root with SLUICE_TEST_USER set, the bus, the service, its workers and every
client run as that user, the way a desktop user runs Sluice.  Each case checks
at the end that the service exits cleanly (status 0: under ASan, no report)
and that no sluice-fs of the case outlives it.
"""
import fcntl
import json
import os
import pwd
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata

SERVICE = os.environ["SLUICE_SERVICE"]
SLUICECTL = os.environ["SLUICECTL"]
SLUICE_FS = os.environ["SLUICE_FS"]
TEST_VMM = os.environ.get("SLUICE_TEST_VMM", "")
USER = os.environ.get("SLUICE_TEST_USER") if os.geteuid() == 0 else None
BUS_NAME = "org.sluice.Sluice1"
ROOT = "/org/sluice/Sluice1"


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def terminal_width(text):
    """Columns a terminal gives @text: East Asian wide characters take two."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


class Monitor:
    """`gdbus monitor` on one object; lines are collected in a thread.  Ready
    once gdbus says it monitors: its match rule is in place at the bus by then
    (gdbus subscribes before it asks who owns the name)."""

    def __init__(self, env, path):
        self.proc = subprocess.Popen(["gdbus", "monitor", "--session", "--dest", BUS_NAME,
                                      "--object-path", path], env=env.env, stdout=subprocess.PIPE,
                                     text=True, **env.user_kwargs())
        self.lines = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        self.wait_for("Monitoring signals", 30)

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(line)

    def text(self):
        with self.lock:
            return "".join(self.lines)

    def wait_for(self, needle, timeout):
        return wait_for(lambda: needle in self.text(), timeout,
                        f"{needle!r} from gdbus monitor; seen:\n{self.text()}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.thread.join(timeout=30)
        return self.text()


class Env:
    """One private bus, a config and runtime dir, a folder to share."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="sluice-svc-")
        os.chmod(self.tmp, 0o755)
        self.uid = self.gid = None
        if USER:
            entry = pwd.getpwnam(USER)
            self.uid, self.gid = entry.pw_uid, entry.pw_gid
        self.own(self.tmp)  # the bus socket and logs are created in it
        for name in ("run", "config", "home", "share", "services", "bin"):
            self.mkdir(name)
        os.chmod(self.path("run"), 0o700)
        self.service_bin = self.reachable(SERVICE)
        self.ctl_bin = self.reachable(SLUICECTL)
        self.fs_bin = self.reachable(SLUICE_FS)
        self.vmm_bin = self.reachable(TEST_VMM) if TEST_VMM else ""
        self.bus_address = "unix:path=" + self.path("bus")
        self.env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": self.path("home"),
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": self.path("run"),
            "XDG_CONFIG_HOME": self.path("config"),
            "DBUS_SESSION_BUS_ADDRESS": self.bus_address,
            "SLUICE_FS": self.fs_bin,
            "SLUICE_LIBVIRT_URIS": "none",
            "SLUICE_STATS_INTERVAL_MS": "200",
        }
        for key in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if key in os.environ:
                self.env[key] = os.environ[key]
        self.services = []
        self.bus = None
        self.bus_log = open(self.path("bus.log"), "w+")
        self.start_bus()

    # ---- plumbing ----
    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def mkdir(self, *names, mode=0o755):
        p = self.path(*names)
        os.makedirs(p, exist_ok=True)
        os.chmod(p, mode)
        self.own(p)
        return p

    def own(self, p):
        if self.uid is not None:
            os.chown(p, self.uid, self.gid)

    def write(self, name, text, mode=0o644):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
        self.own(p)
        return p

    def user_kwargs(self):
        if self.uid is None:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def reachable(self, binary):
        """The binary, or a copy in our temp dir when the test user cannot run it there."""
        if self.uid is None or subprocess.run(["test", "-x", binary], **self.user_kwargs()).returncode == 0:
            return binary
        copy = self.path("bin", os.path.basename(binary))
        shutil.copy2(binary, copy)
        os.chmod(copy, 0o755)
        return copy

    def run(self, argv, timeout=120, env=None, check_rc=None):
        result = subprocess.run(argv, env=env or self.env, capture_output=True, text=True,
                                timeout=timeout, **self.user_kwargs())
        if check_rc is not None and result.returncode != check_rc:
            raise Failure(f"{' '.join(argv)}: exit {result.returncode}, expected {check_rc}\n"
                          f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def start_bus(self):
        self.write("bus.conf", f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{self.bus_address}</listen>
  <servicedir>{self.path("services")}</servicedir>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""")
        # Activation: the bus starts the build's service with the bus's environment.
        self.write("services/org.sluice.Sluice1.service",
                   f"[D-BUS Service]\nName={BUS_NAME}\nExec={self.service_bin}\n")
        self.bus = subprocess.Popen(["dbus-daemon", "--nofork", "--config-file=" + self.path("bus.conf")],
                                    env=self.env, stdout=self.bus_log, stderr=subprocess.STDOUT,
                                    **self.user_kwargs())
        wait_for(lambda: os.path.exists(self.path("bus")), 60, "the test bus")

    # ---- the service ----
    def name_owned(self):
        r = self.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                      "--object-path", "/org/freedesktop/DBus",
                      "--method", "org.freedesktop.DBus.NameHasOwner", BUS_NAME], timeout=30)
        return "true" in r.stdout

    def start_service(self, *args, wait=True):
        log = open(self.path(f"service-{len(self.services)}.log"), "w+")
        proc = subprocess.Popen([self.service_bin, *args], env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, **self.user_kwargs())
        proc.log = log
        self.services.append(proc)
        if wait:
            wait_for(lambda: proc.poll() is not None or self.name_owned(), 30, "sluice-service on the bus")
            check(proc.poll() is None, f"sluice-service exited: {self.service_log(proc)}")
        return proc

    def service_log(self, proc):
        proc.log.flush()
        proc.log.seek(0)
        return proc.log.read()

    def stop_service(self, proc, expect_status=0):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise Failure("sluice-service did not exit within 30 s of SIGTERM")
        check(status == expect_status,
              f"sluice-service exited with {status}, expected {expect_status}:\n{self.service_log(proc)}")
        # a GLib critical is a bug even when the behaviour looked right
        check("-CRITICAL **" not in self.service_log(proc), "sluice-service logged a GLib critical")
        self.check_no_workers()

    def worker_pids(self, tag=None):
        """sluice-fs processes of this test (their socket is in our service's sockets' folder);
        with tag, only the worker of that share (its socket is named for the share's id)."""
        pids = []
        if self.socket_dir() is None:
            return []
        socket_arg = "--socket-path=" + self.socket_dir() + "/"
        if tag is not None:
            share = self.share(tag)
            if share is None:
                return []
            socket_arg = "--socket-path=" + os.path.join(self.socket_dir(), f"{share['id']}.sock")
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv = f.read().decode(errors="replace").split("\0")
                with open(f"/proc/{entry}/stat") as f:
                    zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
            except OSError:
                continue
            if (argv and os.path.basename(argv[0]) == "sluice-fs" and not zombie
                    and any(a.startswith(socket_arg) for a in argv)):
                pids.append(int(entry))
        return pids

    def children(self, pid):
        """(pid, state) of the processes whose parent is pid."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append((int(entry), fields[0]))
        return found

    def check_no_zombies(self, service):
        zombies = [p for p, state in self.children(service.pid) if state == "Z"]
        check(not zombies, f"unreaped workers of the service: {zombies}")

    @staticmethod
    def fd_targets(pid, first=0):
        targets = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if int(fd) >= first:
                try:
                    targets.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except OSError:
                    pass
        return targets

    def check_no_workers(self):
        try:
            wait_for(lambda: not self.worker_pids(), 30, "the workers to exit")
        except Failure:
            left = self.worker_pids()
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            raise Failure(f"sluice-fs processes outlived the service: {left}")

    # ---- clients ----
    def ctl(self, *args, rc=0):
        return self.run([self.ctl_bin, *args], check_rc=rc)

    def ctl_json(self, *args, rc=0):
        r = self.ctl("--json", *args, rc=rc)
        try:
            return json.loads(r.stdout)
        except ValueError as e:
            raise Failure(f"sluicectl --json {' '.join(args)} printed no JSON ({e}): {r.stdout!r}")

    def share(self, name):
        for s in self.ctl_json("list"):
            if name in (s["tag"], s["id"], s["object_path"]):
                return s
        return None

    def wait_state(self, name, state, timeout=30):
        return wait_for(lambda: (lambda s: s if s and s["state"] == state else None)(self.share(name)),
                        timeout, f"share {name} to be {state} (now {self.share(name)})")

    def gdbus_call(self, path, method, *args):
        return self.run(["gdbus", "call", "--session", "--dest", BUS_NAME, "--object-path", path,
                         "--method", method, *args])

    def vmm(self, socket, *args):
        return self.run([self.vmm_bin, "--socket", socket, *args], timeout=60)

    def socket_dir(self):
        """The workers' sockets' folder (/tmp/sluice-UID-XXXXXX, service/socket-dir.h),
        named by the link in the runtime folder; None before the service made it."""
        try:
            return os.readlink(self.path("run", "sluice", "sockets"))
        except OSError:
            return None

    def close(self):
        for proc in self.services:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for pid in self.worker_pids():
            os.kill(pid, signal.SIGKILL)
        if self.bus:
            self.bus.terminate()
            self.bus.wait()
        if self.socket_dir() is not None:
            shutil.rmtree(self.socket_dir(), ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def dump_logs(self):
        for proc in self.services:
            print(f"---- service log ----\n{self.service_log(proc)}")
        self.bus_log.flush()
        self.bus_log.seek(0)
        print(f"---- bus log (activated services) ----\n{self.bus_log.read()}")


# ---------------------------------------------------------------- cases

def case_lifecycle(env):
    """add, start, stop, remove: state, socket, worker process, config file."""
    service = env.start_service()
    added = env.ctl_json("add", env.path("share"))
    check(added["tag"] == "share" and added["state"] == "stopped", f"added: {added}")
    check(added["path"] == env.path("share"), f"path: {added}")
    check(env.share("share") is not None, "the new share is not listed")
    check(not env.worker_pids(), "a worker runs before Start")

    env.ctl("start", "share")
    s = env.share("share")
    check(s["state"] == "running", f"after start: {s}")
    sock = s["socket_path"]
    # outside the runtime folder (a system VM's QEMU is let into the sockets' folder)
    check(env.socket_dir() is not None and env.socket_dir().startswith("/tmp/sluice-")
          and sock.startswith(env.socket_dir() + "/"), f"socket path {sock}")
    check(os.path.exists(sock), "the worker's socket does not exist")
    check(os.stat(env.socket_dir()).st_mode & 0o777 == 0o700, "socket dir is not 0700")
    check(os.stat(env.socket_dir()).st_uid == os.stat(env.path("run")).st_uid,
          "the socket dir is not the user's")
    # systemd-tmpfiles' ageing of /tmp skips a folder it cannot lock exclusively
    probe = os.open(env.socket_dir(), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        check(False, "the service holds no lock on its sockets' folder (tmpfiles would age it)")
    except BlockingIOError:
        pass
    finally:
        os.close(probe)
    workers = env.worker_pids("share")
    check(len(workers) == 1, f"workers: {env.worker_pids()}")
    check([p for p, _ in env.children(service.pid)] == workers, "the worker is not the service's child")
    # No descriptor of the service leaks into the worker: beyond stdio, nothing
    # the worker holds (sockets, pipes, files) is also open in the service.
    shared = {t for t in env.fd_targets(workers[0], 3) & env.fd_targets(service.pid)
              if not t.startswith("/dev/") and not t.startswith("anon_inode:")}
    # both open the sockets' folder themselves: the worker to remove its socket
    # at exit, the service to keep it locked (neither inherited the other's)
    shared.discard(env.socket_dir())
    # what the worker stored in the service's keeper (--resume: its listening
    # socket, its state memfds) is held by both on purpose; nothing else is
    shared = {t for t in shared if not t.startswith("/memfd:sluice-fs-")}
    with open("/proc/net/unix") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == sock:
                shared.discard(f"socket:[{fields[6]}]")
    check(not shared, f"descriptors shared by the service and its worker: {shared}")

    env.ctl("stop", "share")
    s = env.share("share")
    check(s["state"] == "stopped" and s["socket_path"] == "", f"after stop: {s}")
    wait_for(lambda: not env.worker_pids(), 30, "the worker to exit after Stop")
    check(not os.path.exists(sock), "the socket is left behind after Stop")
    env.check_no_zombies(service)

    env.ctl("start", added["id"])
    check(env.share("share")["state"] == "running", "start by id")
    env.ctl("remove", added["object_path"])
    check(env.ctl_json("list") == [], "the share is still listed after remove")
    wait_for(lambda: not env.worker_pids(), 30, "the worker to exit after remove")
    with open(env.path("config", "sluice", "shares.ini")) as f:
        check("share" not in f.read().replace("Shares of sluice-service", ""),
              "removed share is still in shares.ini")
    env.stop_service(service)


def case_persistence(env):
    """Shares, settings and autostart survive a service restart."""
    env.mkdir("share", "a")
    env.mkdir("share", "b")
    service = env.start_service()
    a = env.ctl_json("add", env.path("share", "a"), "--tag", "alpha", "--readonly")
    b = env.ctl_json("add", env.path("share", "b"), "--no-autostart")
    env.ctl("set", "b", "readonly", "on")
    env.ctl("set", "b", "readonly", "off")
    env.ctl("set", "alpha", "autostart", "on")
    env.stop_service(service)

    with open(env.path("config", "sluice", "shares.ini")) as f:
        ini = f.read()
    check("[share 1]" in ini and "[share 2]" in ini and "tag=alpha" in ini, f"shares.ini:\n{ini}")

    service = env.start_service()
    s = wait_for(lambda: (lambda x: x if x and x["state"] == "running" else None)(env.share("alpha")),
                 30, "the autostart share to run after a restart")
    check(s["id"] == a["id"] and s["read_only"] and s["path"] == env.path("share", "a"), f"alpha: {s}")
    t = env.share("b")
    check(t is not None and t["id"] == b["id"], f"b after restart: {t}")
    check(t["state"] == "stopped" and not t["read_only"] and not t["autostart"], f"b: {t}")
    # A new share gets a new id, never a reused one.
    c = env.ctl_json("add", env.path("share"), "--tag", "gamma")
    check(int(c["id"]) > int(b["id"]), f"new id {c['id']}")
    env.stop_service(service)


def case_corrupt_config(env):
    """Bad entries: one log line each, good ones load, the file is kept aside."""
    env.mkdir("config", "sluice")
    good = env.mkdir("share", "good")
    other = env.mkdir("share", "other")
    text = f"""# hand-edited
[share 1]
path={good}
tag=good
read-only=true

this line is garbage

[share 2]
tag=nopath

[share 3]
path={other}
tag=good

[share 4]
path=relative/path
tag=rel

[share 5]
path={other}
tag={'x' * 40}

[share 6]
path={other}
tag=badbool
autostart=maybe

[bogus group]
path={other}
tag=bogus

[share 7]
path={other}
tag=fine
autostart=false
"""
    ini = env.write("config/sluice/shares.ini", text)
    service = env.start_service()
    shares = env.ctl_json("list")
    tags = sorted(s["tag"] for s in shares)
    # [share 5]'s tag is too long: mended (cut), not skipped (test-add-share.py add-tags)
    check(tags == ["fine", "good", "x" * 36], f"loaded tags {tags}")
    log = env.service_log(service)
    for what in ("this line is garbage", "[share 2]", "[share 3]", "[share 4]", "[share 5]",
                 "[share 6]", "[bogus group]"):
        check(sum(what in line for line in log.splitlines()) == 1,
              f"expected one log line about {what}:\n{log}")
    aside = [n for n in os.listdir(env.path("config", "sluice")) if n.startswith("shares.ini.bad-")]
    check(len(aside) == 1, f"kept-aside copies: {aside}")
    with open(env.path("config", "sluice", aside[0])) as f:
        check(f.read() == text, "the kept-aside copy differs from the original")
    with open(ini) as f:
        check(f.read() == text, "the file was rewritten without a change")
    # A change rewrites shares.ini; the copy stays.
    env.ctl("add", env.path("share"), "--tag", "new")
    with open(ini) as f:
        now = f.read()
    check("tag=new" in now and "garbage" not in now, f"rewritten shares.ini:\n{now}")
    check(os.path.exists(env.path("config", "sluice", aside[0])), "the kept-aside copy vanished")
    env.stop_service(service)


def case_errors(env):
    """Named D-Bus errors with useful messages; sluicectl exit status 1."""
    service = env.start_service()
    env.write("share/file.txt", "x")
    env.mkdir("closed", mode=0o000)
    env.ctl("add", env.path("share"), "--tag", "dup")

    def add_error(path, options="{}"):
        r = env.gdbus_call(ROOT, "org.sluice.Sluice1.Manager.AddShare", path, "", options)
        check(r.returncode != 0, f"AddShare {path} {options} succeeded")
        return r.stderr

    cases = [
        (env.path("missing"), "{}", "NotFound", "does not exist"),
        (env.path("share", "file.txt"), "{}", "NotADirectory", "not a folder"),
        ("relative/dir", "{}", "InvalidArgument", "absolute path"),
        (env.path("home"), "{'tag': <'dup'>}", "TagInUse", "already used"),
        (env.path("home"), "{'tag': <'%s'>}" % ("t" * 37), "InvalidArgument", "at most 36 bytes"),
        (env.path("home"), "{'cache': <'sometimes'>}", "InvalidArgument", "auto, always or never"),
        (env.path("home"), "{'colour': <'red'>}", "InvalidArgument", "Unknown option"),
        (env.path("home"), "{'read-only': <'yes'>}", "InvalidArgument", "must be of type"),
        (env.path("share"), "{}", "AlreadyShared", "already shared"),
    ]
    if env.uid is not None or os.geteuid() != 0:  # root reads any folder
        cases.append((env.path("closed"), "{}", "PermissionDenied", "cannot read"))
    for path, options, name, words in cases:
        err = add_error(path, options)
        check(f"org.sluice.Sluice1.Error.{name}" in err and words in err,
              f"AddShare({path}, {options}): expected {name} / '{words}', got {err}")

    # The same words through sluicectl, with exit status 1.
    r = env.ctl("add", env.path("missing"), rc=1)
    check("does not exist" in r.stderr, r.stderr)
    r = env.ctl("add", env.path("home"), "--tag", "dup", rc=1)
    check("already used" in r.stderr, r.stderr)
    r = env.ctl("start", "nosuchshare", rc=1)
    check("no share" in r.stderr, r.stderr)
    r = env.gdbus_call(ROOT, "org.sluice.Sluice1.Manager.RemoveShare", ROOT + "/share/999")
    check("org.sluice.Sluice1.Error.NotFound" in r.stderr, r.stderr)
    # Tags derived from the folder's name: made unique, cut to 36 bytes on a character boundary.
    s = env.ctl_json("add", env.path("home"))
    check(s["tag"] == "home", f"derived tag {s['tag']}")
    env.mkdir("x", "home")
    s = env.ctl_json("add", env.path("x", "home"))
    check(s["tag"] == "home-2", f"derived tag for a second 'home': {s['tag']}")
    # (tags are ASCII, test-add-share.py: accents are dropped)
    long_dir = env.mkdir("é" * 40)
    s = env.ctl_json("add", long_dir)
    check(s["tag"] == "e" * 36, f"long derived tag {s['tag']!r}")
    env.stop_service(service)


def case_force_options(env):
    """StopWithOptions, DetachWithOptions, RemoveShareWithOptions: "force"
    is the one option, checked; sluicectl's --force ends the share."""
    service = env.start_service()
    added = env.ctl_json("add", env.path("share"))
    path = added["object_path"]
    env.ctl("start", "share")
    bad = [
        ("{'colour': <'red'>}", "Unknown option"),
        ("{'force': <'yes'>}", "must be of type"),
        ("{'force': <uint32 1>}", "must be of type"),
    ]
    for options, words in bad:
        for method, args in (("org.sluice.Sluice1.Share.StopWithOptions", (path, options)),
                             ("org.sluice.Sluice1.Share.DetachWithOptions", (path, options)),
                             ("org.sluice.Sluice1.Manager.RemoveShareWithOptions", (ROOT, path, options))):
            r = env.gdbus_call(args[0], method, *args[1:])
            check(r.returncode != 0 and "org.sluice.Sluice1.Error.InvalidArgument" in r.stderr
                  and words in r.stderr, f"{method}({options}): {r.stderr}")
    # refused options change nothing
    check(env.share("share")["state"] == "running", f"after refused options: {env.share('share')}")
    check(len(env.worker_pids("share")) == 1, "the worker went after refused options")

    r = env.ctl("stop", "--force", "--colour", "share", rc=2)
    check("--colour" in r.stderr, r.stderr)
    env.ctl("stop", "--force", "share")
    check(env.share("share")["state"] == "stopped", f"after stop --force: {env.share('share')}")
    wait_for(lambda: not env.worker_pids(), 30, "the worker to exit after stop --force")
    r = env.gdbus_call(path, "org.sluice.Sluice1.Share.StopWithOptions", "{}")
    check(r.returncode == 0, f"StopWithOptions({{}}) of a stopped share: {r.stderr}")
    env.ctl("start", "share")
    # no VM: nothing to detach, said as for Detach
    r = env.ctl("detach", "--force", "share", rc=1)
    check("not assigned to a VM" in r.stderr, r.stderr)
    env.ctl("remove", "--force", "share")
    check(env.ctl_json("list") == [], "the share is still listed after remove --force")
    wait_for(lambda: not env.worker_pids(), 30, "the worker to exit after remove --force")
    env.stop_service(service)


def case_worker_restart(env):
    """A worker killed with SIGKILL is restarted: running again, new pid, no zombie."""
    service = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "crashy")
    env.ctl("start", "crashy")
    old = env.worker_pids("crashy")
    check(len(old) == 1, f"workers: {old}")
    # Share.Event tells the applet: "crashed", then "recovered".
    monitor = Monitor(env, ROOT + "/share/1")
    os.kill(old[0], signal.SIGKILL)
    # the transient state, from its change signal (polling could miss it)
    monitor.wait_for("'State': <'starting'>", 60)
    s = env.wait_state("crashy", "running", timeout=60)
    new = env.worker_pids("crashy")
    check(len(new) == 1 and new[0] != old[0], f"old {old}, new {new}")
    check(not os.path.exists(f"/proc/{old[0]}"), "the killed worker was not reaped")
    env.check_no_zombies(service)
    check(s["error"] == "", f"error after recovery: {s['error']}")
    monitor.wait_for("Share.Event ('crashed'", 30)
    monitor.wait_for("Share.Event ('recovered'", 30)
    monitor.stop()
    check("stopped unexpectedly" in env.service_log(service), "no log line about the crash")
    # It still serves: the socket answers.
    check(os.path.exists(s["socket_path"]), "no socket after the restart")
    env.stop_service(service)


def case_worker_gives_up(env):
    """Five crashes within a minute: State=failed with Error; Start tries again."""
    service = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "fragile")
    env.ctl("start", "fragile")
    for crash in range(5):
        pid = wait_for(lambda: env.worker_pids("fragile") if env.share("fragile")["state"] == "running" else None,
                       30, f"the worker to run before crash {crash + 1}")
        os.kill(pid[0], signal.SIGKILL)
        wait_for(lambda: env.share("fragile")["state"] != "running", 30, "the crash to be noticed")
    s = env.wait_state("fragile", "failed", timeout=30)
    check("5 times within a minute" in s["error"], f"error: {s['error']}")
    time.sleep(1.5)  # no restart is scheduled any more
    check(not env.worker_pids("fragile") and env.share("fragile")["state"] == "failed", "restarted after giving up")
    env.ctl("start", "fragile")
    check(env.share("fragile")["state"] == "running" and env.share("fragile")["error"] == "",
          "Start after giving up")
    env.stop_service(service)


def case_readonly_live(env):
    """ReadOnly toggles a running worker live: a FUSE write works, then fails with EROFS."""
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    service = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "rw")
    env.ctl("start", "rw")
    sock = env.share("rw")["socket_path"]
    pid = env.worker_pids("rw")
    r = env.vmm(sock, "write", "before.txt", "hello")
    check(r.returncode == 0, f"write before the toggle failed: {r.stderr}")
    with open(env.path("share", "before.txt")) as f:
        check(f.read() == "hello", "the write did not reach the folder")

    env.ctl("set", "rw", "readonly", "on")
    check(env.share("rw")["read_only"], "ReadOnly is not true")
    r = env.vmm(sock, "write", "after.txt", "nope")
    check(r.returncode == 1 and "error: EROFS" in r.stderr,
          f"write after the toggle: exit {r.returncode}, {r.stderr}")
    check(not os.path.exists(env.path("share", "after.txt")), "a read-only write created a file")
    r = env.vmm(sock, "read", "before.txt")
    check(r.returncode == 0 and r.stdout == "hello", f"read while read-only: {r.stdout!r} {r.stderr}")
    check(env.worker_pids("rw") == pid, "the worker was restarted by the toggle")

    env.ctl("set", "rw", "readonly", "off")
    r = env.vmm(sock, "write", "again.txt", "yes")
    check(r.returncode == 0, f"write after switching back: {r.stderr}")

    # A worker that does not answer: the write fails with a named error once the
    # service gives up on it (5 s), ReadOnly stays false, and the service answers
    # others meanwhile (the toggle waits off the main loop).
    path = env.share("rw")["object_path"]
    os.kill(pid[0], signal.SIGSTOP)
    try:
        setter = subprocess.Popen(["gdbus", "call", "--session", "--timeout", "60", "--dest", BUS_NAME,
                                   "--object-path", path, "--method", "org.freedesktop.DBus.Properties.Set",
                                   "org.sluice.Sluice1.Share", "ReadOnly", "<true>"],
                                  env=env.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  **env.user_kwargs())
        check(env.share("rw")["read_only"] is False, "ReadOnly changed before the worker switched")
        out, err = setter.communicate(timeout=60)
    finally:
        os.kill(pid[0], signal.SIGCONT)
    check(setter.returncode != 0 and "org.sluice.Sluice1.Error.WorkerFailed" in err,
          f"ReadOnly write to a stopped worker: exit {setter.returncode}, {out!r} {err!r}")
    check(env.share("rw")["read_only"] is False, "ReadOnly is true although the worker did not switch")
    # the worker may still carry out the late request when it wakes up; the
    # service repeats the mode it reports, so the share ends up writable
    wait_for(lambda: env.vmm(sock, "write", "still.txt", "rw").returncode == 0, 30,
             "the share to be writable after the refused toggle")
    check(env.share("rw")["read_only"] is False, "ReadOnly changed after the refused toggle")
    env.stop_service(service)


def case_stats(env):
    """Share.Stats: the documented keys, totals and rates that move with reads."""
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    service = env.start_service()
    env.write("share/data.bin", "s" * 100000)
    env.ctl("add", env.path("share"), "--tag", "st")
    env.ctl("start", "st")
    sock = env.share("st")["socket_path"]

    def stats():
        return env.ctl_json("stats", "st")["stats"]

    first = wait_for(lambda: stats() or None, 30, "a first stats sample")
    keys = {"timestamp-us", "since-us", "uptime-us", "bytes-read", "bytes-written", "requests", "errors",
            "read-bytes-per-sec", "write-bytes-per-sec", "ops-per-sec", "errors-per-sec",
            "latency-p50-us", "latency-p99-us", "queues",
            "worker-crashes", "resume-replayed", "resume-failed"}
    check(set(first) == keys, f"keys {sorted(first)}")
    check([q["index"] for q in first["queues"]] == [0, 1], f"queues {first['queues']}")
    check(set(first["queues"][1]) == {"index", "requests", "kicks", "polled", "batches", "in-flight"},
          f"queue keys {first['queues'][1]}")
    before = first["bytes-read"]

    r = env.vmm(sock, "read", "data.bin")
    check(r.returncode == 0 and len(r.stdout) == 100000, f"read: {len(r.stdout)} bytes, {r.stderr}")
    moved = wait_for(lambda: (lambda s: s if s["bytes-read"] >= before + 100000 else None)(stats()),
                     10, "bytes-read to grow by the file's size")
    check(moved["requests"] > first["requests"], f"requests did not grow: {moved}")
    check(moved["queues"][1]["requests"] > first["queues"][1]["requests"], "queue 1 requests")
    check(moved["latency-p99-us"] >= moved["latency-p50-us"] > 0, f"latency {moved}")

    # Rates: --watch sees the burst of a read (one sample or two, depending on
    # where the sample boundary falls), then the rate falling back to 0.
    watch = subprocess.Popen([env.ctl_bin, "--json", "stats", "st", "--watch"],
                             env=env.env, stdout=subprocess.PIPE, text=True, **env.user_kwargs())
    samples = []
    try:
        samples.append(json.loads(watch.stdout.readline())["stats"])  # subscribed now
        r = env.vmm(sock, "read", "data.bin")
        check(r.returncode == 0, f"second read: {r.stderr}")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready, _, _ = select.select([watch.stdout], [], [], 1)
            if ready:
                samples.append(json.loads(watch.stdout.readline())["stats"])
                rates = [x["read-bytes-per-sec"] for x in samples]
                if any(r > 0 for r in rates[1:]) and rates[-1] == 0:
                    break
    finally:
        watch.kill()
        watch.wait()
    rates = [x["read-bytes-per-sec"] for x in samples]
    check(any(r > 0 for r in rates[1:]) and rates[-1] == 0, f"read rates seen by --watch: {rates}")
    check(samples[-1]["bytes-read"] >= moved["bytes-read"] + 100000, f"after the second read {samples[-1]}")
    # --count N: exits by itself after N changes.
    watch = subprocess.Popen([env.ctl_bin, "stats", "st", "--watch", "--count", "1"],
                             env=env.env, stdout=subprocess.PIPE, text=True, **env.user_kwargs())
    try:
        first_line = watch.stdout.readline()
        check(env.vmm(sock, "ls").returncode == 0, "ls through the test VMM")
        rest, _ = watch.communicate(timeout=20)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    check(watch.returncode == 0 and "ops/s" in first_line and "ops/s" in rest,
          f"--count 1: exit {watch.returncode}, {first_line!r} {rest!r}")
    wait_for(lambda: stats()["ops-per-sec"] == 0, 30, "the rates to settle after ls")
    # Nothing changes: no PropertiesChanged, so --watch sees nothing new within 1 s.
    quiet = subprocess.run(["timeout", "1.5", env.ctl_bin, "--json", "stats", "st", "--watch"],
                           env=env.env, capture_output=True, text=True, **env.user_kwargs())
    check(len(quiet.stdout.splitlines()) == 1,
          f"Stats changed while idle (exit {quiet.returncode}):\n{quiet.stdout}{quiet.stderr}")
    env.ctl("stop", "st")
    check(env.ctl_json("stats", "st")["stats"] == {}, "Stats not empty after stop")
    env.stop_service(service)


def case_stats_restart(env):
    """The totals a person reads are the share's since it started: a crashed worker's
    restart and a read-only switch add to them, never start them again; sluicectl
    says since when."""
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    service = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "tally")
    started = time.time()
    env.ctl("start", "tally")
    sock = env.share("tally")["socket_path"]

    def stats():
        return env.ctl_json("stats", "tally")["stats"]

    def written(n):
        return lambda: (lambda st: st if st.get("bytes-written") == n else None)(stats())

    first = "a" * 40000
    r = env.vmm(sock, "write", "first.bin", first)
    check(r.returncode == 0, f"write through the first worker: {r.stderr}")
    before = wait_for(written(len(first)), 30, f"bytes-written to be {len(first)}")
    since = before["since-us"]
    check(started - 60 < since / 1e6 <= time.time(), f"since-us {since} is not the share's start ({started})")

    old = env.worker_pids("tally")
    check(len(old) == 1, f"workers: {old}")
    os.kill(old[0], signal.SIGKILL)
    wait_for(lambda: (lambda p: p if p and p != old else None)(env.worker_pids("tally")), 60,
             "the worker to be restarted")
    env.wait_state("tally", "running", timeout=60)
    second = "b" * 3000
    r = env.vmm(sock, "write", "second.bin", second)
    check(r.returncode == 0, f"write through the restarted worker: {r.stderr}")
    try:
        after = wait_for(written(len(first) + len(second)), 30,
                         f"bytes-written to be {len(first)} + {len(second)}")
    except Failure:
        raise Failure(f"the totals after the restart are not the share's: {stats()}")
    check(after["since-us"] == since, f"since-us changed with the restart: {since} -> {after['since-us']}")
    check(after["requests"] > before["requests"], f"requests dropped: {before['requests']} -> {after['requests']}")

    # a read-only switch keeps the same worker and the same count
    env.ctl("set", "tally", "readonly", "on")
    r = env.vmm(sock, "write", "refused.bin", "nope")
    check(r.returncode == 1 and "error: EROFS" in r.stderr, f"write while read-only: {r.stderr}")
    wait_for(lambda: (lambda st: st if st["errors"] > after["errors"] else None)(stats()), 30,
             "the refused write to be counted")
    st = stats()
    check(st["bytes-written"] == len(first) + len(second) and st["since-us"] == since,
          f"after the read-only switch: {st}")

    # what a person reads: the totals, and since when
    text = env.ctl("stats", "tally").stdout
    clock = time.strftime("%H:%M:%S", time.localtime(since // 1000000))
    check(f"totals since {clock}" in text, f"sluicectl stats does not say since when ({clock}):\n{text}")
    check(re.search(r"43\.0\skB total", text), f"sluicectl stats does not show the 43.0 kB written:\n{text}")

    # Stop ends the count; the next Start begins a new one, and says so
    env.ctl("stop", "tally")
    check(stats() == {}, "Stats not empty after stop")
    time.sleep(1.1)
    env.ctl("start", "tally")
    again = wait_for(lambda: stats() or None, 30, "a first sample after the new start")
    check(again["since-us"] > since and again["bytes-written"] == 0, f"after Stop and Start: {again}")
    env.stop_service(service)


def case_sluicectl(env):
    """Every command, its --json output and its exit codes."""
    service = env.start_service()
    r = env.ctl(rc=2)
    check("sluicectl --help" in r.stderr, r.stderr)
    env.ctl("frobnicate", rc=2)
    env.ctl("list", "extra", rc=2)
    env.ctl("add", rc=2)
    env.ctl("add", env.path("share"), "--bogus", rc=2)
    env.ctl("set", "x", "readonly", "maybe", rc=2)
    env.ctl("set", "x", "colour", "red", rc=2)
    env.ctl("stats", rc=2)
    env.ctl("start", rc=2)
    check("Usage" in env.ctl("--help").stdout, "--help")

    check(env.ctl_json("list") == [], "list is not empty")
    check(env.ctl_json("vms") == [], "vms with no libvirt")
    s = env.ctl_json("add", env.path("share"), "--tag", "ctl", "--cache", "never", "--queues", "2")
    check(s["tag"] == "ctl" and s["state"] == "stopped" and s["autostart"], f"add: {s}")
    relative = env.mkdir("share", "sub")
    # A relative path is relative to sluicectl's working directory, not the service's.
    sub = subprocess.run([env.ctl_bin, "--json", "add", "sub"], cwd=env.path("share"), env=env.env,
                         capture_output=True, text=True, **env.user_kwargs())
    check(sub.returncode == 0 and json.loads(sub.stdout)["path"] == relative,
          f"relative path: {sub.stdout} {sub.stderr}")

    check(env.ctl_json("start", "ctl")["ok"], "start --json")
    check(len(env.worker_pids("ctl")) == 1, "no worker after start")
    st = env.ctl_json("stats", "ctl")
    check(st["tag"] == "ctl" and "queues" in wait_for(lambda: env.ctl_json("stats", "ctl")["stats"], 30, "stats"),
          f"stats: {st}")
    check(len(env.ctl_json("stats", "ctl")["stats"]["queues"]) == 3, "2 request queues + hiprio")
    check("read" in env.ctl("stats", "ctl").stdout, "human stats")
    check(env.ctl_json("set", "ctl", "readonly", "on")["ok"], "set readonly")
    check(env.share("ctl")["read_only"], "read_only after set")
    check(env.ctl_json("set", "ctl", "autostart", "off")["ok"], "set autostart")
    check(not env.share("ctl")["autostart"], "autostart after set")

    # No VM assigned: attach and detach fail with the service's words.
    r = env.ctl("attach", "ctl", rc=1)
    check("not assigned to a VM" in r.stderr, r.stderr)
    r = env.ctl("detach", "ctl", rc=1)
    check("not assigned to a VM" in r.stderr, r.stderr)
    check(env.ctl_json("set", "ctl", "vm", "somevm")["ok"], "set vm")
    check(env.share("ctl")["vm"] == "somevm", "vm after set")
    r = env.ctl("attach", "ctl", rc=1)
    check("somevm" in r.stderr, f"attach to an unknown VM: {r.stderr}")
    check(env.ctl_json("detach", "ctl")["ok"], "detach of a share that is not attached")
    env.ctl("set", "ctl", "vm", "")
    check(env.share("ctl")["vm"] == "", "vm cleared")

    check(env.ctl_json("stop", "ctl")["ok"], "stop --json")
    check(env.share("ctl")["state"] == "stopped", "state after stop")
    check(env.ctl_json("remove", "ctl")["ok"], "remove --json")
    check(env.share("ctl") is None, "removed share still listed")
    env.ctl("remove", "ctl", rc=1)
    # A VM name of wide characters: the columns after it still line up on a
    # terminal.  (Tags are ASCII; with no libvirt, any VM name is taken.)
    wide = env.mkdir("share", "docs")
    env.ctl("add", wide, "--vm", "문서", "--no-autostart")
    text = env.ctl("list").stdout
    check("TAG" in text and "sub" in text and "문서" in text and "ctl" not in text, f"list:\n{text}")
    # The PATH column starts at the same terminal column in the header and both rows.
    starts = [terminal_width(line[:line.index(p)]) for line in text.splitlines()
              for p in ("PATH", relative, wide) if line.endswith(p)]
    check(len(starts) == 3 and len(set(starts)) == 1, f"list columns do not line up:\n{text}")
    env.stop_service(service)


def case_activation(env):
    """sluicectl works without a running service: the bus activates it."""
    check(not env.name_owned(), "the service runs before the test")
    check(env.ctl_json("list") == [], "list through activation")
    check(env.name_owned(), "the service was not activated")
    env.ctl("add", env.path("share"), "--tag", "act")
    env.ctl("start", "act")
    check(len(env.worker_pids("act")) == 1, "no worker for the activated service")
    r = env.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                 "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", BUS_NAME], check_rc=0)
    pid = int(r.stdout.strip("()\n, ").split()[-1])
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not env.name_owned(), 30, "the activated service to exit")
    env.check_no_workers()
    # Activated again, it restores the share.
    check([s["tag"] for s in env.ctl_json("list")] == ["act"], "share lost across activations")
    env.wait_state("act", "running")
    r = env.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                 "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", BUS_NAME], check_rc=0)
    os.kill(int(r.stdout.strip("()\n, ").split()[-1]), signal.SIGTERM)
    wait_for(lambda: not env.name_owned(), 30, "the activated service to exit")
    env.check_no_workers()
    # Its output went to the bus's log: under ASan, a report would be there.
    env.bus_log.flush()
    env.bus_log.seek(0)
    check("Sanitizer" not in env.bus_log.read(), "a sanitizer report from the activated service")


def case_replace(env):
    """--replace takes the name over; the old service stops its workers and exits 0;
    without --replace a second service refuses to start; no XDG_RUNTIME_DIR is a clear error."""
    first = env.start_service()
    env.ctl("add", env.path("share"), "--tag", "rep")
    env.ctl("start", "rep")
    old = env.worker_pids("rep")
    second = env.start_service(wait=False)
    check(second.wait(30) == 1, "a second service without --replace did not fail")
    check("--replace" in env.service_log(second), env.service_log(second))
    third = env.start_service("--replace", wait=False)
    check(first.wait(30) == 0, f"the replaced service: {env.service_log(first)}")
    wait_for(lambda: env.worker_pids("rep") and env.worker_pids("rep") != old, 30,
             "the new service to start the share")
    env.stop_service(third)

    noenv = dict(env.env)
    del noenv["XDG_RUNTIME_DIR"]
    r = env.run([env.service_bin], env=noenv)
    check(r.returncode == 1 and "XDG_RUNTIME_DIR" in r.stderr, f"{r.returncode}: {r.stderr}")


def cases_in(namespace):
    """A test module's cases: its case_NAME functions, by NAME with "-" for "_"."""
    return {name[len("case_"):].replace("_", "-"): fn for name, fn in namespace.items()
            if name.startswith("case_")}


CASES = cases_in(globals())


def main(cases=None):
    """Runs the case named on the command line (of `cases`, this module's by
    default) in a fresh Env; its logs are printed when it fails."""
    cases = CASES if cases is None else cases
    if len(sys.argv) != 2 or sys.argv[1] not in cases:
        print(f"usage: {sys.argv[0]} {'|'.join(cases)}", file=sys.stderr)
        return 2
    env = None
    try:
        env = Env()
        cases[sys.argv[1]](env)
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

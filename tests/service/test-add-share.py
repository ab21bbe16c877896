#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: what a person may hand the API (folders, tags, VMs).

    test-add-share.py CASE      (CASE: see CASES at the bottom)

Driven from outside, with `gdbus call … AddShare` and sluicectl, against the
real service on test-service.py's private bus (Env): as root with
SLUICE_TEST_USER set, everything runs as that user.

  add-paths      a folder is shared by its real path: symbolic links and ".."
                 resolved at AddShare, stored so, and a link put in the
                 folder's place later is refused at Start; relative, missing,
                 not a folder, unreadable, loops: each its named error.
  add-system-places
                 /, /proc, /sys, /dev, /run (and below, and links to them) and
                 pseudo file systems by their type are refused with the reason;
                 tmpfs is not; shares.ini entries there are skipped.
  add-tags       tags outside [A-Za-z0-9_.-] (first a letter or digit, at most
                 36 bytes) are refused naming the set; default tags are made
                 from folder names in that set, unique; bad tags in shares.ini
                 are mended, never lost.
  add-unknown-vm with libvirt's in-process test:///default driver: AddShare and
                 SetVm refuse a VM no connected libvirt knows (naming those it
                 knows), take any name while no libvirt answers, and a share
                 from shares.ini whose VM libvirt does not know says it waits.
"""
import configparser
import importlib.util
import json
import os
import subprocess
import sys

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for, ROOT = st.Failure, st.check, st.wait_for, st.ROOT

ERROR = "org.sluice.Sluice1.Error."
TAG_SET = "A–Z and a–z, digits, “_”, “.” and “-”"


def gvariant_string(text):
    """text as a GVariant string literal for gdbus (quotes, backslashes, control characters)."""
    out = []
    for c in text:
        if c in "'\\":
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif ord(c) < 0x20:
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    return "'" + "".join(out) + "'"


def add_share(env, path, vm="", options="{}"):
    """AddShare through a real `gdbus call`: the CompletedProcess."""
    return env.gdbus_call(ROOT, "org.sluice.Sluice1.Manager.AddShare",
                          gvariant_string(path), gvariant_string(vm), options)


def add_ok(env, path, vm="", options="{}"):
    r = add_share(env, path, vm, options)
    check(r.returncode == 0, f"AddShare({path!r}, {vm!r}, {options}) failed: {r.stderr}")
    object_path = r.stdout.split("'")[1]
    share = env.share(object_path)
    check(share is not None, f"the new share {object_path} is not listed")
    return share


def add_refused(env, path, name, *words, vm="", options="{}"):
    r = add_share(env, path, vm, options)
    check(r.returncode != 0, f"AddShare({path!r}, {vm!r}, {options}) was accepted: {r.stdout}")
    check(ERROR + name in r.stderr, f"AddShare({path!r}, {options}): expected {name}, got {r.stderr}")
    for w in words:
        check(w in r.stderr, f"AddShare({path!r}, {options}): no {w!r} in {r.stderr}")
    return r.stderr


def saved_shares(env):
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(env.path("config", "sluice", "shares.ini"))
    return {ini[g]["tag"]: dict(ini[g]) for g in ini.sections()}


# ---------------------------------------------------------------- cases

def case_add_paths(env):
    service = env.start_service()
    real = env.mkdir("share", "real")
    other = env.mkdir("share", "other")
    env.mkdir("share", "real", "sub")
    link = env.path("share", "link")
    os.symlink(real, link)

    # A link is resolved: the share is the folder it led to, shown and saved so.
    s = add_ok(env, link, options="{'tag': <'linked'>}")
    check(s["path"] == real, f"a link's share has the path {s['path']}, expected {real}")
    check(saved_shares(env)["linked"]["path"] == real, f"shares.ini: {saved_shares(env)}")
    # Pointing the link elsewhere later does not move the share.
    os.unlink(link)
    os.symlink(other, link)
    check(env.share("linked")["path"] == real, "the share followed the link")
    # "..", "." and "//" are resolved the same way.
    add_refused(env, real + "/sub/..", "AlreadyShared", "already shared")
    s = add_ok(env, other + "/./../other//", options="{'tag': <'dots'>}")
    check(s["path"] == other, f"'..' resolved to {s['path']}")
    # A link to /etc is shared as /etc itself.
    etc = env.path("share", "etc-link")
    os.symlink("/etc", etc)
    s = add_ok(env, etc, options="{'tag': <'etc'>}")
    check(s["path"] == "/etc", f"a link to /etc is shared as {s['path']}")

    # A link put in a shared folder's place is not followed at Start.
    moved = env.mkdir("share", "moved")
    s = add_ok(env, moved, options="{'tag': <'moved'>}")
    os.rename(moved, env.path("share", "moved-away"))
    os.symlink("/etc", moved)
    r = env.ctl("start", "moved", rc=1)
    check("no longer the folder" in r.stderr and "/etc" in r.stderr, f"start: {r.stderr}")
    s = env.share("moved")
    check(s["state"] == "failed" and "no longer the folder" in s["error"], f"after start: {s}")
    check(not env.worker_pids("moved"), "a worker serves the link's target")

    # Each wrong path: its named error, and what to do.
    env.write("share/file.txt", "x")
    os.symlink(env.path("share", "file.txt"), env.path("share", "file-link"))
    os.symlink(env.path("nowhere"), env.path("share", "dangling"))
    os.symlink(env.path("share", "loop-b"), env.path("share", "loop-a"))
    os.symlink(env.path("share", "loop-a"), env.path("share", "loop-b"))
    add_refused(env, "relative/dir", "InvalidArgument", "not an absolute path", "starting with /")
    add_refused(env, "../share", "InvalidArgument", "not an absolute path")
    add_refused(env, "", "InvalidArgument", "not an absolute path")
    add_refused(env, env.path("missing"), "NotFound", "does not exist", "check the path")
    add_refused(env, env.path("share", "file.txt", "below"), "NotFound", "does not exist")
    add_refused(env, env.path("share", "dangling"), "NotFound", "symbolic link", "does not exist")
    add_refused(env, env.path("share", "file.txt"), "NotADirectory", "not a folder",
                "the folder that contains it")
    add_refused(env, env.path("share", "file-link"), "NotADirectory", "not a folder",
                "(that is, “%s”)" % env.path("share", "file.txt"))
    add_refused(env, env.path("share", "loop-a"), "InvalidArgument", "loop of symbolic links")
    if env.uid is not None or os.geteuid() != 0:  # root reads and enters any folder
        env.mkdir("closed", mode=0o000)
        env.mkdir("locked", mode=0o755)
        env.mkdir("locked", "inner")
        os.chmod(env.path("locked"), 0o000)
        try:
            add_refused(env, env.path("closed"), "PermissionDenied", "cannot read", "chmod u+rx")
            add_refused(env, env.path("locked", "inner"), "PermissionDenied", "cannot reach")
        finally:
            os.chmod(env.path("locked"), 0o755)
    # The same words through sluicectl: one line, exit status 1.
    r = env.ctl("add", env.path("share", "dangling"), rc=1)
    check(r.stderr.startswith("sluicectl: ") and "symbolic link" in r.stderr
          and len(r.stderr.strip().splitlines()) == 1, f"sluicectl add of a dangling link: {r.stderr!r}")
    env.stop_service(service)


def case_add_system_places(env):
    service = env.start_service()
    for path, words in [
            ("/", "whole file system"),
            ("/.", "whole file system"),
            ("/tmp/..", "whole file system"),
            ("/proc", "/proc"), ("/proc/self", "/proc"), ("/proc/sys/kernel", "/proc"),
            ("/sys", "/sys"), ("/sys/kernel", "/sys"),
            ("/dev", "/dev"), ("/dev/shm", "/dev"),
            ("/run", "/run"), ("/run/user", "/run"), ("/run/lock", "/run")]:
        if os.path.isdir(path):
            add_refused(env, path, "NotShareable", words)
    os.symlink("/proc", env.path("share", "proc-link"))
    add_refused(env, env.path("share", "proc-link"), "NotShareable", "(that is, “/proc”)", "in /proc")
    # A file in /proc is refused for where it is, before what it is.
    add_refused(env, "/proc/cpuinfo", "NotShareable", "/proc")
    r = env.ctl("add", "/proc", rc=1)
    check(r.stderr.startswith("sluicectl: “/proc” is in /proc") and "share a folder of your own" in r.stderr,
          f"sluicectl add /proc: {r.stderr!r}")

    # By the file system's type, wherever it is mounted (root only: mount).
    mounted = []
    try:
        if os.geteuid() == 0:
            for fstype in ("sysfs", "proc"):
                point = env.mkdir("mnt-" + fstype)
                subprocess.run(["mount", "-t", fstype, fstype, point], check=True)
                mounted.append(point)
                add_refused(env, point, "NotShareable", f"on a {fstype} file system")
            # tmpfs is where people keep files (/tmp): it may be shared.
            point = env.mkdir("mnt-tmpfs")
            subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", point], check=True)
            mounted.append(point)
            env.own(point)
            s = add_ok(env, point, options="{'tag': <'ram'>}")
            check(s["path"] == point, f"tmpfs share: {s}")
        else:
            print("SKIP: mounting pseudo file systems needs root")
    finally:
        for point in reversed(mounted):
            subprocess.run(["umount", "-l", point])
    env.stop_service(service)

    # shares.ini is not trusted either: such entries are skipped, one line each.
    good = env.mkdir("share", "good")
    env.write("config/sluice/shares.ini", f"""[share 1]
path=/
tag=root
[share 2]
path=/proc/self
tag=proc
[share 3]
path=/dev/shm
tag=shm
[share 4]
path={good}
tag=good
""")
    service = env.start_service()
    tags = [s["tag"] for s in env.ctl_json("list")]
    check(tags == ["good"], f"loaded from shares.ini: {tags}")
    log = env.service_log(service)
    for group, words in (("[share 1]", "whole file system"), ("[share 2]", "in /proc"),
                         ("[share 3]", "in /dev")):
        lines = [l for l in log.splitlines() if group in l]
        check(len(lines) == 1 and words in lines[0], f"log about {group}:\n{log}")
    env.stop_service(service)


def case_add_tags(env):
    service = env.start_service()
    folder = env.mkdir("share", "folder")
    for tag in ["a/b", "we ird", "we\nird", "tab\tbed", "문서", "café", "a:b", "a,b", "a\\b",
                "quo'te", "$HOME", "-x", ".hidden", "_x", "t" * 37]:
        options = "{'tag': <%s>}" % gvariant_string(tag)
        words = ("at most 36 bytes",) if len(tag) == 37 else \
            ("start it with a letter or a digit",) if tag[0] in "-._" else (TAG_SET,)
        err = add_refused(env, folder, "InvalidArgument", *words, options=options)
        check("\n" not in err.strip(), f"a message with a newline in it: {err!r}")
    add_refused(env, folder, "InvalidArgument", "empty", options="{'tag': <''>}")
    for tag in ["a.b-c_D9", "x" * 36, "9lives"]:
        add_ok(env, folder, options="{'tag': <'%s'>}" % tag)
        env.ctl("remove", tag)
    # sluicectl: the service's sentence, exit status 1.
    r = env.ctl("add", folder, "--tag", "a/b", rc=1)
    check(r.stderr.strip() == "sluicectl: The tag “a/b” has characters a guest cannot use without "
          "quoting: use only the letters " + TAG_SET, f"sluicectl add --tag a/b: {r.stderr!r}")

    # Default tags: the folder's name in the set, unique, at most 36 bytes.
    expected = [
        ("we\nird name", "we_ird_name"),      # a folder name with a newline
        ("Über Projekte", "Uber_Projekte"),
        ("문서", "share"),                     # nothing of it is left: a plain word
        ("é" * 40, "e" * 36),
        ("-lead.ing-", "lead.ing"),
        ("a  b//", "a_b"),
        ("docs", "docs"),
        ("x/docs", "docs-2"),
        ("y/docs", "docs-3"),
        ("l" * 40, "l" * 36),
        ("m/" + "l" * 40, "l" * 34 + "-2"),
    ]
    for name, tag in expected:
        path = env.mkdir("derive", *name.split("/"))
        s = add_ok(env, path)
        check(s["tag"] == tag, f"folder {name!r}: tag {s['tag']!r}, expected {tag!r}")
    env.stop_service(service)

    # Bad tags in shares.ini are mended (the share stays), one line each;
    # a mended tag never takes a good one.
    env.mkdir("config", "sluice")
    ko = env.mkdir("ini", "문서")
    spaced = env.mkdir("ini", "spaced")
    slashed = env.mkdir("ini", "slashed")
    kept = env.mkdir("ini", "kept")
    long_ = env.mkdir("ini", "long")
    text = f"""[share 1]
path={spaced}
tag=we ird
[share 2]
path={slashed}
tag=a/b
[share 3]
path={ko}
tag=문서
[share 4]
path={kept}
tag=we_ird
[share 5]
path={long_}
tag={'x' * 40}
"""
    env.write("config/sluice/shares.ini", text)
    service = env.start_service()
    tags = {s["path"]: s["tag"] for s in env.ctl_json("list")}
    want = {spaced: "we_ird-2", slashed: "a_b", ko: "share", kept: "we_ird", long_: "x" * 36}
    check(tags == want, f"tags after loading: {tags}, expected {want}")
    log = env.service_log(service)
    for group, old, new in (("[share 1]", "we ird", "we_ird-2"), ("[share 2]", "a/b", "a_b"),
                            ("[share 3]", "문서", "share"), ("[share 5]", "x" * 40, "x" * 36)):
        lines = [l for l in log.splitlines() if group in l]
        check(len(lines) == 1 and f"“{old}”" in lines[0] and f"“{new}”" in lines[0],
              f"log about {group}:\n{log}")
    aside = [n for n in os.listdir(env.path("config", "sluice")) if n.startswith("shares.ini.bad-")]
    check(len(aside) == 1, f"kept-aside copies: {aside}")
    # The mended tags are what the next save writes.
    env.ctl("set", "a_b", "readonly", "on")
    check(set(saved_shares(env)) == set(want.values()), f"saved: {saved_shares(env)}")
    env.stop_service(service)


def case_add_unknown_vm(env):
    # Nothing answers: a VM's name is taken on trust, and nothing claims it is missing.
    unreachable = "qemu+unix:///session?socket=" + env.path("run", "no-libvirt-sock")
    env.env["SLUICE_LIBVIRT_URIS"] = unreachable
    service = env.start_service()
    a = env.mkdir("share", "a")
    s = add_ok(env, a, vm="later", options="{'tag': <'later'>}")
    check(s["vm"] == "later" and s["error"] == "", f"share for a VM not known yet: {s}")
    env.stop_service(service)

    # test:///default answers (one VM, "test"); the other URI still does not.
    env.env["SLUICE_LIBVIRT_URIS"] = "test:///default," + unreachable
    service = env.start_service()
    vms = wait_for(lambda: env.ctl_json("vms"), 30, "the VMs of test:///default")
    check([v["name"] for v in vms] == ["test"], f"vms: {vms}")
    # test:///default's VM has no guest agent channel: the VM says so, and what to do
    check(vms[0]["guest_agent"] == "none" and "enable-agent" in vms[0]["guest_agent_message"]
          and vms[0]["guest_os_type"] == "", f"the guest agent of test: {vms[0]}")
    r = env.ctl("vm", "test", "enable-agent")
    check("next boot" in r.stdout, f"sluicectl vm test enable-agent: {r.stdout!r}")
    r = env.ctl("vm", "ghost", "enable-agent", rc=1)
    check("There is no VM “ghost”" in r.stderr, f"sluicectl vm ghost enable-agent: {r.stderr!r}")
    # The share loaded before libvirt answered now says that it waits.
    waiting = wait_for(lambda: (lambda x: x if "Waiting for VM “later”" in x["error"] else None)(env.share("later")),
                       30, f"the share of an unknown VM to wait for it (now {env.share('later')})")
    check(waiting["state"] == "running", f"the waiting share is still served: {waiting}")
    check("Waiting for VM “later”" in env.ctl("list").stdout, "sluicectl list does not show the wait")

    b = env.mkdir("share", "b")
    err = add_refused(env, b, "UnknownVm", "libvirt knows no VM “ghost”", "the VMs are test",
                      "sluicectl vms", "Not reachable now: " + unreachable, vm="ghost")
    check("\n" not in err.strip(), f"a message with a newline in it: {err!r}")
    check(env.share("b") is None, "the refused share is listed")
    r = env.ctl("add", b, "--vm", "ghost", rc=1)
    check(r.stderr.startswith("sluicectl: libvirt knows no VM “ghost”"), f"sluicectl add --vm ghost: {r.stderr!r}")
    # Known VMs by name and by UUID; no VM at all.
    s = add_ok(env, b, vm="test")
    check(s["vm"] == "test" and s["error"] == "", f"share of the known VM: {s}")
    s = add_ok(env, b, vm=vms[0]["uuid"].upper(), options="{'tag': <'byuuid'>}")
    check(s["error"] == "", f"share of a VM by UUID: {s}")
    # "attach" with a known VM: the call waits for the worker, then answers
    # (test:///default's VM has no shared memory: the share's Error says so).
    s = add_ok(env, env.mkdir("share", "d"), vm="test", options="{'attach': <true>}")
    check(s["state"] == "running" and "shared memory" in s["error"], f"AddShare with attach: {s}")
    c = add_ok(env, env.mkdir("share", "c"))
    check(c["vm"] == "", f"a share with no VM: {c}")

    # SetVm: the same rule.
    r = env.gdbus_call(c["object_path"], "org.sluice.Sluice1.Share.SetVm", "'ghost'")
    check(r.returncode != 0 and ERROR + "UnknownVm" in r.stderr and "the VMs are test" in r.stderr,
          f"SetVm ghost: {r.stderr}")
    check(env.share(c["object_path"])["vm"] == "", "SetVm to an unknown VM changed the share")
    r = env.ctl("set", c["tag"], "vm", "ghost", rc=1)
    check("libvirt knows no VM “ghost”" in r.stderr, f"sluicectl set vm ghost: {r.stderr!r}")
    # The waiting share gets a VM libvirt knows: it waits no more (test:///default's
    # VM has no shared memory, so the attach that follows says so instead).
    env.ctl("set", "later", "vm", "test")
    s = wait_for(lambda: (lambda x: x if "Waiting" not in x["error"] else None)(env.share("later")), 30,
                 f"the wait to end (now {env.share('later')})")
    check(s["vm"] == "test", f"after set vm test: {s}")
    env.stop_service(service)


CASES = st.cases_in(globals())


if __name__ == "__main__":
    # test-service.py's runner (Env, clean-up, logs on failure) with these cases
    sys.exit(st.main(CASES))

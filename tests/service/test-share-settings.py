#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: a share's guest settings (AutoMount, MountPoint, MountAtBoot)
and where the share is in the guest, without libvirt.

    test-share-settings.py CASE      (CASE: see CASES at the bottom)

Against the real service on test-service.py's private bus (Env): as root with
SLUICE_TEST_USER set, everything runs as that user.

  guest-settings        the D-Bus side: the properties' defaults; writes kept
                        in shares.ini and across a service restart; a mount
                        point no guest takes refused with .InvalidArgument
                        saying what to give, the property unchanged; AddShare's
                        options "auto-mount", "mount-point", "mount-at-boot".
  guest-settings-ctl    sluicectl: set automount / mount-point / mount-at-boot,
                        add --mount-point / --no-automount / --mount-at-boot,
                        list's IN GUEST column and the settings in --json.
  guest-settings-config shares.ini with bad guest settings: each dropped with
                        one log line, the share loads with the default.
  names-case            Names and Case: "" by default, ServedNames/ServedCase
                        empty while stopped; writes saved and kept across a
                        restart; bad words refused with .InvalidArgument; the
                        worker launched with --names/--case and told a live
                        change (Worker1.SetNames), through the fake worker of
                        test-worker-resume.py; sluicectl set/--json.
"""
import configparser
import importlib.util
import os
import shutil
import sys

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for, ROOT = st.Failure, st.check, st.wait_for, st.ROOT
_spec = importlib.util.spec_from_file_location(
    "worker_resume_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-worker-resume.py"))
wr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wr)

ERROR = "org.sluice.Sluice1.Error."
SHARE_IFACE = "org.sluice.Sluice1.Share"


def saved(env):
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(env.path("config", "sluice", "shares.ini"))
    return {ini[g]["tag"]: dict(ini[g]) for g in ini.sections()}


def get_property(env, path, name):
    r = env.gdbus_call(path, "org.freedesktop.DBus.Properties.Get", SHARE_IFACE, name)
    check(r.returncode == 0, f"Get {name}: {r.stderr}")
    return r.stdout.strip()


def set_property(env, path, name, value):
    """Properties.Set through a real `gdbus call`: the CompletedProcess."""
    return env.gdbus_call(path, "org.freedesktop.DBus.Properties.Set", SHARE_IFACE, name, value)


def add_share(env, path, options):
    r = env.gdbus_call(ROOT, "org.sluice.Sluice1.Manager.AddShare", f"'{path}'", "''", options)
    return r


# ---------------------------------------------------------------- cases

def case_guest_settings(env):
    service = env.start_service()
    s = env.ctl_json("add", env.path("share"), "--tag", "docs")
    path = s["object_path"]
    # Defaults: mounted by Sluice where an agent answers, at the OS's place, no fstab line.
    check(get_property(env, path, "AutoMount") == "(<true>,)", get_property(env, path, "AutoMount"))
    check(get_property(env, path, "MountPoint") == "(<''>,)", get_property(env, path, "MountPoint"))
    check(get_property(env, path, "MountAtBoot") == "(<false>,)", get_property(env, path, "MountAtBoot"))
    check(get_property(env, path, "GuestPath") == "(<''>,)", get_property(env, path, "GuestPath"))
    check(get_property(env, path, "GuestState") == "(<''>,)", get_property(env, path, "GuestState"))

    # Writes take, and are saved at once.
    for name, value in (("AutoMount", "<false>"), ("MountPoint", "<'/srv/docs'>"),
                        ("MountAtBoot", "<true>")):
        r = set_property(env, path, name, value)
        check(r.returncode == 0, f"Set {name} {value}: {r.stderr}")
    check(get_property(env, path, "MountPoint") == "(<'/srv/docs'>,)", "MountPoint after Set")
    ini = saved(env)["docs"]
    check(ini.get("auto-mount") == "false" and ini.get("mount-point") == "/srv/docs"
          and ini.get("mount-at-boot") == "true", f"shares.ini: {ini}")

    # A place no guest takes: refused, saying what to give; nothing changes.
    for bad, words in (("docs", ("absolute path", "/mnt/docs", "Z:")),
                       ("/", ("root",)),
                       ("/proc", ("system folder",)),
                       ("/mnt/../etc", ("..",)),
                       ("/mnt/docs/", ("“/”",)),
                       ("C:", ("Windows",)),
                       ("Q:x", ("absolute path",))):
        r = set_property(env, path, "MountPoint", f"<'{bad}'>")
        check(r.returncode != 0 and ERROR + "InvalidArgument" in r.stderr,
              f"MountPoint {bad!r} was not refused with InvalidArgument: {r.stdout} {r.stderr}")
        for w in words:
            check(w in r.stderr, f"MountPoint {bad!r}: no {w!r} in {r.stderr}")
    check(get_property(env, path, "MountPoint") == "(<'/srv/docs'>,)", "a refused MountPoint changed it")
    check(saved(env)["docs"].get("mount-point") == "/srv/docs", "a refused MountPoint was saved")
    # A Windows drive, and back to the default.
    check(set_property(env, path, "MountPoint", "<'Y:'>").returncode == 0, "drive Y:")
    check(saved(env)["docs"].get("mount-point") == "Y:", f"shares.ini: {saved(env)}")

    # AddShare's options, checked like the properties.
    other = env.mkdir("share", "other")
    r = add_share(env, other, "{'tag': <'other'>, 'auto-mount': <false>, "
                              "'mount-point': <'/home/user/Other docs'>, 'mount-at-boot': <true>}")
    check(r.returncode == 0, f"AddShare with the guest options: {r.stderr}")
    o = env.share("other")
    check(not o["auto_mount"] and o["mount_point"] == "/home/user/Other docs" and o["mount_at_boot"],
          f"added: {o}")
    third = env.mkdir("share", "third")
    r = add_share(env, third, "{'mount-point': <'relative'>}")
    check(r.returncode != 0 and ERROR + "InvalidArgument" in r.stderr and "absolute path" in r.stderr,
          f"AddShare with a relative mount point: {r.stdout} {r.stderr}")
    r = add_share(env, third, "{'auto-mount': <'yes'>}")
    check(r.returncode != 0 and ERROR + "InvalidArgument" in r.stderr and "auto-mount" in r.stderr,
          f"AddShare with a string auto-mount: {r.stdout} {r.stderr}")
    check(env.share("third") is None, "a refused AddShare added a share")
    # Defaults when AddShare gives none.
    r = add_share(env, third, "{'tag': <'third'>}")
    check(r.returncode == 0, r.stderr)
    t = env.share("third")
    check(t["auto_mount"] and t["mount_point"] == "" and not t["mount_at_boot"], f"defaults: {t}")

    # Everything survives a restart.
    env.stop_service(service)
    service = env.start_service()
    path = env.share("docs")["object_path"]
    check(get_property(env, path, "AutoMount") == "(<false>,)", "AutoMount after a restart")
    check(get_property(env, path, "MountPoint") == "(<'Y:'>,)", "MountPoint after a restart")
    check(get_property(env, path, "MountAtBoot") == "(<true>,)", "MountAtBoot after a restart")
    o = env.share("other")
    check(not o["auto_mount"] and o["mount_point"] == "/home/user/Other docs" and o["mount_at_boot"],
          f"other after a restart: {o}")
    check(set_property(env, path, "MountPoint", "<''>").returncode == 0, "back to the default")
    check(saved(env)["docs"].get("mount-point") == "", f"shares.ini: {saved(env)}")
    # Removing a share mounted at boot whose guest cannot be reached says
    # that the guest keeps its fstab line (no libvirt here).
    env.ctl("set", "other", "vm", "somevm")
    env.ctl("remove", "other")
    check(env.share("other") is None, "other still listed after remove")
    log = env.service_log(service)
    check("keeps the line of the removed share “other”" in log, f"service log:\n{log}")
    env.stop_service(service)


def case_guest_settings_ctl(env):
    service = env.start_service()
    env.ctl("set", "x", "automount", "maybe", rc=2)
    env.ctl("set", "x", "mount-at-boot", "perhaps", rc=2)
    env.ctl("add", env.path("share"), "--mount-point", rc=2)

    s = env.ctl_json("add", env.path("share"), "--tag", "ctl")
    for key, want in (("auto_mount", True), ("mount_point", ""), ("mount_at_boot", False),
                      ("guest_path", ""), ("guest_state", "")):
        check(key in s and s[key] == want, f"--json {key}: {s}")
    check(env.ctl_json("set", "ctl", "automount", "off")["ok"], "set automount")
    check(not env.share("ctl")["auto_mount"], f"auto_mount after set: {env.share('ctl')}")
    env.ctl("set", "ctl", "auto-mount", "on")
    check(env.share("ctl")["auto_mount"], "auto-mount on")
    check(env.ctl_json("set", "ctl", "mount-point", "/media/ctl")["ok"], "set mount-point")
    check(env.share("ctl")["mount_point"] == "/media/ctl", f"{env.share('ctl')}")
    env.ctl("set", "ctl", "mount-point", "default")
    check(env.share("ctl")["mount_point"] == "", "mount-point default")
    env.ctl("set", "ctl", "mountpoint", "z:")
    check(env.share("ctl")["mount_point"] == "z:", "a drive, lower-case")
    check(env.ctl_json("set", "ctl", "mount-at-boot", "on")["ok"], "set mount-at-boot")
    check(env.share("ctl")["mount_at_boot"], "mount_at_boot after set")
    env.ctl("set", "ctl", "boot-mount", "off")
    check(not env.share("ctl")["mount_at_boot"], "boot-mount off")
    # A refusal is the service's words, exit status 1, nothing changed.
    r = env.ctl("set", "ctl", "mount-point", "/etc", rc=1)
    check("/etc" in r.stderr and "system folder" in r.stderr, f"set mount-point /etc: {r.stderr}")
    r = env.ctl("set", "ctl", "mount-point", "docs", rc=1)
    check("absolute path" in r.stderr, f"set mount-point docs: {r.stderr}")
    check(env.share("ctl")["mount_point"] == "z:", "a refused mount point changed it")

    other = env.mkdir("share", "other")
    o = env.ctl_json("add", other, "--tag", "other", "--mount-point", "/srv/other",
                     "--no-automount", "--mount-at-boot")
    check(not o["auto_mount"] and o["mount_point"] == "/srv/other" and o["mount_at_boot"], f"add: {o}")
    r = env.ctl("add", env.mkdir("share", "bad"), "--mount-point", "B:", rc=1)
    check("floppy" in r.stderr, f"add --mount-point B: {r.stderr}")

    # list: where it is in the guest ("-": Sluice has not mounted it anywhere).
    text = env.ctl("list").stdout
    header = text.splitlines()[0]
    check("IN GUEST" in header, f"list:\n{text}")
    column = header.index("IN GUEST")
    rows = [line for line in text.splitlines()[1:] if line.split()[1] in ("ctl", "other")]
    check(len(rows) == 2 and all(row[column] == "-" for row in rows), f"list:\n{text}")
    # add --attach with no VM: the share runs; the object path, as today.
    third = env.mkdir("share", "third")
    r = env.ctl("add", third, "--tag", "third", "--attach")
    check(r.stdout.splitlines()[0].startswith(ROOT + "/share/"), f"add --attach: {r.stdout}")
    env.wait_state("third", "running")
    env.stop_service(service)


def case_guest_settings_config(env):
    env.mkdir("config", "sluice")
    one = env.mkdir("share", "one")
    two = env.mkdir("share", "two")
    text = f"""[share 1]
path={one}
tag=one
auto-mount=sometimes
mount-point=/proc/self
mount-at-boot=true

[share 2]
path={two}
tag=two
auto-mount=false
mount-point=Z:
mount-at-boot=yes please
"""
    env.write("config/sluice/shares.ini", text)
    service = env.start_service()
    a, b = env.share("one"), env.share("two")
    check(a is not None and b is not None, f"shares: {env.ctl_json('list')}")
    check(a["auto_mount"] and a["mount_point"] == "" and a["mount_at_boot"], f"one: {a}")
    check(not b["auto_mount"] and b["mount_point"] == "Z:" and not b["mount_at_boot"], f"two: {b}")
    log = env.service_log(service)
    for what in ("[share 1] auto-mount ignored", "[share 1] mount-point ignored",
                 "[share 2] mount-at-boot ignored"):
        check(sum(what in line for line in log.splitlines()) == 1, f"expected one log line {what!r}:\n{log}")
    check(any(n.startswith("shares.ini.bad-") for n in os.listdir(env.path("config", "sluice"))),
          "the file with bad values was not kept aside")
    env.stop_service(service)


def worker_names(env, tag):
    """What the running (fake) worker of TAG serves: "NAMES CASE", None before it said."""
    share = env.share(tag)
    try:
        with open(share["socket_path"] + ".names") as f:
            return f.read().strip()
    except (OSError, KeyError, TypeError):
        return None


def worker_args(env, tag):
    pids = wr.fake_pids(env, tag)
    check(len(pids) == 1, f"workers of {tag}: {pids}")
    with open(f"/proc/{pids[0]}/cmdline", "rb") as f:
        return f.read().decode().split("\0")


def case_names_case(env):
    if not wr.fake_usable():
        print("SKIP: /usr/bin/python3 has no gi (python3-gi) for the fake worker")
        sys.exit(77)
    binary = os.path.join(env.mkdir("libexec"), "fake-resume-worker.py")
    shutil.copy2(wr.FAKE, binary)
    os.chmod(binary, 0o755)
    env.own(binary)
    env.env["SLUICE_FS"] = binary
    service = env.start_service()
    s = env.ctl_json("add", env.path("share"), "--tag", "docs", "--no-autostart")
    path = s["object_path"]
    for key in ("names", "case", "served_names", "served_case"):
        check(s.get(key) == "", f"--json {key} by default: {s}")
    check(get_property(env, path, "Names") == "(<''>,)", get_property(env, path, "Names"))

    # What a person may write, refused otherwise in words, nothing changed.
    for name, bad, words in (("Names", "Windows", ("windows", "posix")),
                             ("Names", "dos", ("windows",)),
                             ("Case", "yes", ("insensitive", "sensitive")),
                             ("Case", "INSENSITIVE", ("insensitive",))):
        r = set_property(env, path, name, f"<'{bad}'>")
        check(r.returncode != 0 and ERROR + "InvalidArgument" in r.stderr,
              f"{name} {bad!r} was not refused with InvalidArgument: {r.stdout} {r.stderr}")
        for w in words:
            check(w in r.stderr, f"{name} {bad!r}: no {w!r} in {r.stderr}")
    check(get_property(env, path, "Case") == "(<''>,)", "a refused Case changed it")
    check("names" in saved(env)["docs"] and saved(env)["docs"]["names"] == "", f"{saved(env)}")

    check(set_property(env, path, "Names", "<'windows'>").returncode == 0, "Names windows")
    check(set_property(env, path, "Case", "<'insensitive'>").returncode == 0, "Case insensitive")
    ini = saved(env)["docs"]
    check(ini.get("names") == "windows" and ini.get("case") == "insensitive", f"shares.ini: {ini}")
    check(env.share("docs")["served_names"] == "", f"served while stopped: {env.share('docs')}")

    # Started: the worker is launched with them.
    env.ctl("start", "docs")
    env.wait_state("docs", "running")
    d = env.share("docs")
    check(d["served_names"] == "windows" and d["served_case"] == "insensitive", f"served: {d}")
    args = worker_args(env, "docs")
    check("--names=windows" in args and "--case=insensitive" in args, f"the worker's arguments: {args}")
    wait_for(lambda: worker_names(env, "docs") == "windows insensitive", 30, "the worker to hold windows")

    # Changed while it runs: the worker is told, not restarted.
    pid = wr.fake_pids(env, "docs")
    check(env.ctl_json("set", "docs", "names", "posix")["ok"], "sluicectl set names posix")
    wait_for(lambda: worker_names(env, "docs") == "posix insensitive", 30,
             f"the worker to be told posix (it has {worker_names(env, 'docs')})")
    # "" follows the VM's OS: no VM here, so a Linux guest's way
    env.ctl("set", "docs", "case", "default")
    wait_for(lambda: worker_names(env, "docs") == "posix sensitive", 30,
             f"the worker to be told sensitive (it has {worker_names(env, 'docs')})")
    check(wr.fake_pids(env, "docs") == pid, "the worker was restarted for a change of names")
    d = env.share("docs")
    check(d["names"] == "posix" and d["case"] == "" and d["served_names"] == "posix"
          and d["served_case"] == "sensitive", f"after the live change: {d}")
    env.ctl("set", "docs", "names", "unix", rc=1)
    env.ctl("set", "docs", "case", "windows", rc=1)

    # Kept across a restart of the service.
    env.ctl("set", "docs", "names", "windows")
    env.stop_service(service)
    service = env.start_service()
    d = env.share("docs")
    check(d["names"] == "windows" and d["case"] == "", f"after a restart: {d}")
    env.stop_service(service)


CASES = st.cases_in(globals())


if __name__ == "__main__":
    # test-service.py's runner (Env, clean-up, logs on failure) with these cases
    sys.exit(st.main(CASES))

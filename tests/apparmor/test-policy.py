#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/apparmor: Sluice's AppArmor snippet against libvirt's real policy.

    test-policy.py CACHE_DIR

Fetches, with a private apt state (the system's is left alone; the mirror
is the one this machine's apt sources name), Debian 12's
libvirt-daemon-system (libvirt 9.0: its QEMU abstraction ends with a hard
include of the local file) and Debian 13's libvirt-daemon-driver-qemu
(libvirt 11.3: it includes abstractions/libvirt-qemu.d) and apparmor (its
abstractions and tunables).  The .debs stay in CACHE_DIR: a rerun downloads
nothing.  Debian 12's layout takes its abstractions from this machine's
apparmor package (3.0), as does a third: libvirt 11.3 on apparmor 3.0.

For each layout a scratch root holds /etc/apparmor.d as the packages and
libvirt's postinst leave it, with a VM profile generated from libvirt's
TEMPLATE.qemu; a copy of it then gets Sluice's snippet and the sluice
package's real postinst (DPKG_ROOT).  Before and after: apparmor_parser -p
expands the VM profile, apparmor_parser -QTK compiles it against a features
file with unix mediation (and must succeed), and python3-apparmor's
FileRuleset gives each path's permissions.  Sluice's sockets must go from
denied to allowed for rw, and no other path (under /tmp, /run/user, homes,
/etc) may change at all.  Skips (77) only when the mirror cannot be reached.
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import time

try:
    from apparmor.rule.file import FileRule, FileRuleset
except ImportError:
    # A python3 other than Debian's (pyenv, a venv) first on PATH.
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        from apparmor.rule.file import FileRule, FileRuleset
    except ImportError:
        print("FAIL: no python3-apparmor (make deps installs it)", file=sys.stderr)
        sys.exit(1)

CACHE = os.path.abspath(sys.argv[1])
SOURCE = os.environ.get("SLUICE_SOURCE_ROOT",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(SOURCE, "tests"))
import debian_archive  # noqa: E402  (tests/debian_archive.py: the private apt state)
SNIPPET = os.path.join(SOURCE, "data", "apparmor", "sluice")
POSTINST = os.path.join(SOURCE, "debian", "sluice.postinst")
# A features file with unix mediation (af_unix), as apparmor 3.0 ships it.
FEATURES = "/etc/apparmor.d/abi/3.0"
UUID = "5c6a1f3e-2b4d-4c8e-9f10-a1b2c3d4e5f6"
PROFILE = f"libvirt-{UUID}"

# (package/suite) → where it unpacks
PACKAGES = ["libvirt-daemon-system/bookworm", "libvirt-daemon-driver-qemu/trixie", "apparmor/trixie"]

SOCKETS = ["/tmp/sluice-1000-AbC123/3.sock", "/tmp/sluice-64055-zZ9xQ1/12.sock"]
OTHERS = [
    "/tmp/x.sock", "/tmp/sluice-1000-AbC123/other", "/tmp/sluice-1000-AbC123/",
    "/tmp/sluice-1000-AbC123/sub/3.sock", "/tmp/sluice-abc/3.sock", "/tmp/sluice-1000/3.sock",
    "/tmp/.X11-unix/X0", "/tmp/pulse-abc/native", "/tmp/ssh-XXXX/agent.123",
    "/var/tmp/sluice-1000-AbC123/3.sock",
    "/run/user/1000/bus", "/run/user/1000/pipewire-0", "/run/user/1000/sluice/sockets/3.sock",
    "/run/user/1000/libvirt/qemu/run/passt/x.sock",
    "/home/alice/.ssh/id_rsa", "/home/alice/.config/sluice/shares.ini", "/home/alice/.pulse-cookie",
    "/root/.ssh/id_rsa", "/root/.bashrc", "/etc/shadow", "/var/lib/libvirt/images/other.qcow2",
]

failures = 0
t0 = time.monotonic()


def note(msg):
    print(f"[{time.monotonic() - t0:7.2f}s] {msg}", flush=True)


def check(ok, msg):
    global failures
    note(("PASS " if ok else "FAIL ") + msg)
    if not ok:
        failures += 1


def die(msg):
    note("FAIL: " + msg)
    sys.exit(1)


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(77)


def fetch():
    """Downloads the packages once (tests/debian_archive.py); returns {package: unpacked root}."""
    t = time.monotonic()
    try:
        roots = debian_archive.fetch(CACHE, PACKAGES, note=note)
    except debian_archive.Unreachable as e:
        skip(str(e))
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        die(str(e))
    note(f"packages ready in {time.monotonic() - t:.1f} s")
    return roots


def copy_tree(src, dst, only=None):
    for name in sorted(os.listdir(src)):
        if only and name not in only:
            continue
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(s) and not os.path.islink(s):
            shutil.copytree(s, d, symlinks=True, dirs_exist_ok=True)
        elif os.path.exists(s):
            shutil.copy2(s, d)


def make_root(name, root, apparmor_tree, libvirt_root, local_file):
    """A scratch root: apparmor's tunables and abstractions, libvirt's
    /etc/apparmor.d, its local file as its postinst leaves it, one VM profile."""
    aa = os.path.join(root, "etc", "apparmor.d")
    os.makedirs(aa)
    copy_tree(apparmor_tree, aa, only={"abi", "abstractions", "tunables"})
    copy_tree(os.path.join(libvirt_root, "etc", "apparmor.d"), aa)
    if local_file:
        os.makedirs(os.path.join(aa, "local", "abstractions"), exist_ok=True)
        with open(os.path.join(aa, "local", "abstractions", "libvirt-qemu"), "w"):
            pass
    # What virt-aa-helper writes for a VM: the template under the VM's name,
    # and its own files (disks) in libvirt-UUID.files.
    with open(os.path.join(aa, "libvirt", "TEMPLATE.qemu")) as f:
        template = f.read()
    check("LIBVIRT_TEMPLATE" in template and "abstractions/libvirt-qemu" in template,
          f"{name}: {os.path.basename(libvirt_root)}'s TEMPLATE.qemu names LIBVIRT_TEMPLATE and includes the abstraction")
    profile = template.replace("LIBVIRT_TEMPLATE", PROFILE).replace(
        "#include <abstractions/libvirt-qemu>",
        f"#include <abstractions/libvirt-qemu>\n  #include <libvirt/{PROFILE}.files>")
    with open(os.path.join(aa, "libvirt", PROFILE), "w") as f:
        f.write(profile)
    with open(os.path.join(aa, "libvirt", PROFILE + ".files"), "w") as f:
        f.write('  "/var/lib/libvirt/images/vm.qcow2" rwk,\n')
    return aa


def install_sluice(root):
    """The snippet where the package ships it, then its real postinst."""
    aa = os.path.join(root, "etc", "apparmor.d")
    os.makedirs(os.path.join(aa, "abstractions", "libvirt-qemu.d"), exist_ok=True)
    shutil.copy(SNIPPET, os.path.join(aa, "abstractions", "libvirt-qemu.d", "sluice"))
    with open(POSTINST) as f:
        script = f.read()
    check(script.count("\n#DEBHELPER#\n") == 1, "debian/sluice.postinst holds the #DEBHELPER# token once")
    copy = os.path.join(root, "sluice.postinst")
    with open(copy, "w") as f:
        f.write(script.replace("\n#DEBHELPER#\n", "\n"))
    r = subprocess.run(["sh", copy, "configure", ""], env=dict(os.environ, DPKG_ROOT=root),
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"postinst configure with DPKG_ROOT={root}: exit {r.returncode} {r.stderr.strip()}")


def parser(aa, *args):
    profile = os.path.join(aa, "libvirt", PROFILE)
    return subprocess.run(["apparmor_parser", "-I", aa, "--base", aa, *args, profile],
                          capture_output=True, text=True, timeout=300)


def expand_variables(line, variables, limit=4096):
    """Every text LINE stands for once its @{VARIABLES} take each value."""
    out, todo = [], [line]
    while todo:
        text = todo.pop()
        m = re.search(r"@\{([A-Za-z0-9_]+)\}", text)
        if not m:
            out.append(text)
            continue
        for value in variables.get(m.group(1), [m.group(0)]):
            if value == m.group(0):
                raise ValueError(f"unknown variable {value} in {line}")
            todo.append(text[:m.start()] + value + text[m.end():])
        if len(out) + len(todo) > limit:
            raise ValueError(f"too many expansions of {line}")
    return out


def file_rules(expanded):
    """The VM profile's own file rules (not its children's), variables
    expanded, as a FileRuleset; and the lines that looked like file rules
    but did not parse."""
    variables = {"profile_name": [PROFILE]}
    ruleset, unparsed, depth, count = FileRuleset(), [], 0, 0
    for raw in expanded.splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.strip().startswith("#include") else ""
        if not line:
            continue
        m = re.match(r"^@\{([A-Za-z0-9_]+)\}\s*(\+?=)\s*(.*)$", line)
        if m and depth == 0:
            values = [v.strip('"') for v in m.group(3).split()]
            variables[m.group(1)] = (variables.get(m.group(1), []) if m.group(2) == "+=" else []) + values
            continue
        if line.endswith("{"):
            depth += 1
            continue
        if line == "}":
            depth -= 1
            continue
        if depth != 1 or not FileRule.match(line):
            continue
        for variant in expand_variables(line, variables):
            try:
                rule = FileRule.parse(variant)
            except Exception as e:  # noqa: BLE001 — report every rule it cannot read
                unparsed.append(f"{variant} ({e})")
                continue
            if not rule.all_paths:
                # The kernel sees one slash where a variable's value ends in
                # one and the rule adds another.
                rule.path.regex = re.sub(r"/{2,}", "/", rule.path.regex)
                rule.path._regex_compiled = None
            ruleset.add(rule)
            count += 1
    return ruleset, unparsed, count


def perms(ruleset, path):
    """What the profile grants PATH: the permission letters left after deny
    rules, counting owner rules as if QEMU owned the file (the widest case)."""
    p = ruleset.get_perms_for_path(path)
    allow, deny = set(), set()
    for who in ("all", "owner"):
        a, d = p["allow"][who], p["deny"][who]
        allow |= {"r", "w", "a", "k", "l", "m", "x"} if a == FileRule.ALL else set(a)
        deny |= {"r", "w", "a", "k", "l", "m", "x"} if d == FileRule.ALL else set(d)
    return "".join(sorted(allow - deny))


def verdict(granted):
    return "ALLOW" if {"r", "w"} <= set(granted) else "DENY"


def evaluate(name, aa):
    """Expands and compiles the VM profile of the tree at AA; returns
    {path: granted permissions} and the compiled rules naming /tmp/sluice."""
    r = parser(aa, "-p")
    if r.returncode != 0 or "Could not open" in r.stderr:
        die(f"{name}: apparmor_parser -p failed: {r.stderr.strip()}")
    t = time.monotonic()
    c = parser(aa, "-QTK", "-M", FEATURES, "-D", "rule-exprs")
    check(c.returncode == 0, f"{name}: apparmor_parser -QTK -M {FEATURES} compiles {PROFILE} "
          f"({time.monotonic() - t:.1f} s){'' if c.returncode == 0 else ': ' + c.stderr.strip()[-500:]}")
    compiled = sorted({m for m in re.findall(r"^rule: (/tmp/sluice\S*)", c.stdout + c.stderr, re.M)})
    ruleset, unparsed, count = file_rules(r.stdout)
    check(not unparsed, f"{name}: python3-apparmor reads every file rule ({count} after expanding "
          f"variables){'' if not unparsed else ': cannot read ' + '; '.join(unparsed[:5])}")
    return {path: perms(ruleset, path) for path in SOCKETS + OTHERS}, compiled


def main():
    for tool in ("apparmor_parser", "apt-get", "dpkg-deb"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed (Debian: apparmor, apt, dpkg)")
    with open(FEATURES) as f:
        check("af_unix" in f.read(), f"the features file {FEATURES} has unix mediation (af_unix)")
    roots = fetch()
    version = subprocess.run(["apparmor_parser", "--version"], capture_output=True, text=True).stdout
    note(f"this machine's parser: {version.splitlines()[0] if version else '?'}")

    layouts = {
        # libvirt 9.0's postinst creates the empty local file its abstraction includes.
        "bookworm (libvirt 9.0)": ("/etc/apparmor.d", roots["libvirt-daemon-system/bookworm"], True),
        # libvirt 11.3's postinst deletes it again when empty.
        "trixie (libvirt 11.3)": (os.path.join(roots["apparmor/trixie"], "etc", "apparmor.d"),
                                  roots["libvirt-daemon-driver-qemu/trixie"], False),
        # libvirt 11.3's abstraction needs nothing newer than apparmor 3.0's
        # abstractions (as with a newer libvirt on Debian 12).
        "libvirt 11.3, apparmor 3.0": ("/etc/apparmor.d", roots["libvirt-daemon-driver-qemu/trixie"], False),
    }
    work = os.path.join(CACHE, "work")
    shutil.rmtree(work, ignore_errors=True)
    results = {}
    for i, (name, (apparmor_tree, libvirt_root, local_file)) in enumerate(layouts.items()):
        before = os.path.join(work, f"{i}-before")
        after = os.path.join(work, f"{i}-after")
        aa_before = make_root(name + ", before", before, apparmor_tree, libvirt_root, local_file)
        aa_after = make_root(name + ", after", after, apparmor_tree, libvirt_root, local_file)
        install_sluice(after)
        local = os.path.join(aa_after, "local", "abstractions", "libvirt-qemu")
        with open(os.path.join(aa_after, "abstractions", "libvirt-qemu")) as f:
            has_dir = "<abstractions/libvirt-qemu.d>" in f.read()
        text = open(local).read() if os.path.exists(local) else None
        if has_dir:
            check(text is None, f"{name}: the abstraction includes libvirt-qemu.d; the postinst wrote no local file")
        else:
            check(text is not None and text.count("#include <abstractions/libvirt-qemu.d/sluice>") == 1,
                  f"{name}: the postinst included the snippet once from the local file")
        results[name] = (evaluate(name + ", before", aa_before), evaluate(name + ", after", aa_after))

    # The table, then the verdicts.
    names = list(results)
    width = max(len(p) for p in SOCKETS + OTHERS)
    print("\nrw by a VM's QEMU (granted permissions), before → after Sluice's snippet:")
    print(f"{'path':<{width}}  " + "  ".join(f"{n:<30}" for n in names))
    for path in SOCKETS + OTHERS:
        cells = []
        for n in names:
            (b, _), (a, _) = results[n]
            cells.append(f"{verdict(b[path]):5} {b[path] or '-':>3} → {verdict(a[path]):5} {a[path] or '-':>3}")
        print(f"{path:<{width}}  " + "  ".join(f"{c:<30}" for c in cells))
    print()
    for n in names:
        (b, cb), (a, ca) = results[n]
        for path in SOCKETS:
            check(verdict(b[path]) == "DENY" and verdict(a[path]) == "ALLOW",
                  f"{n}: {path} rw: {verdict(b[path])} before, {verdict(a[path])} after")
        changed = [f"{p}: {b[p] or '-'} → {a[p] or '-'}" for p in OTHERS if b[p] != a[p]]
        check(not changed, f"{n}: no other path's permissions change ({len(OTHERS)} paths)"
              + ("" if not changed else ": " + "; ".join(changed)))
        check(not cb and len(ca) == 1, f"{n}: the compiled profile has no rule for /tmp/sluice before, "
              f"one after: {ca}")
    # Why the rule is not per VM: not for want of a name.  The parser does
    # expand @{profile_name} in a file rule (to libvirt-UUID in a VM's
    # profile); -p leaves it as written.
    probe = os.path.join(work, "profile-name")
    with open(probe, "w") as f:
        f.write(f"profile {PROFILE} {{\n  /tmp/probe-@{{profile_name}}/[0-9]*.sock rw,\n}}\n")
    r = subprocess.run(["apparmor_parser", "-QTK", "-M", FEATURES, "-D", "rule-exprs", probe],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and f"/tmp/probe-{PROFILE}/" in r.stdout + r.stderr,
          "apparmor_parser expands @{profile_name} in a file rule to the profile's name")
    note(f"done: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/install: what `meson install` puts on a machine.

    test-units.py install

The build installed into a DESTDIR: the file list, the units' and the D-Bus
activation file's programs, systemd-analyze verify of the user units.  The
units themselves run under a real systemd --user in tests/session.
tests/service/test-service.py's runner provides the temporary folders.
"""
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys

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


# ---------------------------------------------------------------- cases

def case_install(env):
    """The installed file list has the units, the D-Bus activation file, the
    desktop files, the man pages and the AppArmor snippet; systemd-analyze verify accepts the units
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
    # The AppArmor snippet for libvirt's QEMU, under sysconfdir (/etc for /usr).
    snippet = [f for f in files if f.endswith("/apparmor.d/abstractions/libvirt-qemu.d/sluice")]
    check(len(snippet) == 1, f"no AppArmor snippet for libvirt's QEMU among {sorted(files)}")
    with open(destdir + snippet[0]) as f, open(os.path.join(SOURCE, "data", "apparmor", "sluice")) as g:
        check(f.read() == g.read(), f"{snippet[0]} is not data/apparmor/sluice")
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


CASES = {"install": case_install}

if __name__ == "__main__":
    # test-service.py's runner: its Env, its logs on failure, its clean-up.
    sys.exit(svc.main(CASES))

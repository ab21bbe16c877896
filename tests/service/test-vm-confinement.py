#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: what the host's AppArmor confinement of a VM keeps from
Sluice, as sluicectl and the Vm object show it.

    test-vm-confinement.py CASE      (CASE: see CASES at the bottom)

  vm-confinement  libvirt's test driver with a node file: a VM whose live XML
                  says QEMU runs under AppArmor, and one unconfined.  Sluice's
                  rule installed but not included by libvirt's abstraction
                  (libvirt older than 9.6, no local line): Vm.Confinement is
                  "apparmor", Vm.ConfinementProblem says "not included" with
                  the line, its file and the reload command; `sluicectl vms`
                  prints it under that VM only, `--json` carries both.  With
                  the local line added, the problem is gone.

This machine's kernel has neither AppArmor nor SELinux and its libvirtd no
security driver: the host's policy files are planted in a scratch root that a
-Dtest_hooks=true service reads instead of / ($SLUICE_TEST_CONFINEMENT_ROOT).
That stands in for a real confined host, which cannot run here.
"""
import importlib.util
import os
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for = st.Failure, st.check, st.wait_for

UUID = "6f1e9b2c-4a8d-4e0f-9c3b-2d7a5e8f1a40"
RULE = "/tmp/sluice-[0-9]*-*/[0-9]*.sock rw,"
LOCAL = "/etc/apparmor.d/local/abstractions/libvirt-qemu"
LOCAL_LINE = "include <abstractions/libvirt-qemu.d/sluice>"
RELOAD = f"sudo apparmor_parser -r /etc/apparmor.d/libvirt/libvirt-{UUID}"

NODE = f"""<node>
  <domain type='test'>
    <name>confined</name><uuid>{UUID}</uuid><memory>262144</memory>
    <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>
    <os><type>hvm</type></os>
    <seclabel type='static' model='apparmor' relabel='no'><label>libvirt-{UUID}</label></seclabel>
  </domain>
  <domain type='test'>
    <name>plain</name><memory>262144</memory><os><type>hvm</type></os>
  </domain>
</node>
"""


def test_hooks_built():
    config = os.path.join(os.environ.get("SLUICE_BUILD_ROOT", ""), "config.h")
    try:
        with open(config) as f:
            return "#define SLUICE_TEST_HOOKS 1" in f.read()
    except OSError:
        return False


def plant(env, root, path, text, age=0):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)
    when = time.time() - age
    os.utime(full, (when, when))


def notes_under_rows(text):
    """sluicectl's table: each row's first cell → the lines printed under it."""
    notes, row = {}, None
    for line in text.splitlines()[1:]:
        if line.startswith(" "):
            notes.setdefault(row, []).append(line.strip())
        elif line:
            row = line.split()[0]
            notes.setdefault(row, [])
    return notes


def vms_by_name(env):
    return {v["name"]: v for v in env.ctl_json("vms")}


def case_vm_confinement(env):
    if not test_hooks_built():
        print("SKIP: the service reads the host's own files unless built with -Dtest_hooks=true")
        sys.exit(77)
    root = env.mkdir("host")
    # An Ubuntu 22.04-like host: AppArmor on, libvirt 8's abstraction (the
    # local file only), the sluice package's rule installed a minute ago
    plant(env, root, "/sys/module/apparmor/parameters/enabled", "Y\n")
    plant(env, root, "/etc/apparmor.d/abstractions/libvirt-qemu",
          "  #include <abstractions/base>\n  include if exists <local/abstractions/libvirt-qemu>\n")
    plant(env, root, "/etc/apparmor.d/abstractions/libvirt-qemu.d/sluice", RULE + "\n", age=60)
    plant(env, root, f"/etc/apparmor.d/libvirt/libvirt-{UUID}", f"profile libvirt-{UUID} {{}}\n", age=10)
    node = env.write("node.xml", NODE)
    env.env["SLUICE_LIBVIRT_URIS"] = "test://" + node
    env.env["SLUICE_TEST_CONFINEMENT_ROOT"] = root

    service = env.start_service()
    vms = wait_for(lambda: (lambda v: v if "confined" in v and v["confined"]["confinement_problem"] else None)(
        vms_by_name(env)), 30, "the confined VM's problem")
    confined, plain = vms["confined"], vms["plain"]
    check(confined["confinement"] == "apparmor", f"confined: {confined}")
    problem = confined["confinement_problem"]
    for words in ("not included", LOCAL, LOCAL_LINE, RULE, RELOAD, "journalctl -k | grep apparmor"):
        check(words in problem, f"“{words}” is not in the problem: {problem!r}")
    check(plain["confinement"] == "none" and plain["confinement_problem"] == "", f"plain: {plain}")

    # sluicectl vms: the problem on a line under the confined VM, nothing under the other
    under = notes_under_rows(env.ctl("vms").stdout)
    check(any("not included" in l and LOCAL_LINE in l and RELOAD in l for l in under.get("confined", [])),
          f"the lines under “confined”: {under}")
    check(not any("AppArmor" in l for l in under.get("plain", [])), f"the lines under “plain”: {under}")
    env.stop_service(service)

    # the package's line for older libvirt added, then the VM restarted (its profile made anew)
    plant(env, root, LOCAL, "# sluice\n" + LOCAL_LINE + "\n", age=30)
    plant(env, root, f"/etc/apparmor.d/libvirt/libvirt-{UUID}", f"profile libvirt-{UUID} {{}}\n")
    service = env.start_service()
    vms = wait_for(lambda: (lambda v: v if "confined" in v else None)(vms_by_name(env)), 30, "the VMs")
    check(vms["confined"]["confinement"] == "apparmor" and vms["confined"]["confinement_problem"] == "",
          f"confined, rule included: {vms['confined']}")
    under = notes_under_rows(env.ctl("vms").stdout)
    check(not any("AppArmor" in l for l in under.get("confined", [])), f"sluicectl vms still shows a problem: {under}")
    env.stop_service(service)


CASES = st.cases_in(globals())


if __name__ == "__main__":
    sys.exit(st.main(CASES))

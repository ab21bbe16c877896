#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: sluicectl's exit status is what a script can go by.

    test-ctl-exit.py CASE      (CASE: see CASES at the bottom)

Against the real service on test-service.py's private bus (Env), with
libvirt's test driver (test:///default: one running VM, "test", without the
shared memory virtiofs needs, so plugging a share into it fails the way a
VM with no free PCIe slot does: the call that started the worker succeeds,
the share's Error says why).

  ctl-exit-status  every command that asks for an action exits 1 with the
                   reason on stderr when the action did not happen: add
                   --attach (the new share's path still on stdout), start,
                   attach, detach, stop, remove, set, vm NAME add-slots; and
                   0 when there was nothing to plug into (no VM, a VM libvirt
                   does not know).  vm NAME add-slots: usage errors exit 2.
"""
import importlib.util
import json
import os
import sys

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for, ROOT = st.Failure, st.check, st.wait_for, st.ROOT


def failed_with(r, *words):
    """sluicectl's one line on stderr, naming the reason."""
    check(r.stderr.startswith("sluicectl: "), f"no sluicectl message on stderr: {r.stderr!r}")
    for w in words:
        check(w in r.stderr, f"“{w}” is not in stderr: {r.stderr!r}")


def case_ctl_exit_status(env):
    env.env["SLUICE_LIBVIRT_URIS"] = "test:///default"
    service = env.start_service()
    vms = wait_for(lambda: env.ctl_json("vms"), 30, "the VM of test:///default")
    check([(v["name"], v["state"], v["shared_memory"]) for v in vms] == [("test", "running", False)],
          f"test:///default's VM: {vms}")

    # add --attach, the plug refused: exit 1 with the share's Error; the
    # share exists, and its path is printed for a script to remove it.
    r = env.ctl("add", env.mkdir("share", "a"), "--vm", "test", "--attach", rc=1)
    check(r.stdout.splitlines()[0].startswith(ROOT + "/share/"), f"add --attach printed: {r.stdout!r}")
    failed_with(r, "Could not attach “a” to test", "shared memory")
    a = env.share("a")
    check(a is not None and a["state"] == "running" and a["error"] in r.stderr, f"the share after add: {a}")
    # the same with --json: the share's document, and still exit 1
    r = env.ctl("--json", "add", env.mkdir("share", "b"), "--vm", "test", "--attach", rc=1)
    doc = json.loads(r.stdout)
    check(doc["tag"] == "b" and doc["state"] == "running" and "shared memory" in doc["error"],
          f"add --json --attach: {doc}")
    failed_with(r, "shared memory")

    # start: the worker runs, but the share is not in its running VM
    env.ctl("stop", "a")
    r = env.ctl("start", "a", rc=1)
    failed_with(r, "Could not attach “a” to test", "shared memory")
    r = env.ctl("--json", "start", "a", rc=1)
    check(r.stdout == "", f"start --json printed a document for a failure: {r.stdout!r}")
    # attach: the service refuses the call itself
    r = env.ctl("attach", "a", rc=1)
    failed_with(r, "shared memory")

    # Nothing to plug into: add --attach and start did what they could.
    r = env.ctl("add", env.mkdir("share", "novm"), "--attach")
    check(r.stdout.startswith(ROOT + "/share/") and r.stderr == "", f"add --attach, no VM: {r}")
    env.ctl("stop", "novm")
    env.ctl("start", "novm")
    env.ctl("add", env.mkdir("share", "later"), "--vm", "test", "--no-autostart")
    env.ctl("set", "later", "vm", "")
    check(env.share("later")["vm"] == "", "set vm \"\"")

    # detach, stop, remove, set: refused or not found, exit 1 and why
    failed_with(env.ctl("detach", "novm", rc=1), "not assigned to a VM")
    failed_with(env.ctl("stop", "ghost", rc=1), "There is no share “ghost”")
    failed_with(env.ctl("detach", "ghost", rc=1), "There is no share “ghost”")
    failed_with(env.ctl("remove", "ghost", rc=1), "There is no share “ghost”")
    failed_with(env.ctl("set", "ghost", "readonly", "on", rc=1), "There is no share “ghost”")
    failed_with(env.ctl("set", "a", "mount-point", "relative/path", rc=1))
    failed_with(env.ctl("set", "a", "vm", "ghost", rc=1), "libvirt knows no VM “ghost”")
    check(env.share("a")["vm"] == "test", "a refused set vm changed the share")

    # vm NAME add-slots: what the command line gets wrong is a usage error
    for args in (["vm", "test", "add-slots", "0"], ["vm", "test", "add-slots", "many"],
                 ["vm", "test", "add-slots", "17"], ["vm", "test", "add-slots", "1", "2"],
                 ["vm", "test", "add-slot"]):
        r = env.ctl(*args, rc=2)
        check("sluicectl --help" in r.stderr, f"sluicectl {' '.join(args)}: {r.stderr!r}")
    failed_with(env.ctl("vm", "ghost", "add-slots", rc=1), "There is no VM “ghost”")
    check("add-slots" in env.ctl("--help").stdout, "--help does not list add-slots")
    env.stop_service(service)


CASES = st.cases_in(globals())


if __name__ == "__main__":
    # test-service.py's runner (Env, clean-up, logs on failure) with these cases
    sys.exit(st.main(CASES))

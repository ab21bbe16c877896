#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/service: the folder a worker serves is the folder that was checked,
not whatever its path names by the time the worker starts.

    test-share-folder.py CASE      (CASE: see CASES at the bottom)

The attack: share A is a folder P shared with VM X, share B is P/sub shared
with VM Y.  X's guest can rename anything inside P, so it can put another
folder of P, or a symbolic link to the user's home, where P/sub was.  The
service checks B's folder and then starts (or, after a crash, restarts) its
worker: that worker must serve the folder that was checked, or nothing.

The renames below are made on the host as the guest of P would make them
(rename inside P, a link to the home), against the real service on
test-service.py's private bus (Env): as root with SLUICE_TEST_USER set, the
service and its workers run as that user.  What is asserted is what the
attacker wants: no listing through B's socket ever shows the home's file or
the other folder's, and B ends in "failed" with a message saying what changed.

  folder-swapped  after AddShare, another folder of P takes P/sub's place:
                  Start fails; put back, Start serves P/sub.  While it runs,
                  another folder, then a link to the home, take its place and
                  the worker is killed: the supervised restart fails the share
                  instead of serving them.  Start with the link there fails.
The race between the service's check and a worker's start needs no case of its
own: no launch resolves the path any more (the worker gets the folder opened
without following links, as --shared-dir-fd), which tests/frontend's
test-cmdline (/cmdline/shared-dir-fd) checks from the worker's side.
"""
import importlib.util
import os
import signal
import sys

_spec = importlib.util.spec_from_file_location(
    "service_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-service.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)
Failure, check, wait_for = st.Failure, st.check, st.wait_for

SECRET = "secret-of-the-home.txt"
DECOY = "file-of-another-folder.txt"
INSIDE = "file-of-sub.txt"


def assert_not_leaked(env, tag, sock, when):
    """Whatever serves the share's socket now must not list the home's or the
    other folder's file (no socket, no worker: nothing is served)."""
    if not os.path.exists(sock):
        return
    r = env.vmm(sock, "ls")
    listed = r.stdout + r.stderr
    check(SECRET not in listed, f"{when}: the worker of {tag} lists the user's home:\n{listed}")
    check(DECOY not in listed, f"{when}: the worker of {tag} lists another folder:\n{listed}")


def settled_after_crash(env, tag, old_pid):
    """The share once the crash is handled: failed, or running on a new worker."""
    def settled():
        s = env.share(tag)
        if s["state"] == "failed":
            return s
        pids = env.worker_pids(tag)
        if s["state"] == "running" and pids and pids != old_pid:
            return s
        return None
    return wait_for(settled, 60, f"{tag} to fail or run again after its worker was killed")


def case_folder_swapped(env):
    check(env.vmm_bin, "SLUICE_TEST_VMM (tests/frontend's sluice-test-vmm) is not built")
    home = env.path("home")            # the user's home: HOME of the service
    env.write(os.path.join("home", SECRET), "the user's own file")
    parent = env.mkdir("share", "P")   # share A's folder, a guest's playground
    sub = env.mkdir("share", "P", "sub")
    env.write(os.path.join("share", "P", "sub", INSIDE), "shared with Y")
    other = env.mkdir("share", "P", "other")
    env.write(os.path.join("share", "P", "other", DECOY), "shared with X only")
    kept = os.path.join(parent, "sub.kept")

    def swap_in(what):
        os.rename(sub, kept)
        if what == "link":
            os.symlink(home, sub)
        else:
            os.rename(other, sub)

    def put_back(what):
        if what == "link":
            os.unlink(sub)
        else:
            os.rename(sub, other)
        os.rename(kept, sub)

    service = env.start_service()
    env.ctl("add", sub, "--tag", "sub", "--no-autostart")
    sock = os.path.join(env.socket_dir(), f"{env.share('sub')['id']}.sock")

    # 1. Another folder of P in its place after AddShare: Start refuses it.
    swap_in("folder")
    r = env.ctl("start", "sub", rc=None)
    assert_not_leaked(env, "sub", sock, "Start with another folder in its place")
    s = env.share("sub")
    check(r.returncode == 1 and s["state"] == "failed", f"Start with another folder in its place: {s}, {r.stderr}")
    check("no longer the folder that was shared" in s["error"] and "another folder" in s["error"]
          and "remove the share and add the folder again" in s["error"], f"error: {s['error']}")
    check(not env.worker_pids("sub"), "a worker runs for the replaced folder")
    put_back("folder")
    env.ctl("start", "sub")
    r = env.vmm(sock, "ls")
    check(r.returncode == 0 and INSIDE in r.stdout, f"the share's own folder is not served: {r.stdout} {r.stderr}")

    # 2. While it runs, another folder in its place, then the worker crashes.
    for what, said in (("folder", "another folder"), ("link", "symbolic link")):
        old = env.worker_pids("sub")
        check(len(old) == 1, f"workers of sub: {old}")
        swap_in(what)
        os.kill(old[0], signal.SIGKILL)
        s = settled_after_crash(env, "sub", old)
        assert_not_leaked(env, "sub", sock, f"the restart with a {what} in its place")
        check(s["state"] == "failed", f"the restart with a {what} in its place: {s}")
        check("no longer the folder that was shared" in s["error"] and said in s["error"],
              f"error after the restart with a {what} in its place: {s['error']}")
        check(not env.worker_pids("sub"), f"a worker runs with a {what} in its place")
        if what == "link":
            break
        put_back(what)
        env.ctl("start", "sub")
        check(env.share("sub")["state"] == "running", f"Start after putting it back: {env.share('sub')}")

    # 3. Start with the link still there: refused, nothing served.
    r = env.ctl("start", "sub", rc=None)
    assert_not_leaked(env, "sub", sock, "Start with a link in its place")
    s = env.share("sub")
    check(r.returncode == 1 and s["state"] == "failed" and "no longer the folder" in s["error"],
          f"Start with a link in its place: {s}, {r.stderr}")
    put_back("link")
    env.ctl("start", "sub")
    r = env.vmm(sock, "ls")
    check(r.returncode == 0 and INSIDE in r.stdout and SECRET not in r.stdout,
          f"the share's own folder after putting it back: {r.stdout} {r.stderr}")
    env.stop_service(service)


CASES = st.cases_in(globals())

if __name__ == "__main__":
    # test-service.py's runner (Env, clean-up, logs on failure) with these cases
    sys.exit(st.main(CASES))

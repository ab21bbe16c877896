#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/session: a frontend reading a file in a loop over ONE connection,
as a guest's mount does, until told to stop.

    read-loop.py VMM SOCKET NAME EXPECTED STATE_DIR

VMM is tests/frontend's sluice-test-vmm, run in "session" mode.  After each
read STATE_DIR/count holds the number of good reads so far (written by
rename, so a reader never sees half of it); a read that fails or returns
anything but EXPECTED is appended to STATE_DIR/failures.  It stops when
STATE_DIR/stop exists and exits 0 only when no read failed.  A read waits
as long as the VMM's --timeout lets it (a worker restart is a pause, not a
failure); that bound is what makes a hang a failure."""
import os
import subprocess
import sys


def main():
    vmm, sock, name, expected, state = sys.argv[1:6]
    proc = subprocess.Popen([vmm, "--timeout=20000", "--socket", sock, "session"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    good = failed = 0
    while not os.path.exists(os.path.join(state, "stop")):
        proc.stdin.write(f"read {name}\n")
        proc.stdin.flush()
        out = []
        while True:
            line = proc.stdout.readline()
            if line == "":
                status = "the frontend's connection ended"
                break
            line = line.rstrip("\n")
            if line == "ok" or line.startswith("error"):
                status = line
                break
            out.append(line)
        if status == "ok" and "".join(out) == expected:
            good += 1
            tmp = os.path.join(state, "count.tmp")
            with open(tmp, "w") as f:
                f.write(str(good))
            os.rename(tmp, os.path.join(state, "count"))
            continue
        failed += 1
        with open(os.path.join(state, "failures"), "a") as f:
            f.write(f"read {good + failed}: {status}, got {out!r}\n")
        if status.startswith("the frontend"):
            break
    proc.stdin.close()
    proc.wait(timeout=30)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

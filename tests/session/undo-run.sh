#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/undo-run.sh WORK CGROUP — removes what a run of run.sh
# leaves: the processes of its mount namespace (WORK/mntns names it), then
# everything in its cgroup folder CGROUP (cgroup.kill) and the folders,
# deepest first; the workers' sockets' folder a service made in /tmp; WORK.
# Idempotent: run.sh calls it at its end, and its guard calls it again once
# run.sh is gone, in case run.sh was killed before it could (meson's timeout
# SIGKILLs the test's process group half a second after its SIGTERM).
# Exit 1 when something could not be removed.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
work=$1 cgroup=$2
status=0

ns=$(cat "$work/mntns" 2>/dev/null)
if [ -n "$ns" ]; then
        for pid in /proc/[0-9]*; do
                [ "$(readlink "$pid/ns/mnt" 2>/dev/null)" = "$ns" ] && kill -KILL "${pid#/proc/}" 2>/dev/null
        done
fi
if [ -d "$cgroup" ]; then
        echo 1 >"$cgroup/cgroup.kill" 2>/dev/null
        wait_for 30 grep -c '^populated 0$' "$cgroup/cgroup.events" ||
                { echo "FAIL: processes are left in $cgroup"; status=1; }
        find "$cgroup" -depth -type d -exec rmdir {} + 2>/dev/null
        [ ! -d "$cgroup" ] || { echo "FAIL: cannot remove $cgroup"; status=1; }
fi
# (a restarted service finds its sockets' folder again through this link,
# so the service leaves it; the run's runtime folder is about to go)
link=$(readlink "$work/run/sluice/sockets" 2>/dev/null)
case $link in /tmp/sluice-*) rm -rf "$link" ;; esac
rm -rf "$work"
exit $status

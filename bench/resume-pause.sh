#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/resume-pause.sh [BUILD] — the pause a guest sees per worker crash:
# runs the "pause" phase of tests/libvirt/test-worker-resume.sh (a busybox
# TCG guest reads a file of its share in a tight loop while the share's
# worker is SIGKILLed 20 times, 31 s apart: sluice-service takes two crashes
# within 30 s for a poisoned request and answers the second one's in-flight
# requests EIO, a third drops the state; SLUICE_RESUME_PAUSE_SPACING=S for
# another spacing) and reports the pauses with
# bench/resume-pause-report.py.  Root, a system libvirtd (the test starts
# one), a build with the worker fd store.  SLUICE_RESUME_KILLS=N for another
# count; the kept logs are in $out.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
out=${SLUICE_RESUME_OUT:-$(mktemp -d /tmp/sluice-resume-pause.XXXXXX)}
SLUICE_BUILD_ROOT=$build SLUICE_SOURCE_ROOT=$top SLUICE_RESUME_PHASES=pause SLUICE_RESUME_OUT=$out \
        SLUICE_RESUME_PAUSE_SPACING=${SLUICE_RESUME_PAUSE_SPACING:-31} \
        "$top/tests/libvirt/test-worker-resume.sh"
rc=$?
[ $rc = 0 ] || echo "resume-pause: the test run ended with status $rc (its log above)"
"$here/resume-pause-report.py" "$out" || exit 1
echo "logs: $out"

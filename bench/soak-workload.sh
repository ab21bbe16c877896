#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# soak-workload.sh — the guest side of `make soak` (bench/soak.sh): mounts the
# share and runs /bin/soak-guest (bench/soak-guest.c) on /mnt/soak for
# $SOAK_SECONDS with $SOAK_PROCS processes (one per vCPU, each pinned), its
# manifests going to /mnt/manifests.  "SOAK-RUNNING" and "SOAK-FINISHED" mark
# the mixed phase for the host's sampler.
. /workload-lib.sh
mount_share
pass mount
echo "SOAK-RUNNING"
if soak-guest /mnt/soak /mnt/manifests "$SOAK_SECONDS" "$SOAK_PROCS" "$SOAK_SEED"; then
        pass soak-model-in-guest
else
        fail soak-model-in-guest "a guest process saw something its model did not expect (FAIL soak-pN above)"
fi
echo "SOAK-FINISHED"
sync
check umount umount /mnt
echo DONE

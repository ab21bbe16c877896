#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-workload.sh — /workload.sh of a benchmark guest (see bench/run.sh).
# Mounts the share on /mnt (9p with the cache mode in BENCH_9P_CACHE), runs
# /bin/guest-bench on it with BENCH_ARGS and prints its RESULT lines, then DONE.
set -u
if [ "$SLUICE_FSTYPE" = 9p ]; then
        mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,cache=${BENCH_9P_CACHE:-loose}" \
                "$SLUICE_TAG" /mnt || { echo "FAIL mount"; exit 1; }
else
        $SLUICE_MOUNT || { echo "FAIL mount"; exit 1; }
fi
grep " /mnt " /proc/mounts | sed 's/^/INFO mount /'
echo "INFO guest kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) vCPU(s)"
mkdir -p /mnt/bench || { echo "FAIL mkdir"; exit 1; }
# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
if /bin/guest-bench /mnt/bench ${BENCH_ARGS:-}; then
        echo "PASS guest-bench"
else
        echo "FAIL guest-bench exited $?"
fi
# Which vCPU took the virtio interrupts (does a request complete where it was sent?).
grep -E 'virtio|CPU0' /proc/interrupts | sed 's/  */ /g; s/^/INFO irq /'
rmdir /mnt/bench 2>/dev/null
cd / && umount /mnt
echo DONE

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the Sluice test guest (busybox).  Installed by build-image.sh.
#
# Mounts proc/sys/dev, loads the virtio, virtiofs and 9p modules, then runs
# /workload.sh (carried by an extra cpio, see mkcpio.sh) with its output on the
# console and powers off when it returns; with no /workload.sh it starts a
# shell.  Variables in /workload.env (written by run-guest.sh: SLUICE_TAG,
# SLUICE_FSTYPE, SLUICE_MOUNT and --env ones) are exported to the workload.
export PATH=/bin:/sbin
mount -t devtmpfs dev /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sys /sys
mkdir -p /tmp /mnt /dev/shm
mount -t tmpfs tmp /tmp

for m in $(cat /etc/modules.order); do
        insmod "$m" 2>/dev/null || true
done

if [ -f /workload.sh ]; then
        if [ -f /workload.env ]; then
                set -a
                . /workload.env
                set +a
        fi
        read -r up _ </proc/uptime
        # Which kernel and how many CPUs ran the workload (the host's tests check).
        echo "GUEST-KERNEL $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo)"
        echo "sluice-guest: workload starting at ${up}s"
        sh /workload.sh
        rc=$?
        read -r up _ </proc/uptime
        echo "sluice-guest: workload exited $rc at ${up}s"
        sync
        poweroff -f
else
        echo "sluice-guest: no /workload.sh, starting a shell (poweroff -f to leave)"
        setsid cttyhack sh
        poweroff -f
fi

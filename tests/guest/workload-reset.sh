#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# workload-reset.sh — runs in the guest (busybox sh), twice: a hard reset
# between the two boots, without unmounting (guest-reset.sh).
#
# Boot 1 finds no before-reset.txt in the share: it mounts, writes it and
# resets the machine at once (sysrq b: no unmount, no FUSE DESTROY).  Boot 2
# (the same initrd) finds the file: the new kernel's mount must work —
# read the file, write after-reset.txt, list, unmount.  A share that is dead
# after the reset fails boot 2's checks, or boot 1's path (the file cannot be
# seen, and not written either).  Prints PASS/FAIL per check and DONE.

. /workload-lib.sh
mount_share

if [ ! -e /mnt/before-reset.txt ]; then
        echo "BOOT 1"
        echo "written before the reset" >/mnt/before-reset.txt ||
                give_up write-before-reset "cannot write /mnt/before-reset.txt"
        pass write-before-reset
        sync
        # A hard reset, as a crash or `virsh reset` would do it: the mount stays.
        echo b >/proc/sysrq-trigger
        sleep 60
        give_up reset "still running 60 s after sysrq b"
fi

echo "BOOT 2"
pass mount-after-reset
same read-after-reset "written before the reset" "$(cat /mnt/before-reset.txt 2>&1)"
if echo "written after the reset" >/mnt/after-reset.txt; then
        pass write-after-reset
else
        fail write-after-reset "cannot write /mnt/after-reset.txt"
fi
same readback-after-reset "written after the reset" "$(cat /mnt/after-reset.txt 2>&1)"
same listing-after-reset "after-reset.txt before-reset.txt" "$(ls /mnt | tr '\n' ' ' | sed 's/ $//')"
umount /mnt && pass umount || fail umount "umount /mnt failed"
echo DONE

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# workload-kill.sh — runs in the guest (busybox sh), once per boot; QEMU is
# SIGKILLed in the middle of boots 1..$SLUICE_KILLS (guest-kill.sh, with
# run-guest.sh --kill-on) and the same sluice-fs worker serves every boot.
#
# Each boot counts the boot-N.txt files the earlier ones left.  A boot to be
# killed first writes settled-N.bin and its checksum and syncs them (they must
# survive the kill), then starts I/O that never ends — large writes with
# fsync, reads of them, a stream of small file writes — and prints the kill line
# while it runs.  Every later boot checks the settled files of all earlier
# ones; the last one also writes, reads back, lists and unmounts, then DONE.

. /workload-lib.sh
mount_share

# The busy files of a killed boot go first, so that the share (and with it
# the worker's table of what the guest looked up) does not grow with every
# kill: guest-kill.sh compares the worker's memory after each one.
rm -f /mnt/busy-* /mnt/small-*
n=$(ls /mnt | grep -c '^boot-')
boot=$((n + 1))
echo "BOOT $boot"
echo "boot $boot" >"/mnt/boot-$boot.txt" || give_up "write-boot-$boot" "cannot write /mnt/boot-$boot.txt"

i=1
while [ "$i" -lt "$boot" ]; do
        same "settled-$i-after-kill" "$(cat "/mnt/settled-$i.sum" 2>&1)" \
                "$(cd /mnt && md5sum "settled-$i.bin" 2>&1)"
        i=$((i + 1))
done

if [ "$boot" -le "${SLUICE_KILLS:-2}" ]; then
        dd if=/dev/urandom of="/mnt/settled-$boot.bin" bs=64k count=4 2>/dev/null ||
                give_up "settled-$boot" "cannot write settled-$boot.bin"
        (cd /mnt && md5sum "settled-$boot.bin") >"/mnt/settled-$boot.sum"
        sync
        pass "settled-$boot"
        (while :; do
                dd if=/dev/zero of="/mnt/busy-$boot.bin" bs=256k count=8 conv=fsync 2>/dev/null
                cat "/mnt/busy-$boot.bin" >/dev/null
        done) &
        (j=0; while :; do j=$((j + 1)); echo "$j" >"/mnt/small-$boot-$((j % 64))"; done) &
        # The I/O is under way once a first busy write has landed.
        k=0
        while [ ! -s "/mnt/busy-$boot.bin" ] && [ "$k" -lt 600 ]; do sleep 0.1; k=$((k + 1)); done
        echo "SLUICE-KILL-QEMU boot $boot"
        sleep 600
        give_up "kill-$boot" "QEMU was not killed within 600 s"
fi

pass "served-after-${SLUICE_KILLS:-2}-kills"
echo "after the kills" >/mnt/after-kills.txt && pass write-after-kills ||
        fail write-after-kills "cannot write /mnt/after-kills.txt"
same readback-after-kills "after the kills" "$(cat /mnt/after-kills.txt 2>&1)"
same boots-listed "$boot" "$(ls /mnt | grep -c '^boot-')"
umount /mnt && pass umount || fail umount "umount /mnt failed"
echo DONE

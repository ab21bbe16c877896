#!/bin/sh
# demo-workload.sh — what the throwaway guest of `make demo` does (busybox sh).
echo
echo "guest: mounting the share:  $SLUICE_MOUNT"
if ! $SLUICE_MOUNT; then
        echo "FAIL mount: $SLUICE_MOUNT failed"
        echo DONE
        exit 1
fi
echo "PASS mount"
echo "guest: the share as the guest sees it:"
ls -la /mnt | sed 's/^/guest:   /'
echo "guest: its README says: $(cat /mnt/README.txt)"
echo "guest: writing /mnt/hello-from-guest.txt"
{
        echo "Hello from the guest!"
        echo "kernel $(uname -r), written at $(date -u '+%Y-%m-%d %H:%M:%S') UTC (guest clock)"
} >/mnt/hello-from-guest.txt && echo "PASS write" || echo "FAIL write: could not write to the share"
dd if=/dev/zero of=/mnt/some-data.bin bs=1M count=8 2>/dev/null && echo "PASS write-8MiB" ||
        echo "FAIL write-8MiB: dd failed"
df -h /mnt | sed 's/^/guest:   /'
cd /
umount /mnt && echo "PASS umount" || echo "FAIL umount: umount /mnt failed"
echo "guest: powering off"
echo DONE

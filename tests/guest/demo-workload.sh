#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# demo-workload.sh — the throwaway guest of `make demo` (busybox sh, /workload.sh).
#
# It mounts nothing itself: it waits until the share the host hot-plugs
# (`sluicectl add … --attach`) appears mounted at /mnt/TAG (sluice_tag= on the
# kernel command line), put there by sluice-service through the guest's QEMU
# guest agent; then it lists it, writes a file the host then reads, and after
# the host has switched the share to read-only (`sluicectl set TAG readonly on`)
# tries one more write, which must fail.
# Handshake with tests/guest/demo.sh: the guest prints "STEP NAME" on the
# console and waits for the host's .ctl/go-NAME in the share (no fixed sleeps;
# generous limits, then it gives up saying why).  Lines for the viewer start
# with "guest: "; /init powers the VM off when this script returns.
tag=$(sed -n 's/.*sluice_tag=\([^ ]*\).*/\1/p' /proc/cmdline)
mnt=/mnt/$tag
has_dev() { ls /sys/bus/virtio/drivers/virtiofs/ 2>/dev/null | grep -q '^virtio'; }
give_up() { echo "FAIL $1: $2"; exit 1; }
# within SECONDS WHAT COMMAND… — polls COMMAND until it succeeds; gives up on WHAT after SECONDS
within() {
        limit=$(($1 * 10)) what=$2
        shift 2
        until "$@"; do
                limit=$((limit - 1))
                [ "$limit" -gt 0 ] || give_up "$what" "still waiting after the limit: $*"
                sleep 0.1
        done
}
# wait_go NAME — tells the host we reached NAME and waits for its go-ahead
wait_go() {
        echo "STEP $1"
        within 120 "go-$1" test -e "$mnt/.ctl/go-$1"
}

echo "READY tag=$tag"
within 180 device has_dev
echo "guest: a virtiofs device appeared; this guest does not mount it, it waits"
is_mounted() { grep -q "^$tag $mnt virtiofs " /proc/mounts; }
within 120 mount is_mounted
echo "guest: the share appeared by itself:  $(grep "^$tag $mnt virtiofs " /proc/mounts)"
echo "PASS mount"
echo "guest: ls -l $mnt"
ls -l "$mnt" | sed 's/^/guest:   /'
echo "guest: cat $mnt/README.txt"
sed 's/^/guest:   /' "$mnt/README.txt"
echo "guest: writing $mnt/hello-from-guest.txt and 4 MiB of data"
{
        echo "Hello from the guest!"
        echo "Written by Linux $(uname -r) at $(date -u '+%Y-%m-%d %H:%M:%S') UTC (guest clock)."
} >"$mnt/hello-from-guest.txt" || give_up write "could not write to the share"
dd if=/dev/urandom of="$mnt/data.bin" bs=65536 count=64 2>/dev/null || give_up write "dd to the share failed"
sync
echo "PASS write"
wait_go readonly
echo "guest: the host made the share read-only; writing again:  echo more > $mnt/after-readonly.txt"
# busybox says "sh: can't create …: Read-only file system" (its prefix dropped)
out=$(sh -c "echo more >$mnt/after-readonly.txt" 2>&1) && out=succeeded
echo "guest:   ${out#sh: }"
cat "$mnt/hello-from-guest.txt" >/dev/null && echo "guest: reading still works"
echo "RESULT readonly-write: $out"
cd /
echo "guest: done; powering off"
echo DONE

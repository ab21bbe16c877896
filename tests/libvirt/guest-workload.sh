# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of tests/libvirt (runs as /workload.sh in the test guest).
# The mount tag comes from the kernel command line (sluice_tag=TAG).  For
# every virtiofs device that appears (hot-plugged or present at boot) it
# mounts the tag, reads hello.txt from the host, writes a file back, unmounts
# (then prints IDLE) and waits until the device is gone again: one "round" per
# plug-in.
tag=$(sed -n 's/.*sluice_tag=\([^ ]*\).*/\1/p' /proc/cmdline)
boot=$(cut -c1-8 /proc/sys/kernel/random/uuid)
mnt=/mnt/$tag
mkdir -p "$mnt"
has_dev() { ls /sys/bus/virtio/drivers/virtiofs/ 2>/dev/null | grep -q '^virtio'; }
echo "READY boot=$boot tag=$tag"
round=0
while :; do
        until has_dev; do sleep 0.1; done
        ok=
        # the device shows up before the host side may be ready: retry
        for _ in $(seq 1 50); do
                if mount -t virtiofs "$tag" "$mnt" 2>/dev/null; then ok=1; break; fi
                sleep 0.1
        done
        if [ -z "$ok" ]; then
                echo "FAIL mount boot=$boot round=$round: $(mount -t virtiofs "$tag" "$mnt" 2>&1)"
        else
                if content=$(cat "$mnt/hello.txt"); then
                        echo "PASS read boot=$boot round=$round: $content"
                else
                        echo "FAIL read boot=$boot round=$round"
                fi
                if echo "written by guest $boot round $round" > "$mnt/guest-$boot-$round.txt" && sync; then
                        echo "PASS write boot=$boot round=$round"
                else
                        echo "FAIL write boot=$boot round=$round"
                fi
                umount "$mnt" || echo "FAIL umount boot=$boot round=$round"
        fi
        # nothing of this round is in flight any more (umount waited for its DESTROY)
        echo "IDLE boot=$boot round=$round"
        while has_dev; do sleep 0.1; done
        echo "GONE boot=$boot round=$round"
        round=$((round + 1))
done

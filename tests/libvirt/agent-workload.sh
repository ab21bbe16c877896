# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of tests/libvirt/guest-agent.sh (runs as /workload.sh in the test
# guest, busybox sh).  It mounts NOTHING: the service does that through the
# guest's agent.  It only watches and reports, one line per event:
#   READY boot=ID                     the workload runs
#   MOUNTED MOUNTPOINT: CONTENT       a virtiofs mount appeared (a new mount ID,
#                                     so a re-mount at the same place counts);
#                                     CONTENT is its hello.txt, read through it
#   UNMOUNTED MOUNTPOINT              that mount is gone from the mount table
#   DEVICE virtioN                    a virtiofs device came (the host waits for
#                                     it before an unplug it checks: a device in
#                                     and out between two looks is never seen)
#   GONE virtioN                      a virtiofs device left the guest, then
#   MOUNTS-AFTER-GONE: LINES|none     the virtiofs lines of /proc/mounts at that
#                                     moment: an unplug under a mount leaves a
#                                     dead mount there, "none" proves the unmount
#                                     came first
#   HOLDING pid=N / RELEASED          see /tmp/ctl-hold below
#   FSTAB: LINE … FSTAB-END           see /tmp/ctl-fstab below
#   READ MOUNTPOINT: CONTENT          see /tmp/ctl-read below
# The host asks through the agent (guest-file-open "w" of a file in the
# guest's /tmp), never through the share itself, so that nothing of the
# workload touches the share while the service (un)mounts it:
#   /tmp/ctl-hold     start `sleep 1000` with its cwd in the newest mount
#   /tmp/ctl-release  end it
#   /tmp/ctl-fstab    print /etc/fstab
#   /tmp/ctl-read     read hello.txt through every virtiofs mount, as a user's
#                     next `cat` would (the host asks once the share is back:
#                     a mount at the same place may get the same mount ID, so
#                     MOUNTED alone cannot tell a re-mount)
boot=$(cut -c1-8 /proc/sys/kernel/random/uuid)
echo "READY boot=$boot"

# "ID MOUNTPOINT" of every virtiofs mount (mountinfo: the part after " - " is
# the file system type)
mounts() { awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "virtiofs") print $1, $5 }' /proc/self/mountinfo; }
devices() { ls /sys/bus/virtio/drivers/virtiofs/ 2>/dev/null | grep '^virtio'; }

old_mounts=$(mounts)
old_devs=$(devices)
holder=
hold_dir=
while :; do
        new_mounts=$(mounts)
        new_devs=$(devices)
        # devices gone first: /proc/mounts is read after noticing
        for d in $old_devs; do
                echo "$new_devs" | grep -qx "$d" && continue
                left=$(grep ' virtiofs ' /proc/mounts | tr '\n' ';')
                echo "GONE $d"
                echo "MOUNTS-AFTER-GONE: ${left:-none}"
        done
        for d in $new_devs; do
                echo "$old_devs" | grep -qx "$d" || echo "DEVICE $d"
        done
        echo "$old_mounts" | while read -r id mp; do
                [ -n "$id" ] || continue
                echo "$new_mounts" | grep -qx "$id $mp" || echo "UNMOUNTED $mp"
        done
        echo "$new_mounts" | while read -r id mp; do
                [ -n "$id" ] || continue
                echo "$old_mounts" | grep -qx "$id $mp" && continue
                echo "MOUNTED $mp: $(head -c 200 "$mp/hello.txt" 2>&1)"
        done
        if [ -f /tmp/ctl-hold ]; then
                rm -f /tmp/ctl-hold
                hold_dir=$(echo "$new_mounts" | tail -n 1 | cut -d' ' -f2)
                if [ -n "$hold_dir" ]; then
                        (cd "$hold_dir" && exec sleep 1000) &
                        holder=$!
                        echo "HOLDING pid=$holder dir=$hold_dir"
                else
                        echo "HOLDING none: nothing mounted"
                fi
        fi
        if [ -f /tmp/ctl-release ]; then
                rm -f /tmp/ctl-release
                [ -n "$holder" ] && kill "$holder" && wait "$holder" 2>/dev/null
                holder=
                echo "RELEASED"
        fi
        if [ -f /tmp/ctl-read ]; then
                rm -f /tmp/ctl-read
                echo "$new_mounts" | while read -r id mp; do
                        [ -n "$id" ] || continue
                        echo "READ $mp: $(timeout 10 head -c 200 "$mp/hello.txt" 2>&1)"
                done
                echo "READ-END"
        fi
        if [ -f /tmp/ctl-fstab ]; then
                rm -f /tmp/ctl-fstab
                sed 's/^/FSTAB: /' /etc/fstab 2>/dev/null
                echo "FSTAB-END"
        fi
        old_mounts=$new_mounts
        old_devs=$new_devs
        sleep 0.2
done

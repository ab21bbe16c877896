#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the Sluice test guest (busybox).  Installed by build-image.sh.
#
# Mounts proc/sys/dev, loads the virtio, virtiofs and 9p modules, then runs
# /workload.sh (carried by an extra cpio, see mkcpio.sh) with its output on the
# console and powers off when it returns; with no /workload.sh it starts a
# shell.  Variables in /workload.env (written by run-guest.sh: SLUICE_TAG,
# SLUICE_FSTYPE, SLUICE_MOUNT and --env ones) are exported to the workload.
#
# With an agent channel (the virtio-serial port named org.qemu.guest_agent.0)
# it starts an agent there in the background, as the kernel command line says:
#   (default)                  Debian's qemu-ga
#   sluice_qga=off             none
#   sluice_qga_block=CMD,CMD   qemu-ga refusing those commands (as RHEL's
#                              policy refuses guest-exec)
#   sluice_qga=windows         /bin/sluice-qga-windows, the tests' pretend
#                              Windows agent (sluice_qga_missing=X: X is "not
#                              installed"); it prints each command as a
#                              "QGA-WIN: {json}" line on the console;
#                              sluice_qga_error_escapes=TAG: its errors for
#                              TAG hold escapes and non-UTF-8 (qga-windows.c);
#                              sluice_qga_msi_result=CODE,…: what its next
#                              msiexec runs answer (1603 fails, 3010 reboot);
#                              sluice_qga_taken=X: drive X: is a USB stick
#   sluice_qga=liar            the same program as a Linux agent that can lie
#                              (--os linux): honest until the host switches it
#                              with "sluice-test-lie" (sluice_qga_lie=MODE: from
#                              the start)
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

# kernel command line word NAME=VALUE → VALUE (empty when absent)
cmdline_value() { sed -n "s/.*\(^\| \)$1=\([^ ]*\).*/\2/p" /proc/cmdline; }
# the agent's port: busybox's mdev makes no /dev/virtio-ports/ links
agent_port() {
        for p in /sys/class/virtio-ports/vport*; do
                [ "$(cat "$p/name" 2>/dev/null)" = org.qemu.guest_agent.0 ] && { echo "/dev/${p##*/}"; return 0; }
        done
        return 1
}
# a virtio-serial controller is there: its ports' names come from the host
# shortly after the driver binds (bounded wait)
if ls /sys/bus/virtio/drivers/virtio_console/ 2>/dev/null | grep -q '^virtio'; then
        for _ in $(seq 1 50); do
                port=$(agent_port) && [ -c "$port" ] && break
                sleep 0.1
        done
fi
qga_mode=$(cmdline_value sluice_qga)
if [ "$qga_mode" != off ] && port=$(agent_port) && [ -c "$port" ]; then
        mkdir -p /run /var
        ln -sfn /run /var/run
        if [ "$qga_mode" = windows ]; then
                if [ -x /bin/sluice-qga-windows ]; then
                        missing=$(cmdline_value sluice_qga_missing)
                        escapes=$(cmdline_value sluice_qga_error_escapes)
                        msi_result=$(cmdline_value sluice_qga_msi_result)
                        taken=$(cmdline_value sluice_qga_taken)
                        /bin/sluice-qga-windows --port "$port" --record /tmp/qga-windows.log \
                                ${missing:+--missing "$missing"} ${escapes:+--error-escapes "$escapes"} \
                                ${msi_result:+--msi-result "$msi_result"} ${taken:+--taken "$taken"} </dev/null &
                else
                        echo "sluice-guest: sluice_qga=windows but no /bin/sluice-qga-windows in the image"
                fi
        elif [ "$qga_mode" = liar ]; then
                if [ -x /bin/sluice-qga-windows ]; then
                        lie=$(cmdline_value sluice_qga_lie)
                        /bin/sluice-qga-windows --os linux --port "$port" --record /tmp/qga-liar.log \
                                ${lie:+--lie "$lie"} </dev/null &
                else
                        echo "sluice-guest: sluice_qga=liar but no /bin/sluice-qga-windows in the image"
                fi
        elif [ -x /usr/sbin/qemu-ga ]; then
                block=$(cmdline_value sluice_qga_block)
                /usr/sbin/qemu-ga -m virtio-serial -p "$port" -t /run -f /run/qemu-ga.pid \
                        ${block:+-b "$block"} -d ||
                        echo "sluice-guest: qemu-ga did not start"
        else
                echo "sluice-guest: an agent channel but no qemu-ga in the image"
        fi
fi

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

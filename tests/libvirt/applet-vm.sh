#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/applet-vm.sh — the applet with a real VM, as a desktop user
# shares a folder: sluice-applet under Xvfb, the real sluice-service and a
# TCG guest running in the test user's own libvirtd (qemu:///session), dunst as
# the notification server.  A folder is dragged (real XDND) onto the window,
# the VM picked in the chooser with real clicks; the share must attach, the
# "is now in VM" notification that dunst shows must carry the guest hint (the
# mount command), and the guest must mount the share, read the host's file and
# write one back (tests/libvirt/guest-workload.sh).  That VM has no guest agent
# channel: the row shows the hint and offers the agent; a real click adds the
# channel to the VM's persistent definition (Vm.EnableGuestAgent).
#
# When the guest image carries the QEMU guest agent (build-image.sh: OUTDIR/
# qemu-ga) and the service publishes Vm.GuestAgent, a second VM with the
# agent's channel and a workload that mounts nothing (agent-workload.sh) gets
# a share: the service mounts it there, the row says "In the VM at /mnt/TAG"
# instead of the hint, its copy button puts the path on the clipboard, and
# the notification carries the service's sentence of where it is; then a
# process of the guest holds the mount: the row's Stop is refused, the row
# says what uses it and offers Stop Anyway, whose click stops the share and
# takes it out of the VM.  Without them that part is reported as not run
# (the rest still has to pass).  Last, a VM without a free PCIe root port:
# the share's row says why the folder is not in it and offers spare ports,
# whose click adds them to the VM's saved definition (Vm.AddHotplugSlots)
# and says to restart the VM.
#
# This part (root) takes the machine-wide libvirt test lock (lock.sh: libvirt.sh
# also drives the test user's session libvirtd), builds the guest, and runs
# applet-vm-session.sh inside tests/applet/run-test.sh (Xvfb, a private
# session bus, as $SLUICE_TEST_USER).
# Exit: 0 pass, 1 fail, 77 skip (not root, or no QEMU/libvirt/dunst/kernel).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}
. "$top/tests/lib.sh"
need_root "runs the session as \$SLUICE_TEST_USER"
need_tools libvirtd virsh qemu-system-x86_64 dunst xvfb-run xdotool flock
: "${SLUICE_APPLET:?}" "${SA_DRAG_SOURCE:?}"
export SLUICE_TEST_USER=${SLUICE_TEST_USER:-sluice-test}

# One instance per machine (lock.sh says why), and the guest.
. "$here/lib-libvirt.sh"
libvirt_open "$0" "$@"

# What the session reads, where the test user can read it: the guest in
# guest/, the scripts in tests/ laid out as in the source tree (they find
# each other by relative paths).
stage=$(mktemp -d /tmp/sluice-applet-vm.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/guest" "$stage/tests/applet" "$stage/tests/libvirt"
cp "$image/vmlinux" "$stage/guest/vmlinux"
"$top/tests/guest/mkcpio.sh" "$stage/workload.cpio" "$here/guest-workload.sh:/workload.sh" || fail "mkcpio.sh failed"
cat "$image/initrd.cpio" "$stage/workload.cpio" > "$stage/guest/initrd.cpio"
rm "$stage/workload.cpio"
if [ -e "$image/qemu-ga" ] && [ -f "$here/agent-workload.sh" ]; then
        "$top/tests/guest/mkcpio.sh" "$stage/agent-workload.cpio" "$here/agent-workload.sh:/workload.sh" ||
                fail "mkcpio.sh failed"
        cat "$image/initrd.cpio" "$stage/agent-workload.cpio" > "$stage/guest/initrd-agent.cpio"
        rm "$stage/agent-workload.cpio"
else
        note "no agent guest: $(cat "$image/qemu-ga.missing" 2>/dev/null || echo "no qemu-ga in the image or no agent-workload.sh")"
fi
cp "$top/tests/lib.sh" "$top/tests/domain-xml.sh" "$stage/tests/"
cp "$top/tests/applet/lib.sh" "$stage/tests/applet/"
cp "$here/applet-vm-session.sh" "$stage/tests/libvirt/"
chmod -R a+rX "$stage"
chmod 755 "$stage"
SA_GUEST_DIR=$stage/guest "$top/tests/applet/run-test.sh" "$stage/tests/libvirt/applet-vm-session.sh"

#!/usr/bin/env bash
# tests/libvirt/applet-vm.sh — the applet with a real VM, as a desktop user
# shares a folder: sluice-applet under Xvfb, the real sluice-service and a
# TCG guest running in the test user's own libvirtd (qemu:///session), dunst as
# the notification server.  A folder is dragged (real XDND) onto the window,
# the VM picked in the chooser with real clicks; the share must attach, the
# "is now in VM" notification that dunst shows must carry the guest hint (the
# mount command), and the guest must mount the share, read the host's file and
# write one back (tests/libvirt/guest-workload.sh).
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
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (runs the session as \$SLUICE_TEST_USER)"
for tool in libvirtd virsh qemu-system-x86_64 dunst xvfb-run xdotool flock; do
        command -v "$tool" >/dev/null || skip "$tool is not installed"
done
: "${SLUICE_APPLET:?}" "${SA_DRAG_SOURCE:?}"
export SLUICE_TEST_USER=${SLUICE_TEST_USER:-sluice-test}

. "$here/lock.sh"
libvirt_test_lock "$0" "$@"

image=$build/tests/libvirt/guest-image
"$top/tests/guest/build-image.sh" "$image" >/dev/null
rc=$?
[ $rc = 77 ] && skip "no guest kernel/busybox"
[ $rc = 0 ] || { echo "FAIL: build-image.sh failed"; exit 1; }

# What the session reads, where the test user can read it.
stage=$(mktemp -d /tmp/sluice-applet-vm.XXXXXX)
trap 'rm -rf "$stage"' EXIT
cp "$image/vmlinux" "$stage/vmlinux"
"$top/tests/guest/mkcpio.sh" "$stage/workload.cpio" "$here/guest-workload.sh:/workload.sh" || exit 1
cat "$image/initrd.cpio" "$stage/workload.cpio" > "$stage/initrd.cpio"
rm "$stage/workload.cpio"
cp "$top/tests/applet/lib.sh" "$here/applet-vm-session.sh" "$stage/"
chmod -R a+rX "$stage"
chmod 755 "$stage"
SA_GUEST_DIR=$stage "$top/tests/applet/run-test.sh" "$stage/applet-vm-session.sh"

# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the libvirt suite's scripts that drive a real libvirtd (libvirt.sh:
# the system daemon and the test user's session daemon; applet-vm.sh: that
# session daemon): one such run at a time on the machine, since they start,
# restart and stop those daemons and define fixed domain names; another
# worktree's run waits its turn.
#
# libvirt_test_lock SCRIPT ARGS…: outside the lock, runs SCRIPT ARGS… again
# under it and exits with its status; inside (the re-run), returns.
# flock -o: the processes the run starts (libvirtd, QEMU, workers) do not hold
# the lock.
libvirt_test_lock() {
        [ -z "${SLUICE_LIBVIRT_TEST_LOCKED:-}" ] || return 0
        local lock=/run/lock/sluice-libvirt-test.lock rc
        [ -d /run/lock ] || lock=/tmp/sluice-libvirt-test.lock
        SLUICE_LIBVIRT_TEST_LOCKED=1 flock -o -w 600 -E 75 "$lock" "$@"
        rc=$?
        [ $rc = 75 ] && echo "FAIL: another run of a libvirt test held $lock for 10 minutes"
        exit $rc
}

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-reset.sh — a guest that is hard-reset with the share mounted (no
# unmount, no FUSE DESTROY) mounts it again after the reboot and uses it, with
# the same sluice-fs worker (workload-reset.sh); the host then checks both
# files and that the worker said why it started a new session.
#
# $SLUICE_GUEST_BACKEND=virtiofsd runs it against QEMU's legacy daemon (which
# serves the second boot too).  Exit 77 when QEMU or the guest kernel is missing.
. "$(dirname "$0")/guest-lib.sh"
guest_tmp share reset -d
guest_tmp console reset-console
guest_tmp daemon_log reset-daemon
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ] && [ "$backend" = sluice ]; then
        chown "$SLUICE_TEST_USER:" "$share"
fi

# Two TCG boots: twice the time of one run.
"$here/run-guest.sh" --shared-dir "$share" --backend "$backend" --reboot \
        --console "$console" --daemon-log "$daemon_log" --timeout 240 "$here/workload-reset.sh"
status=$?
[ "$status" = 77 ] && exit 77

host_check boots "BOOT 1 BOOT 2" "$(tr -d '\r' <"$console" | grep -E '^BOOT [0-9]$' | tr '\n' ' ' | sed 's/ $//')"
host_check before-reset "written before the reset" "$(cat "$share/before-reset.txt" 2>&1)"
host_check after-reset "written after the reset" "$(cat "$share/after-reset.txt" 2>&1)"
if [ "$backend" = sluice ]; then
        # One worker served both boots, and told why it dropped the first session.
        host_check new-session-logged 1 "$(grep -c 'warning: FUSE INIT: a new session without DESTROY' "$daemon_log")"
fi

if [ "$status" != 0 ] || [ "$test_failures" != 0 ]; then
        echo "guest-reset: FAILED (run-guest status $status)"
        exit 1
fi
echo "guest-reset: all checks passed"

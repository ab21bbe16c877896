#!/usr/bin/env bash
# guest-reset.sh — a guest that is hard-reset with the share mounted (no
# unmount, no FUSE DESTROY) mounts it again after the reboot and uses it, with
# the same sluice-fs worker (workload-reset.sh); the host then checks both
# files and that the worker said why it started a new session.
#
# $SLUICE_GUEST_BACKEND=virtiofsd runs it against QEMU's legacy daemon (which
# serves the second boot too).  Exit 77 when QEMU or the guest kernel is missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
backend=${SLUICE_GUEST_BACKEND:-sluice}

command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 is not installed"; exit 77; }
ls /boot/vmlinuz-* >/dev/null 2>&1 || { echo "SKIP: no guest kernel in /boot"; exit 77; }

share=$(mktemp -d "${TMPDIR:-/tmp}/sluice-reset.XXXXXX")
console=$(mktemp "${TMPDIR:-/tmp}/sluice-reset-console.XXXXXX")
daemon_log=$(mktemp "${TMPDIR:-/tmp}/sluice-reset-daemon.XXXXXX")
trap 'rm -rf "$share" "$console" "$daemon_log"' EXIT
trap 'exit 1' INT TERM HUP
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ] && [ "$backend" = sluice ]; then
        chown "$SLUICE_TEST_USER:" "$share"
fi

# Two TCG boots: twice the time of one run.
"$here/run-guest.sh" --shared-dir "$share" --backend "$backend" --reboot \
        --console "$console" --daemon-log "$daemon_log" --timeout 240 "$here/workload-reset.sh"
status=$?
[ "$status" = 77 ] && exit 77

failed=0
host_check() { # NAME EXPECTED ACTUAL
        if [ "$2" = "$3" ]; then echo "PASS host-$1"; else echo "FAIL host-$1: expected '$2', got '$3'"; failed=1; fi
}
host_check boots "BOOT 1 BOOT 2" "$(tr -d '\r' <"$console" | grep -E '^BOOT [0-9]$' | tr '\n' ' ' | sed 's/ $//')"
host_check before-reset "written before the reset" "$(cat "$share/before-reset.txt" 2>&1)"
host_check after-reset "written after the reset" "$(cat "$share/after-reset.txt" 2>&1)"
if [ "$backend" = sluice ]; then
        # One worker served both boots, and told why it dropped the first session.
        host_check new-session-logged 1 "$(grep -c 'warning: FUSE INIT: a new session without DESTROY' "$daemon_log")"
fi

if [ "$status" != 0 ] || [ "$failed" != 0 ]; then
        echo "guest-reset: FAILED (run-guest status $status)"
        exit 1
fi
echo "guest-reset: all checks passed"

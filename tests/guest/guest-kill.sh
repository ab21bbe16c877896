#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-kill.sh — QEMU SIGKILLed mid-I/O, $SLUICE_GUEST_KILLS times (default 2):
# one sluice-fs --socket-path worker serves every boot (workload-kill.sh; run-guest.sh
# --kill-on kills QEMU when the guest says its I/O is under way).  The host
# checks that the worker saw each frontend go and reset its session, never
# restarted, and that what the guests synced before each kill is intact.
# After each kill the worker's fd count and VmRSS are read from /proc: the fd
# count must not change and VmRSS not grow (SLUICE_GUEST_KILLS=50 for the long
# run recorded in tests/guest/README.md; tests/frontend/test-kill-cycles.c does
# 50 cycles with the test VMM in make check).
#
# Exit 77 when QEMU or the guest kernel is missing.
. "$(dirname "$0")/guest-lib.sh"
kills=${SLUICE_GUEST_KILLS:-2}
guest_tmp share kill -d
guest_tmp console kill-console
guest_tmp daemon_log kill-daemon
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ] && [ "$backend" = sluice ]; then
        chown "$SLUICE_TEST_USER:" "$share"
fi

# kills + 1 TCG boots of a few seconds each.
"$here/run-guest.sh" --shared-dir "$share" --backend "$backend" --kill-on SLUICE-KILL-QEMU \
        --env "SLUICE_KILLS=$kills" --console "$console" --daemon-log "$daemon_log" \
        --timeout 120 "$here/workload-kill.sh"
status=$?
[ "$status" = 77 ] && exit 77

expected_boots=$(seq -f 'BOOT %g' 1 $((kills + 1)) | tr '\n' ' ' | sed 's/ $//')
host_check boots "$expected_boots" "$(tr -d '\r' <"$console" | grep -E '^BOOT [0-9]+$' | tr '\n' ' ' | sed 's/ $//')"
for i in $(seq 1 "$kills"); do
        host_check "settled-$i" "$(cut -d' ' -f1 "$share/settled-$i.sum" 2>&1)" \
                "$(md5sum "$share/settled-$i.bin" 2>&1 | cut -d' ' -f1)"
done
host_check after-kills "after the kills" "$(cat "$share/after-kills.txt" 2>&1)"
if [ "$backend" = sluice ]; then
        host_check one-worker 1 "$(grep -c "info: serving '" "$daemon_log")"
        # every boot connected; each killed one was seen to go and its session reset
        host_check connects $((kills + 1)) "$(grep -c 'info: frontend connected' "$daemon_log")"
        resets=$(grep -c 'frontend disconnected; session reset' "$daemon_log")
        [ "$resets" -ge "$kills" ] && host_check resets ok ok || host_check resets ">= $kills" "$resets"
        # The worker's fds and memory after each kill, from /proc (run-guest.sh
        # samples them once the worker has reset): the same fd and mapping
        # counts every time, and no growth of VmRSS beyond allocator noise.
        samples=$(sed -n 's/^run-guest: after kill \([0-9]*\): worker fds \([0-9]*\) VmRSS \([0-9]*\) KiB maps \([0-9]*\)$/\1 \2 \3 \4/p' "$daemon_log")
        echo "kill  worker fds  VmRSS KiB  mappings"
        awk '{ printf "%4d  %10d  %9d  %8d\n", $1, $2, $3, $4 }' <<<"$samples"
        host_check fd-samples "$kills" "$(grep -c . <<<"$samples")"
        first_fds=$(awk 'NR == 1 { print $2 }' <<<"$samples")
        host_check fds-flat "$first_fds" "$(awk '{ print $2 }' <<<"$samples" | sort -u | tr '\n' ' ' | sed 's/ $//')"
        first_maps=$(awk 'NR == 1 { print $4 }' <<<"$samples")
        host_check maps-flat "$first_maps" "$(awk '{ print $4 }' <<<"$samples" | sort -u | tr '\n' ' ' | sed 's/ $//')"
        growth=$(awk 'NR == 1 { first = $3 } { last = $3 } END { print last - first }' <<<"$samples")
        [ "${growth:-0}" -le 1024 ] && host_check rss-flat ok ok ||
                host_check rss-flat "<= 1024 KiB of growth" "$growth KiB"
fi

if [ "$status" != 0 ] || [ "$test_failures" != 0 ]; then
        echo "guest-kill: FAILED (run-guest status $status)"
        exit 1
fi
echo "guest-kill: all checks passed"

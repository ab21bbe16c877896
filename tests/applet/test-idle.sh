#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The applet hidden in the tray wakes nothing: neither itself (beyond what
# GTK under Xvfb makes) nor the service and the workers of the shares it
# would show.  Shown, it watches its shares' stats (the service samples
# them and the row follows traffic); closed to the tray again, the
# sampling stops.
#
# Wake-ups are counted, not timed: voluntary context switches of every
# thread (/proc/PID/task/*/status).  A timer makes them in proportion to
# the window however loaded the machine is; nothing periodic makes ~0.
# The limits leave room for a stray one, not for a timer.
. "$(dirname "$0")/lib.sh"

# Hidden, GTK under Xvfb made 0–2 in 10 s here (the X connection's odd event);
# the old sampling made ~5 a second per share in the service and workers.
APPLET_LIMIT=5
STACK_LIMIT=10
WINDOW_S=10

thread_counts() { # PID... → "TID COUNT" of every thread: voluntary context switches
        local pid t
        for pid in "$@"; do
                for t in /proc/"$pid"/task/*; do
                        awk -v tid="${t##*/}" '/^voluntary_ctxt_switches/ { print tid, $2 }' "$t/status" 2>/dev/null
                done
        done
}
wakeups_in() { # SECONDS PID... → wake-ups in a window of SECONDS, thread by
        # thread: a thread new in the window counts from 0, one that ended is lost
        local s=$1 before; shift
        before=$(thread_counts "$@")
        sleep "$s"   # the window counted, not a wait for something
        thread_counts "$@" | awk 'NR == FNR { seen[$1] = $2; next }
                { d += $2 - (($1 in seen) ? seen[$1] : 0) } END { print d + 0 }' <(echo "$before") -
}
quiet_for() { [ "$(wakeups_in "$@")" = 0 ]; }  # SECONDS PID...

start_desktop --watcher --notifications
SLUICE_STATS_INTERVAL_MS=200 start_service
shares=()
for name in Docs Photos; do
        mkdir -p "$SA_WORK/$name"
        share=$(add_share "$SA_WORK/$name")
        gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.sluice.Sluice1.Share.Start >/dev/null
        shares+=("$share")
done
for share in "${shares[@]}"; do
        wait_for 30 share_state_is "$share" running || fail "share $share: $(share_prop "$share" State)"
done
mapfile -t workers < <(pgrep -P "$service_pid" -x sluice-fs)
[ "${#workers[@]}" = 2 ] || fail "workers of the service: ${workers[*]:-none}"

start_applet --background
wait_for 15 grep -q '^REGISTERED ' "$desktop_log" || fail "the item never registered with the watcher"
item=$(awk '/^REGISTERED /{print $2; exit}' "$desktop_log")
window_visible && fail "--background opened the window although a tray shows the icon"
# Start-up (the item's first properties, the menu) is over once a second passes quietly.
wait_for 30 quiet_for 1 "$applet_pid" || fail "the hidden applet never went quiet"
hidden=$(wakeups_in "$WINDOW_S" "$applet_pid")
[ "$hidden" -le "$APPLET_LIMIT" ] || fail "hidden in the tray, the applet woke up $hidden times in $WINDOW_S s (limit $APPLET_LIMIT)"
pass "hidden in the tray: $hidden wake-ups of the applet in $WINDOW_S s"
stack=$(wakeups_in 3 "$service_pid" "${workers[@]}")
[ "$stack" -le "$STACK_LIMIT" ] || fail "with the applet hidden, the service and workers woke up $stack times in 3 s"
pass "hidden: the service and its workers woke up $stack times in 3 s"

# Shown: it watches its shares, so the service samples them (5 a second).
gdbus call --session -d "$item" -o /StatusNotifierItem -m org.kde.StatusNotifierItem.Activate 0 0 >/dev/null
wait_for 10 window_visible || fail "Activate did not open the window"
sampled() { [ "$(wakeups_in 2 "${workers[@]}")" -ge 6 ]; }
wait_for 30 sampled || fail "the window is shown but its shares' workers are not sampled"
if [ -n "${SLUICE_TEST_VMM:-}" ]; then
        requests() { share_prop "${shares[0]}" Stats | grep -oE "'requests': <uint64 [0-9]+>" | awk '{ n += $NF } END { print n + 0 }'; }
        before=$(requests)
        sock=$(share_prop "${shares[0]}" SocketPath | sed "s/^(<'\(.*\)'>,)$/\1/")
        "$SLUICE_TEST_VMM" --socket "$sock" ls >/dev/null || fail "ls through the test VMM"
        grew() { [ "$(requests)" -gt "$before" ]; }
        wait_for 20 grew || fail "shown, the share's Stats do not follow its traffic"
fi
pass "shown: the applet watches its shares' stats"

# Closed to the tray: it stops watching.
gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet/Test -m org.sluice.Applet.Test.CloseWindow >/dev/null
window_hidden() { ! window_visible; }
wait_for 10 window_hidden || fail "the window did not close"
wait_for 30 quiet_for 1 "${workers[@]}" || fail "closed to the tray, the applet still has its shares sampled"
stack=$(wakeups_in 3 "$service_pid" "${workers[@]}")
[ "$stack" -le "$STACK_LIMIT" ] || fail "closed again: the service and workers woke up $stack times in 3 s"
pass "closed to the tray: sampling stopped ($stack wake-ups of the service and workers in 3 s)"

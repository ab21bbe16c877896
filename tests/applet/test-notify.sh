#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Notifications reach the (test) notification server with the expected
# summary, body and actions: service unavailable; worker crashed and
# recovered (a real sluice-fs killed under the real service); a VM without
# shared memory (libvirt's test:///default driver has one), whose "Enable
# Shared Memory" action — invoked by the test server, as a click would —
# reaches the service and its answer comes back as a notification.
. "$(dirname "$0")/lib.sh"
export SA_LIBVIRT_URI=test:///default

start_desktop --notifications --invoke=enable-shared-memory
start_applet --background
notified() { grep -qF "$1" "$desktop_log"; }
# No service on the bus: said once, after a short grace period.
wait_for 15 notified $'\tThe Sluice service is unavailable\t' || fail "no 'service unavailable' notification: $(cat "$desktop_log")"

start_service
folder="$SA_WORK/Music"
mkdir -p "$folder"
share=$(add_share "$folder")
gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.sluice.Sluice1.Share.Start >/dev/null
wait_for 20 share_state_is "$share" running || fail "the share did not start: $(share_prop "$share" Error)"

# Crash the worker: the service restarts it and says so; the applet tells the user.
worker=$(pgrep -P "$service_pid" | head -1)
[ -n "$worker" ] || fail "no worker process under the service"
note "killing worker $worker"
kill -SEGV "$worker"
wait_for 20 notified $'\tSharing “Music” stopped unexpectedly\t' || fail "no crash notification: $(cat "$desktop_log")"
grep -F 'Sharing “Music” stopped unexpectedly' "$desktop_log" | grep -qP '\topen$' || fail "the crash notification offers no Open action"
wait_for 30 notified $'\t“Music” is shared again\t' || fail "no recovery notification: $(cat "$desktop_log")"

# A share for a VM without shared memory: told once, with the fix as an action.
mkdir -p "$SA_WORK/ForVm"
gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 -m org.sluice.Sluice1.Manager.AddShare \
        "$SA_WORK/ForVm" test '@a{sv} {}' >/dev/null
wait_for 20 notified $'\ttest has no shared memory\t' || fail "no notification for the VM without shared memory: $(cat "$desktop_log")"
grep -F $'\ttest has no shared memory\t' "$desktop_log" | grep -qP '\tenable-shared-memory$' ||
        fail "the shared-memory notification offers no Enable Shared Memory action"
[ "$(grep -cF $'\ttest has no shared memory\t' "$desktop_log")" = 1 ] || fail "the VM was notified more than once"
wait_for 10 grep -q '^INVOKED ' "$desktop_log" || fail "the test server did not invoke the action"
# The service's answer (test:///default cannot really change a definition, so
# either outcome is the service speaking) comes back as a notification.
fix_answered() { grep -qE $'\t(Shared memory enabled|Could not enable shared memory)\t' "$desktop_log"; }
wait_for 20 fix_answered || fail "the Enable Shared Memory action had no visible result: $(cat "$desktop_log")"
note "$(grep -E 'Shared memory enabled|Could not enable shared memory' "$desktop_log")"

# The service goes away while the applet runs: "stopped", not "unavailable".
stop_service
wait_for 15 notified $'\tThe Sluice service stopped\t' || fail "no notification when the service stopped: $(cat "$desktop_log")"
count=$(grep -c $'\tThe Sluice service stopped\t' "$desktop_log")
[ "$count" = 1 ] || fail "'service stopped' notified $count times"
echo "PASS"

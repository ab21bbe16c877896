#!/usr/bin/env bash
# Notifications reach the (test) notification server with the expected
# summary, body and actions: service unavailable; worker crashed and
# recovered (a real sluice-fs killed under the real service).
. "$(dirname "$0")/lib.sh"

start_desktop --notifications
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

# The service goes away while the applet runs: "stopped", not "unavailable".
stop_service
wait_for 15 notified $'\tThe Sluice service stopped\t' || fail "no notification when the service stopped: $(cat "$desktop_log")"
count=$(grep -c $'\tThe Sluice service stopped\t' "$desktop_log")
[ "$count" = 1 ] || fail "'service stopped' notified $count times"
echo "PASS"

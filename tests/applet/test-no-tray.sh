#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Without a tray host the window still works, and the applet says so once.
. "$(dirname "$0")/lib.sh"

start_desktop --notifications
start_applet --background
# --background with nobody to show the icon: the window must appear instead.
wait_for 15 window_visible || fail "no window although there is no tray"
wait_for 10 message_contains "No system tray" ||
        fail "the window does not say that there is no tray: $(hook_prop LastMessage)"
# Single instance: a second start hands over to the running applet and ends.
timeout 20 "$SLUICE_APPLET" >>"$log_dir/applet-second.log" 2>&1 || fail "a second sluice-applet failed or hung"
kill -0 "$applet_pid" || fail "the first applet died when a second one started"
grep -q "No system tray" "$log_dir/applet-second.log" && fail "the second start ran a whole applet of its own"
sleep 1
count=$(grep -c "No system tray was found" "$log_dir/applet.log" || true)
[ "$count" = 1 ] || fail "the no-tray message was logged $count times, not once"
# Ctrl+Q (pointer over the window: with no window manager, focus follows it).
locate drop-zone || fail "cannot locate the drop zone"
xdotool mousemove --window "$loc_win" "$loc_x" "$loc_y"
sleep 0.3
xdotool key ctrl+q
wait_for 10 pid_gone "$applet_pid" || fail "Ctrl+Q did not quit the applet"
echo "PASS"

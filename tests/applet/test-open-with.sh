#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "Share with a VM" from a file manager: the built desktop entry
# (org.sluice.Applet-share.desktop, Exec=sluice-applet --add %F) is launched
# the way a file manager launches it — `gio launch`, i.e. GLib's own %F
# expansion and spawn, with the folders as arguments — first with an applet
# running in the tray only, then with none running.  Each time the window
# shows, the folders wait in "Ready to Share" with the VM chooser focused;
# a path that is not a folder is named in the inline message; a real click
# on Share shares them with the chosen VM.  libvirt's test:///default driver
# gives the service one VM, "test".
#
# Focus and the waiting folders are read through the applet's test hook
# (Focus, Pending); screenshots are kept in the build directory.
. "$(dirname "$0")/lib.sh"
export SA_LIBVIRT_URI=test:///default
: "${SLUICE_SHARE_DESKTOP:?SLUICE_SHARE_DESKTOP must name the built org.sluice.Applet-share.desktop}"
command -v gio >/dev/null || skip "gio is not installed"

exec_line=$(sed -n 's/^Exec=//p' "$SLUICE_SHARE_DESKTOP")
[ "$exec_line" = "sluice-applet --add %F" ] || fail "unexpected Exec line in the desktop entry: $exec_line"
grep -qx 'NoDisplay=true' "$SLUICE_SHARE_DESKTOP" || fail "the entry would show as a second application in menus"
grep -qx 'MimeType=inode/directory;' "$SLUICE_SHARE_DESKTOP" || fail "the entry is not offered for folders"
# What the file manager runs: "sluice-applet" from PATH.
mkdir -p "$SA_WORK/bin"
ln -sf "$SLUICE_APPLET" "$SA_WORK/bin/sluice-applet"
launch() {
        PATH="$SA_WORK/bin:$PATH" G_DEBUG=fatal-warnings gio launch "$SLUICE_SHARE_DESKTOP" "$@" \
                >>"$log_dir/applet.log" 2>&1 || fail "gio launch failed"
}
applet_owner_pid() {
        gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
                -m org.freedesktop.DBus.GetConnectionUnixProcessID org.sluice.Applet | sed "s/^(uint32 \([0-9]*\),)$/\1/"
}
pending_has() { hook_prop Pending | grep -qF "'$1'"; }
focus_is() { hook_prop Focus | grep -qF "<'$1'>"; }

start_desktop --watcher --notifications
start_service
vm_listed() { managed_objects | grep -qF "'Name': <'test'>"; }
wait_for 20 vm_listed || skip "the service shows no VM from test:///default"
mkdir -p "$SA_WORK/Photos" "$SA_WORK/Docs" "$SA_WORK/Music"
echo notes >"$SA_WORK/notes.txt"

# sluice-applet processes connected to this test's private bus (other tests on
# the machine may run applets as the same user).
bus_applets() {
        local name pid
        for name in $(gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
                        -m org.freedesktop.DBus.ListNames | grep -oE "':[0-9.]+'" | tr -d "'"); do
                pid=$(gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
                        -m org.freedesktop.DBus.GetConnectionUnixProcessID "$name" 2>/dev/null |
                        sed -n 's/^(uint32 \([0-9]*\),)$/\1/p')
                [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sluice-applet ] && echo "$pid"
        done | sort -u
}
only_one_applet() { [ "$(bus_applets)" = "$applet_pid" ]; }

# ---- 1: the applet already runs, in the tray only (no window) -----------------------
start_applet --background
wait_for 15 grep -q '^REGISTERED ' "$desktop_log" || fail "the tray item never registered"
! window_visible || fail "--background opened the window"
launch "$SA_WORK/Docs" "$SA_WORK/Music" "$SA_WORK/notes.txt" "$SA_WORK/missing"
wait_for 15 window_visible || fail "the running applet did not raise its window"
wait_for 10 pending_has "$SA_WORK/Docs" && pending_has "$SA_WORK/Music" ||
        fail "Docs and Music are not both ready to share: $(hook_prop Pending)"
! pending_has "$SA_WORK/notes.txt" || fail "a file was offered for sharing"
wait_for 10 message_contains "“notes.txt” is not a folder" || fail "no message for a file: $(hook_prop LastMessage)"
message_contains "“$SA_WORK/missing” does not exist" || fail "no message for a path that does not exist: $(hook_prop LastMessage)"
wait_for 15 focus_is vm-chooser || fail "the VM chooser does not have the focus: $(hook_prop Focus)"
[ "$(applet_owner_pid)" = "$applet_pid" ] || fail "another applet took the bus name from the running one"
# The launched process handed its folders over and exited (a GApplication remote instance).
wait_for 20 only_one_applet || fail "the launched sluice-applet did not exit: $(bus_applets)"
[ -z "$(share_objects)" ] || fail "something was shared before the user pressed Share"
shot_settled open-with-running
click_widget "button:_Share"
wait_for 20 share_object_for "$SA_WORK/Docs" || fail "pressing Share did not share Docs: $(hook_prop LastMessage)"
wait_for 20 share_object_for "$SA_WORK/Music" || fail "pressing Share did not share Music: $(hook_prop LastMessage)"
for f in Docs Music; do
        share_prop "$(share_object_for "$SA_WORK/$f")" Vm | grep -qF "'test'" || fail "$f was not shared with the chosen VM"
done
no_pending() { hook_prop Pending | grep -qF '@as []'; }
wait_for 10 no_pending || fail "folders still wait after Share: $(hook_prop Pending)"

# ---- 2: no applet runs ------------------------------------------------------------
gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet -m org.gtk.Actions.Activate quit '[]' '{}' >/dev/null
wait_for 20 pid_gone "$applet_pid" || fail "the applet did not quit"
launch "$SA_WORK/Photos"
wait_for 20 bus_has_name org.sluice.Applet || fail "launching the entry did not start the applet"
applet_pid=$(applet_owner_pid)
pids+=("$applet_pid")
note "launched applet $applet_pid"
wait_for 15 window_visible || fail "the window did not open"
wait_for 10 pending_has "$SA_WORK/Photos" || fail "Photos is not ready to share: $(hook_prop Pending)"
wait_for 15 focus_is vm-chooser || fail "the VM chooser does not have the focus: $(hook_prop Focus)"
shot_settled open-with-new
click_widget "button:_Share"
wait_for 20 share_object_for "$SA_WORK/Photos" || fail "pressing Share did not share Photos: $(hook_prop LastMessage)"
share_prop "$(share_object_for "$SA_WORK/Photos")" Vm | grep -qF "'test'" || fail "Photos was not shared with the chosen VM"
[ "$(share_objects | wc -l)" = 3 ] || fail "expected 3 shares, have: $(share_objects)"
echo "PASS"

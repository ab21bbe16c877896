#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SNI contract: the applet registers its StatusNotifierItem with a (test)
# watcher, serves the item's properties and a dbusmenu with one entry per
# share, Activate opens the window, menu entries act on the real service, and
# the item registers again when the watcher restarts.
. "$(dirname "$0")/lib.sh"

start_desktop --watcher --notifications
start_service
folder="$SA_WORK/Projects"
mkdir -p "$folder"
share=$(add_share "$folder")
note "share $share"

start_applet --background
wait_for 15 grep -q '^REGISTERED ' "$desktop_log" || fail "the item never registered with the watcher"
item=$(awk '/^REGISTERED /{print $2; exit}' "$desktop_log")
note "item $item"
[[ $item == org.kde.StatusNotifierItem-* ]] || fail "unexpected item name $item"

props=$(gdbus call --session -d "$item" -o /StatusNotifierItem \
        -m org.freedesktop.DBus.Properties.GetAll org.kde.StatusNotifierItem)
for want in "'Id': <'sluice'>" "'Category': <'ApplicationStatus'>" "'Status': <'Active'>" \
            "'IconName': <'sluice-idle-symbolic'>" "'Menu': <objectpath '/MenuBar'>" \
            "'ItemIsMenu': <false>" "'Title': <'Sluice'>"; do
        grep -qF "$want" <<<"$props" || fail "item property missing: $want"
done
# IconPixmap: ARGB32 images at several sizes (16×16 is 1024 bytes)
grep -qE "'IconPixmap': <\[\(16, 16, \[" <<<"$props" || fail "no 16×16 IconPixmap"
grep -qE "\(22, 22, \[" <<<"$props" || fail "no 22×22 IconPixmap"
grep -qF "1 shared folder · Read 0.0 MB/s · Write 0.0 MB/s" <<<"$props" || fail "tooltip does not sum the shares: $props"

# Background start with a tray: no window until asked.
window_visible && fail "--background opened the window although a tray shows the icon"

layout=$(gdbus call --session -d "$item" -o /MenuBar -m com.canonical.dbusmenu.GetLayout -- 0 -1 '[]')
for want in "Open Sluice" "Projects — Stopped" "Pause All Shares" "Resume Shares" "Quit"; do
        grep -qF "'label': <'$want'>" <<<"$layout" || fail "menu entry missing: $want in $layout"
done

# Activate opens the window.
gdbus call --session -d "$item" -o /StatusNotifierItem -m org.kde.StatusNotifierItem.Activate 0 0 >/dev/null
wait_for 10 window_visible || fail "Activate did not open the window"

# The menu acts: start the share, then "Pause All Shares" stops it.
menu_id() { # LABEL → the dbusmenu item id
        gdbus call --session -d "$item" -o /MenuBar -m com.canonical.dbusmenu.GetLayout -- 0 -1 '[]' |
                grep -oE "\(([0-9]+), \{[^}]*'label': <'$1'>" | grep -oE '^\([0-9]+' | tr -d '('
}
menu_has() { gdbus call --session -d "$item" -o /MenuBar -m com.canonical.dbusmenu.GetLayout -- 0 -1 '[]' | grep -qF "'label': <'$1'>"; }
pause=$(menu_id "Pause All Shares")
share_entry=$(menu_id "Projects — Stopped")
[ -n "$pause" ] && [ -n "$share_entry" ] || fail "no ids for Pause All Shares / the share's entry"
gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.sluice.Sluice1.Share.Start >/dev/null
wait_for 20 share_state_is "$share" running ||
        fail "the share did not start: $(share_prop "$share" State) $(share_prop "$share" Error)"
wait_for 10 menu_has "Projects — Ready" ||
        fail "the menu does not follow the share's state"
# A tray host sends clicks by id: the entries keep theirs while labels change,
# or a click made just before the change would name an entry that is gone.
[ "$(menu_id "Pause All Shares")" = "$pause" ] || fail "Pause All Shares changed its id when the share started"
[ "$(menu_id "Projects — Ready")" = "$share_entry" ] || fail "the share's entry changed its id when its state changed"
gdbus call --session -d "$item" -o /MenuBar -m com.canonical.dbusmenu.Event "$pause" clicked '<"">' 0 >/dev/null
wait_for 20 share_state_is "$share" stopped ||
        fail "Pause All Shares did not stop the share"
resume=$(menu_id "Resume Shares")
gdbus call --session -d "$item" -o /MenuBar -m com.canonical.dbusmenu.Event "$resume" clicked '<"">' 0 >/dev/null
wait_for 20 share_state_is "$share" running ||
        fail "Resume Shares did not start the share again"

# The watcher restarts (panel crash, session restart): the item registers again.
kill "$desktop_pid"
wait_for 10 name_gone org.kde.StatusNotifierWatcher || fail "the watcher did not go away"
: >"$desktop_log"
start_desktop --watcher --notifications
wait_for 15 grep -q "^REGISTERED $item" "$desktop_log" || fail "no re-registration after the watcher restarted"

# The service goes away and comes back: the tray follows by name watching.
stop_service
tooltip() { gdbus call --session -d "$item" -o /StatusNotifierItem \
        -m org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierItem "$1"; }
wait_for 10 menu_has "Service not running" || fail "the menu does not say the service is gone"
tooltip IconName | grep -q sluice-error-symbolic || fail "the icon does not show the error: $(tooltip IconName)"
tooltip Status | grep -q NeedsAttention || fail "Status is not NeedsAttention without the service"
start_service
menu_lists_share() { gdbus call --session -d "$item" -o /MenuBar -m com.canonical.dbusmenu.GetLayout -- 0 -1 '[]' | grep -qF "'label': <'Projects — "; }
wait_for 20 menu_lists_share || fail "the share is not back in the menu after the service restarted"
tooltip IconName | grep -q sluice-idle-symbolic || fail "the icon did not go back to idle"

# Quit from the menu ends the applet.
quit=$(menu_id "Quit")
gdbus call --session -d "$item" -o /MenuBar -m com.canonical.dbusmenu.Event "$quit" clicked '<"">' 0 >/dev/null
wait_for 10 pid_gone "$applet_pid" || fail "Quit did not end the applet"
echo "PASS"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Real drag and drop (XDND, driven with xdotool) from a GTK4 drag source onto
# the applet's window: a folder becomes a share on the real service; a file,
# an unreadable folder and an already-shared folder get a clear inline message.
#
# How the inline message is read: the applet's test hook (SLUICE_APPLET_TEST_HOOK,
# org.sluice.Applet.Test.LastMessage) returns the text of the message shown in
# the window.  Reading text off a screenshot would need OCR, and there is no
# accessibility bus under Xvfb; the hook only reports, it never acts.
. "$(dirname "$0")/lib.sh"

start_desktop --notifications
start_service
start_applet
wait_for 15 window_visible || fail "the window did not open"
sleep 1

folder="$SA_WORK/Photos 2024"
mkdir -p "$folder"
drag_to_applet "$folder"
wait_for 20 share_object_for "$folder" || fail "dropping a folder did not create a share; objects: $(managed_objects)"
share=$(share_object_for "$folder")
note "dropped folder → $share"
share_prop "$share" Path | grep -qF "$folder" || fail "wrong path on $share"

echo "hello" >"$SA_WORK/notes.txt"
drag_to_applet "$SA_WORK/notes.txt"
wait_for 10 message_contains "“notes.txt” is a file" || fail "no inline error for a dropped file: $(hook_prop LastMessage)"
[ "$(share_objects | wc -l)" = 1 ] || fail "a dropped file created a share"

if [ "$(id -u)" != 0 ]; then
        mkdir -p "$SA_WORK/secret"
        chmod 000 "$SA_WORK/secret"
        drag_to_applet "$SA_WORK/secret"
        wait_for 10 message_contains "You cannot open the folder “secret”" ||
                fail "no inline error for an unreadable folder: $(hook_prop LastMessage)"
        [ "$(share_objects | wc -l)" = 1 ] || fail "an unreadable folder became a share"
        chmod 700 "$SA_WORK/secret"
else
        note "running as root: root reads every folder, so the unreadable-folder case needs SLUICE_TEST_USER"
fi

drag_to_applet "$folder"
wait_for 10 message_contains "“Photos 2024” is already shared" || fail "no inline error for an already-shared folder: $(hook_prop LastMessage)"
[ "$(share_objects | wc -l)" = 1 ] || fail "dropping a shared folder again created another share"

# Two folders in one drop: both shared.
mkdir -p "$SA_WORK/src" "$SA_WORK/docs"
drag_to_applet "$SA_WORK/src" "$SA_WORK/docs"
wait_for 20 share_object_for "$SA_WORK/src" || fail "multi-folder drop: src not shared"
wait_for 20 share_object_for "$SA_WORK/docs" || fail "multi-folder drop: docs not shared"
echo "PASS"

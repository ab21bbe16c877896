#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Remove with undo: a real click on a row's trash button removes the share
# on the service; a real click on the toast's Undo brings it back with the
# settings it had (tag, read-only).
. "$(dirname "$0")/lib.sh"

start_desktop --notifications
start_service
folder="$SA_WORK/Archive"
mkdir -p "$folder"
empty='@a{sv} {}'
share=$(gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 -m org.sluice.Sluice1.Manager.AddShare \
        "$folder" "" "{'tag': <'archive-2024'>, 'read-only': <true>}" | sed "s/^(objectpath '\(.*\)',)$/\1/")
note "share $share"
start_applet
wait_for 15 window_visible || fail "the window did not open"
wait_for 10 locate "remove:$folder" || fail "no row for the share"
click_widget "remove:$folder"
gone() { ! share_object_for "$folder"; }
wait_for 10 gone || fail "clicking the trash button did not remove the share"
wait_for 10 locate "button:_Undo" || fail "no Undo in a toast after removing"
back() { share_object_for "$folder" >/dev/null; }
# a click may still miss on a loaded machine: click again while the Undo is there
for _ in 1 2 3; do
        click_widget_try "button:_Undo" || break
        wait_for 5 back && break
done
wait_for 10 back || fail "Undo did not bring the share back"
again=$(share_object_for "$folder")
share_prop "$again" Tag | grep -qF "'archive-2024'" || fail "Undo lost the tag: $(share_prop "$again" Tag)"
share_prop "$again" ReadOnly | grep -q true || fail "Undo lost read-only"
echo "PASS"

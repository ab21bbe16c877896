#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A share's Names and Case, against the real sluice-service: real clicks on
# the row's drop-downs write Share.Names and Share.Case; set by another
# client, the drop-downs follow.
. "$(dirname "$0")/lib.sh"

start_desktop --notifications
start_service
folder="$SA_WORK/Dropbox"
mkdir -p "$folder"
share=$(add_share "$folder")
start_applet
wait_for 15 window_visible || fail "the window did not open"
labels_have() { hook_prop Labels | grep -qF "$1"; }
prop_is() { share_prop "$share" "$1" | grep -qF "<'$2'>"; }

prop_is Names "" || fail "a new share does not follow the VM's names: $(share_prop "$share" Names)"
wait_for 10 locate "names:$folder" || fail "the row has no Names drop-down: $(hook_prop Labels)"
click_widget "names:$folder"
wait_for 10 locate "option:Windows" || fail "the Names drop-down does not offer Windows"
click_widget "option:Windows"
wait_for 10 prop_is Names windows || fail "choosing Windows did not set Share.Names: $(share_prop "$share" Names)"

click_widget "case:$folder"
wait_for 10 locate "option:Sensitive" || fail "the Case drop-down does not offer Sensitive"
click_widget "option:Sensitive"
wait_for 10 prop_is Case sensitive || fail "choosing Sensitive did not set Share.Case: $(share_prop "$share" Case)"
prop_is Names windows || fail "setting Case changed Names: $(share_prop "$share" Names)"

# another client: the drop-down follows (and writes nothing back)
gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.freedesktop.DBus.Properties.Set \
        org.sluice.Sluice1.Share Names "<'posix'>" >/dev/null
wait_for 10 labels_have "As on the host" || fail "the Names drop-down did not follow Share.Names: $(hook_prop Labels)"
prop_is Names posix || fail "the drop-down wrote over what another client set: $(share_prop "$share" Names)"
echo "PASS"

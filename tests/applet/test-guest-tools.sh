#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A Windows VM that lacks WinFsp and the VirtIO-FS driver, against a test
# double of sluice-service (sa-test-windows-service.c: the real service says
# so only of a Windows guest's agent, which needs a libvirt guest; the
# libvirt suite covers the service's side).  Real clicks: the row offers
# "Install in the VM…"; its confirmation names what goes where; Install
# calls Vm.InstallGuestTools and the progress bar follows
# Vm.GuestToolsInstall (the copy's percentage, then installing); a failure
# shows the service's sentence and offers the install again; "Choose
# Another File…" picks a WinFsp MSI (typed into the file chooser) that the
# call then names; a success shows its message (a reboot wanted).  The Doctor button shows Vm.Doctor's
# report (or why there is none: closed with Escape), and Copy puts it on
# the clipboard.  The row says what is served.
. "$(dirname "$0")/lib.sh"
[ -n "${SA_TEST_WINDOWS_SERVICE:-}" ] && [ -x "$SA_TEST_WINDOWS_SERVICE" ] || skip "sa-test-windows-service is not built"

start_desktop --notifications
folder="$SA_WORK/Docs"
mkdir -p "$folder"
ctl="$SA_WORK/windows-service.ctl"
double_log="$log_dir/windows-service.log"
mkfifo "$ctl"
"$SA_TEST_WINDOWS_SERVICE" --folder "$folder" <"$ctl" >>"$double_log" 2>&1 &
pids+=($!)
exec 3>"$ctl"
wait_for 10 grep -q READY "$double_log" || fail "the service double did not start"
double() { echo "$*" >&3; }
labels_have() { hook_prop Labels | grep -qF "$1"; }
calls() { grep -c "^CALL $1" "$double_log" || true; }

start_applet
wait_for 15 window_visible || fail "the window did not open"
locate drop-zone && xdotool windowsize "$loc_win" 720 900

# ---- what is served ------------------------------------------------------------------------
wait_for 10 labels_have "Windows names, case-insensitive" ||
        fail "the row does not say what is served: $(hook_prop Labels)"

# ---- the offer and its confirmation ---------------------------------------------------------
wait_for 10 locate "install:$folder" || fail "no \"Install in the VM…\" for a VM that lacks WinFsp: $(hook_prop Labels)"
labels_have "“win11” lacks WinFsp and the VirtIO-FS driver" || fail "the offer does not say what is missing: $(hook_prop Labels)"
click_widget "install:$folder"
wait_for 10 locate "button:_Install" || fail "Install in the VM… asked nothing"
labels_have "Sluice will install WinFsp and the VirtIO-FS driver in “win11” from the installers it finds" ||
        fail "the confirmation does not say what goes where: $(hook_prop Labels)"
locate "button:Choose _Another File…" || fail "the confirmation offers no other installer"
[ "$(calls InstallGuestTools)" = 0 ] || fail "InstallGuestTools was called before the user said Install"
click_widget "button:_Install"
wait_for 10 grep -q "^CALL InstallGuestTools" "$double_log" || fail "Install did not call Vm.InstallGuestTools"
# nothing picked: the service finds the installers
grep "^CALL InstallGuestTools" "$double_log" | grep -qF "@a{sv} {}" ||
        fail "the call named installers the user did not pick: $(grep "^CALL InstallGuestTools" "$double_log")"

# ---- progress, then a failure ---------------------------------------------------------------
wait_for 10 locate "install-progress:$folder" || fail "no progress bar while the install runs"
install_hidden() { ! locate "install:$folder"; }
install_hidden || fail "the install button stays while the install runs"
double progress copying 0.25 winfsp Copying WinFsp
wait_for 10 labels_have "Copying WinFsp into the VM… 25 %" || fail "the bar does not show 25 %: $(hook_prop Labels)"
double progress copying 0.75 winfsp Copying WinFsp
wait_for 10 labels_have "Copying WinFsp into the VM… 75 %" || fail "the bar did not move to 75 %: $(hook_prop Labels)"
# the copy's state stands still on screen (installing pulses)
shot_settled applet-guest-tools-progress
double progress installing 1 winfsp msiexec runs
wait_for 10 labels_have "Installing WinFsp in the VM…" || fail "the bar does not say it installs: $(hook_prop Labels)"
double "fail msiexec failed with 1603: a fatal error during installation."
wait_for 15 message_contains "1603: a fatal error" || fail "the failure was not shown: $(hook_prop LastMessage)"
labels_have "msiexec failed with 1603" || fail "the row does not keep the failure: $(hook_prop Labels)"
wait_for 10 locate "install:$folder" || fail "after a failure the install is not offered again"
progress_gone() { ! locate "install-progress:$folder"; }
wait_for 10 progress_gone || fail "the progress bar stays after the install ended"

# ---- again, from a file the user picks, to success -----------------------------------------
msi="$SA_WORK/Downloads/winfsp-2.0.23075.msi"
mkdir -p "$(dirname "$msi")"
printf 'not really an MSI' >"$msi"
click_widget "install:$folder"
click_widget "button:Choose _Another File…"
chooser=
chooser_shown() { chooser=$(xdotool search --onlyvisible --name '^Choose an Installer$' | head -1) && [ -n "$chooser" ]; }
wait_for 10 chooser_shown || fail "Choose Another File… opened no file chooser"
# the chooser's location entry opens on a typed "/"
xdotool windowfocus --sync "$chooser" 2>/dev/null || true
xdotool type --window "$chooser" --delay 20 "$msi"
xdotool key --window "$chooser" Return
picked() { labels_have "Sluice will install WinFsp and the VirtIO-FS driver in “win11” from $msi."; }
wait_for 10 picked || fail "the confirmation does not name the picked file: $(hook_prop Labels)"
click_widget "button:_Install"
two_calls() { [ "$(calls InstallGuestTools)" = 2 ]; }
wait_for 10 two_calls || fail "the second Install did not call the service"
grep "^CALL InstallGuestTools" "$double_log" | tail -1 | grep -qF "{'winfsp': <'$msi'>}" ||
        fail "the call does not pass the picked WinFsp MSI: $(grep "^CALL InstallGuestTools" "$double_log" | tail -1)"
double progress copying 0.5 virtio-fs Copying
wait_for 10 labels_have "Copying the VirtIO-FS driver into the VM… 50 %" || fail "the second install shows no progress: $(hook_prop Labels)"
double "finish WinFsp and the VirtIO-FS driver were installed in “win11”; Windows wants a restart (3010)."
wait_for 15 message_contains "Windows wants a restart" || fail "the install's answer was not shown: $(hook_prop LastMessage)"
labels_have "Windows wants a restart (3010)" || fail "the row does not show the install's answer: $(hook_prop Labels)"
wait_for 10 install_hidden || fail "the install is still offered once nothing is missing"

# ---- the Doctor report --------------------------------------------------------------------
double "doctor-fails The guest agent of “win11” did not answer: is the VM still starting?"
click_widget "button:_Doctor…"
wait_for 10 grep -q "^CALL Doctor" "$double_log" || fail "the Doctor button did not call Vm.Doctor"
wait_for 10 labels_have "The guest agent of “win11” did not answer" || fail "the Doctor's failure is not shown: $(hook_prop Labels)"
locate "button:_Copy" || fail "the failed Doctor's window has no Copy button"
xdotool key Escape
doctor_closed() { ! labels_have "did not answer: is the VM still starting?"; }
wait_for 10 doctor_closed || fail "Escape did not close the Doctor's window"
click_widget "button:_Doctor…"
two_doctors() { [ "$(calls Doctor)" = 2 ]; }
wait_for 10 two_doctors || fail "the second Doctor did not call Vm.Doctor"
wait_for 10 labels_have "WinFsp: not installed" || fail "the report is not shown: $(hook_prop Labels)"
labels_have "Next: install WinFsp and the VirtIO-FS driver" || fail "the report is cut: $(hook_prop Labels)"
shot_settled applet-doctor
# a drive label from the guest: shown, but without its escape and bidi override
labels_have "evil.exe" || fail "the report lost the guest's drive label: $(hook_prop Labels)"
! hook_prop Labels | grep -qiF -e '\u001b' -e '\u202e' -e $'\e' || fail "the report shows the guest's control characters: $(hook_prop Labels)"
clipboard() { gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet/Test -m org.sluice.Applet.Test.ReadClipboard; }
click_widget "button:_Copy"
copied() { clipboard | grep -qF "Windows: Windows 11 Pro 23H2 (build 22631)" && clipboard | grep -qF "Drives: C: "; }
wait_for 10 copied || fail "Copy did not put the report on the clipboard: $(clipboard)"
note "clipboard: $(clipboard | head -c 160)…"
echo "PASS"

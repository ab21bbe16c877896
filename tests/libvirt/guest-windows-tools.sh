#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/guest-windows-tools.sh — what a Windows guest lacks is
# installed from the host, and the doctor reports what the guest has:
# sluice-service against a real system libvirtd and three TCG guests that run
# the pretend Windows agent (tests/guest/qga-windows.c), through the D-Bus
# API and sluicectl.
#
# Checks:
#  (a) WinFsp missing (guest F, whose first msiexec answers 1603): an
#      attached share's Error names WinFsp and offers "Install in the VM…" /
#      sluicectl vm F install-guest-tools; Vm.GuestToolsMissing ["winfsp"];
#  (b) `sluicectl vm F install-guest-tools --winfsp FILE.msi` (a generated
#      file with the MSI magic, 3 MB): the first run fails with 1603 named in
#      words, exit 1; the second copies it (GuestToolsInstall seen
#      "copying" with a fraction, the whole file stored in the guest),
#      msiexec installs, GuestToolsMissing empty, and the share's drive
#      comes up without any other call;
#  (c) the driver missing (guest V, msiexec answers 3010):
#      Vm.InstallGuestTools({}) finds virtio-win-gt-x64.msi in a scratch
#      Downloads folder ($XDG_DOWNLOAD_DIR), installs the VirtIO-FS feature
#      only, says Windows wants a restart, and the share's drive comes up;
#      a file that is not an MSI and a symlink are refused (.InvalidArgument);
#  (d) `sluicectl vm V doctor` shows Windows' version, the driver's and
#      WinFsp's versions, VirtioFsSvc's state and start type, the drives and
#      what Sluice would do next; --json the same as facts; a Linux guest L
#      (the same agent as an honest Linux one) gets its kernel and virtiofs
#      reported, and InstallGuestTools on it is .Unsupported.
# Exit: 0 pass, 1 fail, 77 skip (not root, no QEMU/libvirt/kernel, or an
# image without the pretend Windows agent).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}

. "$top/tests/lib.sh"
. "$here/lib-libvirt.sh"
need_root "starts the system libvirtd"
need_tools libvirtd virsh qemu-system-x86_64 dbus-daemon gdbus setfacl runuser setpriv flock base64 head

user=${SLUICE_TEST_USER:-sluice-test}
ensure_user "$user"

# One instance per machine (lock.sh says why).
libvirt_open "$0" "$@"
files=$(cpio -t --quiet < "$image/initrd.cpio" 2>/dev/null)
grep -qx 'bin/sluice-qga-windows' <<<"$files" || skip "the guest image has no pretend Windows agent"

work=$(mktemp -d /tmp/sluice-wintools.XXXXXX)
chmod 755 "$work"

service_pid= session_bus_pid=
domains=()
trap libvirt_cleanup EXIT

system_libvirtd_setup tests/libvirt/guest-windows-tools.sh || exit 1
system_libvirtd_start "$user" || fail "no system libvirtd for $user"

# ---- the installers on the host ------------------------------------------------------------
libvirt_user_session
downloads=$work/home/Downloads
mkdir -p "$downloads" "$work/given"
msi() { # FILE MEGABYTES — a file that starts as an MSI (an OLE compound file)
        { printf '\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1'; head -c $(($2 * 1024 * 1024)) /dev/urandom; } > "$1"
}
msi "$work/given/winfsp-2.0.23075.msi" 3
msi "$downloads/virtio-win-gt-x64.msi" 2
# a download page saved under an installer's name (as big as one could be)
{ echo "<html>a download page, not an installer"; head -c 65536 /dev/zero | tr '\0' x; echo "</html>"; } \
        > "$work/given/winfsp-2.1.msi"
ln -s "$work/given/winfsp-2.0.23075.msi" "$work/given/winfsp-link.msi"
chown -R "$user:" "$downloads" "$work/given"

# ---- session bus and sluice-service as the test user ----------------------------
"${as_user[@]}" SLUICE_FS="$work/bin/sluice-fs" SLUICE_LIBVIRT_URIS=qemu:///system XDG_DOWNLOAD_DIR="$downloads" \
        G_MESSAGES_DEBUG="${SLUICE_DEBUG:-}" "$work/bin/sluice-service" >>"$work/service.log" 2>&1 &
service_pid=$!
wait_for 60 runu gdbus introspect --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 >/dev/null 2>&1 ||
        fail "sluice-service did not come up"

# an install copies megabytes into a TCG guest: calls may take minutes
call_timeout=300

# ---- guests -----------------------------------------------------------------------
cp "$image/vmlinux" "$work/vmlinux"
"$top/tests/guest/mkcpio.sh" "$work/workload.cpio" "$here/agent-workload.sh:/workload.sh" || exit 1
cat "$image/initrd.cpio" "$work/workload.cpio" > "$work/initrd.cpio"
chmod 644 "$work/vmlinux" "$work/initrd.cpio"

mkdir -p "$work/share-f" "$work/share-v"
echo "from the host" > "$work/share-f/hello.txt"
chown -R "$user:" "$work/share-f" "$work/share-v"

F=sluice-tools-f V=sluice-tools-v L=sluice-tools-l
define $F --agent --cmdline "sluice_qga=windows sluice_qga_missing=winfsp sluice_qga_msi_result=1603" ||
        fail "define $F"
define $V --agent --cmdline "sluice_qga=windows sluice_qga_missing=viofs sluice_qga_msi_result=3010" ||
        fail "define $V"
define $L --agent --cmdline "sluice_qga=liar" || fail "define $L"
t_boot=$EPOCHREALTIME
for d in $F $V $L; do vsh start "$d" >/dev/null || fail "start $d"; done
wait_for 240 booted $F || fail "$F did not boot"
wait_for 240 booted $V || fail "$V did not boot"
note "the guests booted in $(since "$t_boot") s"
wait_for 30 has_vm $F && wait_for 30 has_vm $V || fail "no Vm objects"
vmF=$(vm_path $F) vmV=$(vm_path $V)
for v in "$vmF" "$vmV"; do
        wait_for 90 vm_prop_is "$v" GuestAgent ready && wait_for 30 vm_prop_is "$v" GuestOsType windows ||
                fail "Vm $v: GuestAgent '$(vmp "$v" GuestAgent)', GuestOsType '$(vmp "$v" GuestOsType)'"
done

# ---- (a) WinFsp missing: the Error offers the install ------------------------------------
shareF=$(add_share "$work/share-f" $F fdocs "'attach': <true>")
if [ -n "$shareF" ] && wait_for 90 share_prop_is "$shareF" GuestState failed; then
        err=$(shp "$shareF" Error)
        case $err in
        *WinFsp*"Install in the VM…"*"sluicectl vm $F install-guest-tools"*)
                pass "WinFsp missing: the share's Error offers the install: $err" ;;
        *) fail_later "WinFsp missing: Error '$err'" ;;
        esac
        missing=$(vmp "$vmF" GuestToolsMissing)
        [ "$missing" = "['winfsp']" ] && pass "Vm.GuestToolsMissing $missing" ||
                fail_later "Vm.GuestToolsMissing '$missing'"
else
        fail "WinFsp missing: ${shareF:-no share} $([ -n "$shareF" ] && share_info "$shareF")"
fi

# ---- (b) sluicectl install-guest-tools --winfsp FILE ----------------------------------------
# bad files first: refused on the host, nothing copied
for bad in winfsp-2.1.msi winfsp-link.msi; do
        out=$(runu "$work/bin/sluicectl" vm $F install-guest-tools --winfsp "$work/given/$bad" 2>&1)
        rc=$?
        case "$rc $out" in
        "1 "*"not an MSI package"*|"1 "*"symbolic link"*) pass "install-guest-tools refuses $bad: $out" ;;
        *) fail_later "install-guest-tools with $bad: exit $rc: $out" ;;
        esac
done
win $F | grep -q "guest-file-write" && fail_later "a refused file was copied into $F"

out=$(runu "$work/bin/sluicectl" vm $F install-guest-tools --winfsp "$work/given/winfsp-2.0.23075.msi" 2>&1)
rc=$?
case "$rc $out" in
"1 "*"1603"*"fatal error"*) pass "a failed install is named in words (exit 1): $out" ;;
*) fail_later "the first install (msiexec 1603): exit $rc: $out" ;;
esac
[ "$(vmp "$vmF" GuestToolsMissing)" = "['winfsp']" ] || fail_later "after 1603: GuestToolsMissing '$(vmp "$vmF" GuestToolsMissing)'"

# the progress, as a client watching the property sees it
runu gdbus monitor --session -d org.sluice.Sluice1 -o "$vmF" > "$work/monitor.log" 2>&1 &
monitor_pid=$!
libvirt_cleanup_more() { kill "$monitor_pid" 2>/dev/null; }
# its match rule in place before the install starts
wait_for 10 grep -q "^Monitoring" "$work/monitor.log" || fail_later "gdbus monitor did not start: $(cat "$work/monitor.log")"
t_install=$EPOCHREALTIME
out=$(runu "$work/bin/sluicectl" vm $F install-guest-tools --winfsp "$work/given/winfsp-2.0.23075.msi" 2>&1)
rc=$?
note "the install took $(since "$t_install") s"
kill "$monitor_pid" 2>/dev/null
case "$rc $out" in
"0 "*"Copying WinFsp into the VM"*"Installed WinFsp in “$F”."*) pass "sluicectl install-guest-tools: $out" ;;
*) fail_later "sluicectl install-guest-tools: exit $rc: $out" ;;
esac
copying=$(grep -c "'state': <'copying'>" "$work/monitor.log")
grep -q "'state': <'copying'>, 'what': <'winfsp'>, 'fraction': <0.[0-9]" "$work/monitor.log" && [ "$copying" -ge 2 ] &&
        grep -q "'state': <'installing'>" "$work/monitor.log" && grep -q "'state': <'done'>" "$work/monitor.log" &&
        pass "GuestToolsInstall showed the copy ($copying updates), the install and the end" ||
        fail_later "GuestToolsInstall progress: $(grep -o "GuestToolsInstall[^}]*" "$work/monitor.log" | head -5)"
writes=$(win $F | grep -c '"guest-file-write"')
size=$(stat -c %s "$work/given/winfsp-2.0.23075.msi")
[ "$writes" -ge 32 ] && pass "the MSI ($size bytes) went in $writes guest-file-write calls" ||
        fail_later "the MSI went in $writes guest-file-write calls"
win $F | grep -aE '"msiexec.exe"|msiexec' | grep -q '"/qn" *, *"/norestart"' &&
        ! win $F | grep -a msiexec | grep -qiE 'vioserial|qemu-ga' &&
        pass "msiexec ran /i … /qn /norestart, nothing of the agent's channel" ||
        fail_later "msiexec's command: $(win $F | grep -a msiexec | tail -1)"
[ "$(vmp "$vmF" GuestToolsMissing)" = "@as []" ] && pass "GuestToolsMissing empty after the install" ||
        fail_later "GuestToolsMissing after the install: '$(vmp "$vmF" GuestToolsMissing)'"
if wait_for 60 share_prop_is "$shareF" GuestState mounted; then
        pass "the share's drive came up by itself: GuestPath $(shp "$shareF" GuestPath)"
else
        fail_later "the share after the install: $(share_info "$shareF")"
fi

# ---- (c) the driver missing: InstallGuestTools finds the MSI in Downloads --------------------
shareV=$(add_share "$work/share-v" $V vdocs "'attach': <true>")
wait_for 90 share_prop_is "$shareV" GuestState failed ||
        fail_later "driver missing: $(share_info "$shareV")"
case $(shp "$shareV" Error) in *VirtIO-FS*"install-guest-tools"*) pass "driver missing: the Error offers the install" ;;
        *) fail_later "driver missing: Error '$(shp "$shareV" Error)'" ;; esac
out=$(call "$vmV" org.sluice.Sluice1.Vm.InstallGuestTools "{'winfsp': <'$work/given/winfsp-link.msi'>}" 2>&1)
case $out in *InvalidArgument*"symbolic link"*) pass "InstallGuestTools refuses a symlink: .InvalidArgument" ;;
        *) fail_later "InstallGuestTools with a symlink: $out" ;; esac
out=$(call "$vmV" org.sluice.Sluice1.Vm.InstallGuestTools "{}" 2>&1)
case $out in
*"Installed the VirtIO-FS driver in “$V”"*"restart"*) pass "InstallGuestTools from Downloads: $out" ;;
*) fail_later "InstallGuestTools from Downloads: $out" ;;
esac
win $V | grep -a msiexec | grep -q '"ADDLOCAL=FE_viofs_driver"' &&
        pass "virtio-win installed with its VirtIO-FS feature only" ||
        fail_later "virtio-win's msiexec: $(win $V | grep -a msiexec | tail -1)"
wait_for 60 share_prop_is "$shareV" GuestState mounted &&
        pass "the share's drive came up by itself: GuestPath $(shp "$shareV" GuestPath)" ||
        fail_later "the share after the driver's install: $(share_info "$shareV")"

# ---- (d) the doctor ------------------------------------------------------------------------------
report=$(runu "$work/bin/sluicectl" vm $V doctor 2>&1)
rc=$?
missing_bits=
for want in "Windows 10 Pro 22H2 (build 19045)" "100.95.104.26200" "VirtioFsSvc: running, starts automatic" \
            "WinFsp: 2.0.23075" "VirtIO-FS|vdocs" "“vdocs” shows as"; do
        grep -qF -- "$want" <<<"$report" || missing_bits+="[$want] "
done
[ "$rc" = 0 ] && [ -z "$missing_bits" ] && pass "sluicectl vm $V doctor: $(tr '\n' '|' <<<"$report")" ||
        fail_later "sluicectl vm $V doctor (exit $rc) lacks $missing_bits: $report"
json=$(runu "$work/bin/sluicectl" --json vm $V doctor 2>&1)
grep -q '"viofs-driver-version" *: *"100.95.104.26200"' <<<"$json" && grep -q '"winfsp-version" *: *"2.0.23075"' <<<"$json" &&
        pass "sluicectl --json vm $V doctor has the facts" || fail_later "doctor --json: $json"

wait_for 240 booted $L && wait_for 30 has_vm $L || fail_later "$L did not boot"
vmL=$(vm_path $L)
if wait_for 90 vm_prop_is "$vmL" GuestAgent ready; then
        report=$(runu "$work/bin/sluicectl" vm $L doctor 2>&1)
        grep -q "^Linux kernel: [0-9]" <<<"$report" && grep -q "^virtiofs in the kernel: " <<<"$report" &&
                pass "sluicectl vm $L doctor (Linux): $(tr '\n' '|' <<<"$report")" ||
                fail_later "sluicectl vm $L doctor (Linux): $report"
        out=$(call "$vmL" org.sluice.Sluice1.Vm.InstallGuestTools "{}" 2>&1)
        case $out in *Unsupported*"does not run Windows"*) pass "InstallGuestTools on Linux: .Unsupported" ;;
                *) fail_later "InstallGuestTools on Linux: $out" ;; esac
else
        fail_later "$L: GuestAgent '$(vmp "$vmL" GuestAgent)'"
fi

finish

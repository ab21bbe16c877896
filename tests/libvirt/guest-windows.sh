#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/guest-windows.sh — every drive back after a reboot, at its
# letter: sluice-service against a real system libvirtd and two TCG guests
# booted at once, through the D-Bus API:
#   W  a pretend Windows (tests/guest/qga-windows.c, sluice_qga=windows),
#      whose agent reboots on "sluice-test-reboot" keeping the registry and
#      the services' start types, losing its WinFsp launcher instances;
#   G  the Linux guest with Debian's qemu-ga, reset by virsh.
# Checks:
#  (a) two shares on W: wz is drive Z: through VirtioFsSvc (Automatic,
#      registry MountPoint Z:), wy drive Y: through a launcher instance; the
#      letter Windows gave wy is kept in shares.ini (guest-letter);
#  (b) W reboots: both drives back at Z: and Y:, Y: started again as a
#      launcher instance (a reboot ended the first), Z: by VirtioFsSvc alone;
#  (c) W reboots with a USB stick at Y:: wy is drive X:, GuestPath says so,
#      an Event "letter-changed" says that Y: is taken;
#  (d) sluice-service restarts while W reboots (the stick still at Y:): the
#      new service brings wy back as a launcher instance, at X: again;
#  (e) names and case: with a sluice-fs that takes --names/--case, a
#      Windows guest's share is served "windows"/"insensitive" and
#      VirtioFsSvc is told CaseInsensitive (registry and -i); with an older
#      sluice-fs the shares are set to posix/sensitive and this is noted;
#  (f) G is reset: the share is mounted again at /mnt/gl, the guest reads it.
#  (g) a share of W started before its agent said "windows": served posix
#      first, then switched live (Worker1.SetNames) to windows/insensitive,
#      the same worker process.
# Exit: 0 pass, 1 fail, 77 skip (not root, no QEMU/libvirt/kernel, or an
# image without qemu-ga or the pretend Windows agent).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}

. "$top/tests/lib.sh"
. "$here/lib-libvirt.sh"
need_root "starts the system libvirtd"
need_tools libvirtd virsh qemu-system-x86_64 dbus-daemon gdbus setfacl runuser setpriv flock base64

user=${SLUICE_TEST_USER:-sluice-test}
ensure_user "$user"

libvirt_open --agent "$0" "$@"
files=$(cpio -t --quiet < "$image/initrd.cpio" 2>/dev/null)
grep -qx 'bin/sluice-qga-windows' <<<"$files" || skip "the image has no pretend Windows agent (qga-windows.c)"

work=$(mktemp -d /tmp/sluice-win.XXXXXX)
chmod 755 "$work"
service_pid= session_bus_pid= monitor_pid=
domains=()
libvirt_cleanup_more() { [ -n "$monitor_pid" ] && kill "$monitor_pid" 2>/dev/null; }
trap libvirt_cleanup EXIT

system_libvirtd_setup tests/libvirt/guest-windows.sh || exit 1
system_libvirtd_start "$user" || fail "no system libvirtd for $user"

libvirt_user_session
start_service() {
        "${as_user[@]}" SLUICE_FS="$work/bin/sluice-fs" SLUICE_LIBVIRT_URIS=qemu:///system \
                G_MESSAGES_DEBUG="${SLUICE_DEBUG:-}" "$work/bin/sluice-service" >>"$work/service.log" 2>&1 &
        service_pid=$!
        wait_for 60 runu gdbus introspect --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 >/dev/null 2>&1 ||
                fail "sluice-service did not come up"
}
start_service
# every Share.Event, for (c)
runu gdbus monitor --session -d org.sluice.Sluice1 >"$work/events.log" 2>&1 &
monitor_pid=$!

cp "$image/vmlinux" "$work/vmlinux"
"$top/tests/guest/mkcpio.sh" "$work/workload.cpio" "$here/agent-workload.sh:/workload.sh" || exit 1
cat "$image/initrd.cpio" "$work/workload.cpio" > "$work/initrd.cpio"
chmod 644 "$work/vmlinux" "$work/initrd.cpio"
for d in z y l; do
        mkdir -p "$work/share-$d"
        echo "hello from the host" > "$work/share-$d/hello.txt"
done
chown -R "$user:" "$work"/share-*

W=sluice-win-w G=sluice-win-g
define $W --agent --cmdline "sluice_qga=windows" || fail "define $W"
define $G --agent --reboot-restarts || fail "define $G"
t_boot=$EPOCHREALTIME
for d in $W $G; do vsh start "$d" >/dev/null || fail "start $d"; done
# (g) started while nobody knows yet that W runs Windows (not mounted by
# Sluice: it would take Z: from the shares of (a))
mkdir -p "$work/share-late" && chown "$user:" "$work/share-late"
shareLate=$(add_share "$work/share-late" $W wlate "'autostart': <false>, 'auto-mount': <false>")
call "$shareLate" org.sluice.Sluice1.Share.Start >/dev/null || fail_later "Start wlate"
late_served=$(shp "$shareLate" ServedNames) late_pid=$(worker_of "$shareLate")

# the pretend Windows's own view: its drives, VirtioFsSvc, its registry (JSON)
state() { agent $W '{"execute":"sluice-test-state"}'; }
drive_is() { # LETTER TAG OWNER — W's model has TAG at LETTER, served by OWNER
        state | grep -q "{\"letter\":\"$1\",\"tag\":\"$2\",\"owner\":\"$3\""
}
reboot_w() { # [TAKEN] — W reboots (a USB stick at TAKEN meanwhile)
        agent $W "{\"execute\":\"sluice-test-reboot\",\"arguments\":{${1:+\"taken\":\"$1\"}}}" >/dev/null
}
win() { lines "$(console "$W")" | grep -a "^QGA-WIN: "; }
starts_of() { win | grep -i "launchctl" | grep -cE "\"start\" *, *\"[^\"]*\" *, *\"sluice-$1\"" || true; }

# (e) what the worker serves a Windows guest needs a sluice-fs that takes --names
names_supported=
# (the whole help first: grep -q would end the pipe early, and pipefail)
help=$("$work/bin/sluice-fs" --help 2>&1)
grep -q -- '--names' <<<"$help" && names_supported=1
add_windows_share() { # DIR TAG → object path, attached
        local options="'attach': <true>"
        [ -n "$names_supported" ] || options+=", 'names': <'posix'>, 'case': <'sensitive'>"
        add_share "$1" $W "$2" "$options"
}

wait_for 240 booted $W || fail "$W did not boot"
note "$W booted in $(since "$t_boot") s"
wait_for 30 has_vm $W || fail "no Vm object for $W"
vmW=$(vm_path $W)
wait_for 90 vm_prop_is "$vmW" GuestAgent ready && wait_for 30 vm_prop_is "$vmW" GuestOsType windows ||
        fail "Vm $W: GuestAgent '$(vmp "$vmW" GuestAgent)', GuestOsType '$(vmp "$vmW" GuestOsType)'"

# ---- (a) two shares -------------------------------------------------------------------------------
[ -n "$names_supported" ] ||
        note "this sluice-fs takes no --names: the shares are set to posix/sensitive, (e) is left out"
shareZ=$(add_windows_share "$work/share-z" wz)
wait_for 90 share_prop_is "$shareZ" GuestState mounted || fail "wz not mounted: $(share_info "$shareZ")"
shareY=$(add_windows_share "$work/share-y" wy)
wait_for 90 share_prop_is "$shareY" GuestState mounted || fail "wy not mounted: $(share_info "$shareY")"
if [ "$(shp "$shareZ" GuestPath)" = Z: ] && [ "$(shp "$shareY" GuestPath)" = Y: ] &&
   drive_is Z: wz service && drive_is Y: wy sluice-wy && state | grep -q '"automatic":true' &&
   state | grep -q '"name":"MountPoint","type":"REG_SZ","data":"Z:"'; then
        pass "two shares: wz is Z: by VirtioFsSvc (Automatic, MountPoint Z:), wy is Y: by a launcher instance"
else
        fail_later "two shares: wz '$(shp "$shareZ" GuestPath)', wy '$(shp "$shareY" GuestPath)', $W: $(state)"
fi
ini=$work/config/sluice/shares.ini
grep -q '^guest-letter=Y:$' "$ini" && grep -q '^guest-letter=Z:$' "$ini" &&
        pass "the letters Windows gave are kept in shares.ini" ||
        fail_later "shares.ini keeps no guest-letter: $(grep -E '^(tag|guest-letter)=' "$ini" | tr '\n' ' ')"

# ---- (e) names and case ------------------------------------------------------------------------------
if [ -n "$names_supported" ]; then
        [ "$(shp "$shareZ" ServedNames)" = windows ] && [ "$(shp "$shareZ" ServedCase)" = insensitive ] &&
                pass "a Windows guest's share is served windows/insensitive" ||
                fail_later "ServedNames '$(shp "$shareZ" ServedNames)', ServedCase '$(shp "$shareZ" ServedCase)'"
        wpid=$(worker_of "$shareZ")
        args=$([ -n "$wpid" ] && tr '\0' ' ' < "/proc/$wpid/cmdline")
        case $args in *" --names=windows "*"--case=insensitive "*)
                pass "wz's sluice-fs runs with --names=windows --case=insensitive" ;;
        *) fail_later "wz's sluice-fs (${wpid:-none}) runs as: $args" ;; esac
        state | grep -q '"name":"CaseInsensitive","type":"REG_DWORD","data":"1"' &&
                state | grep -q '{"letter":"Z:","tag":"wz","owner":"service","case-insensitive":true}' &&
                state | grep -q '{"letter":"Y:","tag":"wy","owner":"sluice-wy","case-insensitive":true}' &&
                pass "VirtioFsSvc and the launcher instance are case-insensitive (registry CaseInsensitive 1, -i)" ||
                fail_later "case-insensitive in $W: $(state)"
fi

# ---- (g) the agent said "windows" after the worker started ----------------------------------------
if [ -n "$names_supported" ] && [ "$late_served" = posix ]; then
        if wait_for 30 share_prop_is "$shareLate" ServedNames windows &&
           share_prop_is "$shareLate" ServedCase insensitive; then
                # the worker's own word (its log reaches the service's)
                told() { grep -aq "sluice-fs\[wlate\].*names are now windows, case insensitive" "$work/service.log"; }
                [ "$(worker_of "$shareLate")" = "$late_pid" ] && wait_for 10 told &&
                        pass "wlate, started as posix before the agent answered, switched live to windows/insensitive" ||
                        fail_later "wlate: worker ${late_pid} → $(worker_of "$shareLate"), log: $(grep -a 'wlate' "$work/service.log" | tail -n 3)"
        else
                fail_later "wlate: ServedNames '$(shp "$shareLate" ServedNames)', ServedCase '$(shp "$shareLate" ServedCase)'"
        fi
elif [ -n "$names_supported" ]; then
        note "wlate: the agent answered before its worker started (served '$late_served'): (g) not seen"
fi
call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareLate" >/dev/null

# ---- (b) a reboot ------------------------------------------------------------------------------------------
starts=$(starts_of wy)
t_reboot=$EPOCHREALTIME
reboot_w
back() { drive_is Z: wz service && drive_is Y: wy sluice-wy && share_prop_is "$shareY" GuestState mounted; }
if wait_for 90 back; then
        [ "$(starts_of wy)" -gt "$starts" ] && [ "$(shp "$shareZ" GuestPath)" = Z: ] &&
        [ "$(shp "$shareY" GuestPath)" = Y: ] &&
                pass "after a reboot both drives are back in $(since "$t_reboot") s: Z: by VirtioFsSvc, Y: relaunched" ||
                fail_later "after a reboot: launcher starts $starts → $(starts_of wy), wz '$(shp "$shareZ" GuestPath)', wy '$(shp "$shareY" GuestPath)'"
else
        fail_later "after a reboot: $W has $(state); wz $(share_info "$shareZ"); wy $(share_info "$shareY")"
fi

# ---- (c) a letter taken ------------------------------------------------------------------------------------------
reboot_w Y
taken() { drive_is X: wy sluice-wy && share_prop_is "$shareY" GuestPath X:; }
if wait_for 90 taken; then
        pass "Y: taken by a USB stick: wy is X:, GuestPath X:"
else
        fail_later "Y: taken: $W has $(state); wy $(share_info "$shareY")"
fi
said() { grep -a "letter-changed" "$work/events.log" | grep -q "drive X:.*Y: is taken"; }
wait_for 10 said && pass "the Event says so: $(grep -a 'letter-changed' "$work/events.log" | tail -n 1 | sed 's/.*Event (//')" ||
        fail_later "no letter-changed Event: $(grep -a 'Event' "$work/events.log" | tail -n 3)"

# ---- (d) the service restarts while Windows reboots ----------------------------------------------------------
starts=$(starts_of wy)
kill "$service_pid" && wait "$service_pid" 2>/dev/null
service_pid=
reboot_w
wait_for 30 drive_is Z: wz service || fail_later "$W did not come back with Z:: $(state)"
start_service
if wait_for 120 drive_is X: wy sluice-wy; then
        [ "$(starts_of wy)" -gt "$starts" ] && pass "a new sluice-service brings wy back at X: as a launcher instance" ||
                fail_later "after the service's restart: no launcher start for wy"
else
        fail_later "after the service's restart: $W has $(state); wy $(share_info "$shareY")"
fi

# ---- (f) a Linux guest reset --------------------------------------------------------------------------------------
wait_for 240 booted $G || fail "$G did not boot"
wait_for 30 has_vm $G || fail "no Vm object for $G"
vmG=$(vm_path $G)
wait_for 90 vm_prop_is "$vmG" GuestAgent ready || fail "Vm $G: GuestAgent '$(vmp "$vmG" GuestAgent)'"
shareL=$(add_share "$work/share-l" $G gl "'attach': <true>")
wait_for 90 share_prop_is "$shareL" GuestState mounted || fail_later "gl not mounted: $(share_info "$shareL")"
mounted_after() { # N — a MOUNTED line of /mnt/gl after the Nth boot
        lines "$(console $G)" | awk -v n="$1" '/^READY /{b++} b>n && /^MOUNTED \/mnt\/gl: hello from the host/{f=1} END{exit !f}'
}
t_reset=$EPOCHREALTIME
vsh reset $G >/dev/null || fail_later "virsh reset $G"
if wait_for 180 mounted_after 1; then
        pass "$G reset: gl mounted again at $(shp "$shareL" GuestPath) in $(since "$t_reset") s, the guest reads it"
else
        fail_later "$G reset: $(count "$(console $G)" '^READY ') boot(s), gl $(share_info "$shareL")"
fi

finish

# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/lib-libvirt.sh — sourced by the libvirt suite's scripts that
# boot guests (after tests/lib.sh, with $here, $top and $build set): how they
# open and how they clean up.
#
#   libvirt_open [--agent] SCRIPT ARGS…  one run at a time on the machine
#                          (lock.sh: outside the lock, runs SCRIPT ARGS… again
#                          under it), then the guest image in $image; skips
#                          without a guest kernel, and with --agent without
#                          the QEMU guest agent in the image
#   libvirt_user_session   the test user ($user)'s session under $work: bin/
#                          (this build's sluice-fs, sluice-service, sluicectl),
#                          run/ (its XDG_RUNTIME_DIR), home/, config/; the
#                          array as_user (runs a command as $user in it, runu
#                          the same as a function) and a session bus at run/bus
#   trap libvirt_cleanup EXIT
#                          the script's clean-up, reading what it started:
#                          domains    NAME (on qemu:///system) or URI|NAME each:
#                                     destroyed and undefined (libvirt_virsh)
#                          service_pid, fs_pid, session_bus_pid: stopped
#                          libvirt_cleanup_more: called then, when defined
#                          work       on a failure (or with SLUICE_KEEP_LOGS)
#                                     its service.log whole and the tail of each
#                                     other log and guest console; then removed
#                                     with the service's sockets' folder
#
# The helpers of the scripts that drive sluice-service and guests with an
# agent (guest-agent.sh, guest-windows.sh), read at the call: $work, $user,
# as_user; the guests on qemu:///system:
#   vsh ARGS…              virsh on qemu:///system
#   call OBJ METHOD ARGS…  a D-Bus call to the service (gdbus, as $user)
#   prop/vmp/shp/set_shp   properties of any object / a Vm / a Share; set one
#   vm_path NAME, has_vm, vm_prop_is, share_prop_is, share_prop_is_not
#   lines/count/last/more_than/line_no FILE PATTERN  a guest console's lines
#   share_info, add_share DIR VM TAG [OPTIONS], worker_of SHARE
#   console NAME, define NAME DOMAIN-XML-OPTIONS…, booted NAME
#   agent DOMAIN JSON, guest_flag DOMAIN FILE, guest_run DOMAIN PROGRAM ARGS…
. "$here/lock.sh"
. "$here/system-libvirtd.sh"

libvirt_open() {
        local agent= rc
        if [ "${1:-}" = --agent ]; then
                agent=1
                shift
        fi
        libvirt_test_lock "$@"
        image=$build/tests/libvirt/guest-image
        "$top/tests/guest/build-image.sh" "$image" >/dev/null
        rc=$?
        [ $rc = 77 ] && skip "no guest kernel/busybox"
        [ $rc = 0 ] || fail "build-image.sh failed"
        [ -z "$agent" ] || [ -f "$image/qemu-ga" ] ||
                skip "the guest image has no QEMU guest agent: $(cat "$image/qemu-ga.missing" 2>/dev/null)"
}

libvirt_user_session() {
        mkdir -p "$work/bin" "$work/run" "$work/home" "$work/config"
        cp "$build/daemon/sluice-fs" "$build/service/sluice-service" "$build/cli/sluicectl" "$work/bin/"
        chown "$user:" "$work/run" "$work/home" "$work/config"
        chmod 700 "$work/run"
        # setpriv execs (runuser forks and stays the parent): started in the
        # background without a shell function around it, $! is the process itself
        as_user_prefix as_user "$user"
        as_user+=(env XDG_RUNTIME_DIR="$work/run"
                 HOME="$work/home" XDG_CONFIG_HOME="$work/config" DBUS_SESSION_BUS_ADDRESS="unix:path=$work/run/bus")
        start_session_bus "$work/run/bus" /dev/null "${as_user[@]}" ||
                fail "the session bus did not start"
}
runu() { "${as_user[@]}" "$@"; }

# libvirt_virsh URI ARGS… — virsh on URI, as libvirt_cleanup runs it; a
# script whose qemu:///session is the test user's redefines it.
libvirt_virsh() {
        local uri=$1
        shift
        virsh -q -c "$uri" "$@"
}

libvirt_cleanup() {
        local status=$? d uri name pid f sockets
        set +e
        for d in "${domains[@]+"${domains[@]}"}"; do
                uri=qemu:///system name=$d
                [ "$d" = "${d#*|}" ] || { uri=${d%%|*} name=${d#*|}; }
                libvirt_virsh "$uri" destroy "$name" >/dev/null 2>&1
                libvirt_virsh "$uri" undefine "$name" >/dev/null 2>&1
        done
        for pid in "${service_pid:-}" "${fs_pid:-}" "${session_bus_pid:-}"; do
                [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        done
        ! declare -F libvirt_cleanup_more >/dev/null || libvirt_cleanup_more
        system_libvirtd_cleanup
        [ -n "${work:-}" ] || return
        if [ "$status" != 0 ] || [ -n "${SLUICE_KEEP_LOGS:-}" ]; then
                # the service's log whole (a failure early in the run is far from its end)
                [ -f "$work/service.log" ] && { echo "---- $work/service.log"; cat "$work/service.log"; }
                for f in "$work"/*.log "$work"/*/console.log; do
                        [ -f "$f" ] && [ "$f" != "$work/service.log" ] &&
                                { echo "---- $f (tail)"; tail -n 60 "$f"; }
                done
        fi
        # the service's sockets' folder (/tmp/sluice-UID-XXXXXX), named by its link
        sockets=$(readlink "$work/run/sluice/sockets" 2>/dev/null)
        case $sockets in /tmp/sluice-*) rm -rf "$sockets" ;; esac
        rm -rf "$work"
}

# ---- helpers of the scripts with agents (see above) ----
vsh() { virsh -q -c qemu:///system "$@"; }
call() { # OBJECT METHOD ARGS… — prints the reply; errors on stderr ($call_timeout s, 90 unless set)
        local obj=$1 method=$2; shift 2
        runu gdbus call --session --timeout "${call_timeout:-90}" -d org.sluice.Sluice1 -o "$obj" -m "$method" "$@"
}
prop() { # OBJECT INTERFACE NAME — prints the value, unquoted
        call "$1" org.freedesktop.DBus.Properties.Get "$2" "$3" 2>/dev/null |
                sed -e "s/^(<//; s/>,)\$//; s/^'//; s/'\$//; s/^\"//; s/\"\$//"
}
vmp() { prop "$1" org.sluice.Sluice1.Vm "$2"; }
shp() { prop "$1" org.sluice.Sluice1.Share "$2"; }
set_shp() { call "$1" org.freedesktop.DBus.Properties.Set org.sluice.Sluice1.Share "$2" "$3" >/dev/null; }
vm_path() { # NAME → object path of its Vm, once the service knows it
        call /org/sluice/Sluice1 org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null |
                grep -o "'/org/sluice/Sluice1/vm/[0-9a-f]*': {'org.sluice.Sluice1.Vm': {[^}]*'Name': <'$1'>" |
                sed "s/^'\([^']*\)'.*/\1/"
}
has_vm() { [ -n "$(vm_path "$1")" ]; }
vm_prop_is() { [ "$(vmp "$1" "$2")" = "$3" ]; }
share_prop_is_not() { [ "$(shp "$1" "$2")" != "$3" ]; }
share_prop_is() { [ "$(shp "$1" "$2")" = "$3" ]; }
# the guests' consoles (serial: lines end in CR LF), without the CRs
lines() { tr -d '\r' < "$1" 2>/dev/null; }
count() { lines "$1" | grep -ac -- "$2" || true; }
last() { lines "$1" | grep -a -- "$2" | tail -n 1; } # FILE PATTERN → its last line
more_than() { [ "$(count "$1" "$2")" -gt "$3" ]; }
share_info() { echo "State $(shp "$1" State), GuestState '$(shp "$1" GuestState)', GuestPath '$(shp "$1" GuestPath)', Error '$(shp "$1" Error)'"; }
add_share() { # DIR VM TAG [MORE OPTIONS] → object path
        call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.AddShare "$1" "$2" "{'tag': <'$3'>${4:+, $4}}" |
                sed -n "s/^(objectpath '\(.*\)',)\$/\1/p"
}
worker_of() { # SHARE → the pid of its sluice-fs
        local sock; sock=$(shp "$1" SocketPath)
        [ -n "$sock" ] && pgrep -u "$user" -f "$work/bin/sluice-fs --socket-path=$sock( |\$)" | head -1
}
console() { echo "$work/vm-$1/console.log"; }
define() { # NAME DOMAIN-XML-OPTIONS…
        local name=$1; shift
        mkdir -p "$work/vm-$name"
        : > "$(console "$name")"
        chmod 777 "$work/vm-$name"
        "$top/tests/domain-xml.sh" --kernel "$work/vmlinux" --initrd "$work/initrd.cpio" \
                --console "$(console "$name")" "$@" "$name" > "$work/$name.xml" || return 1
        chmod 644 "$work/$name.xml"
        # left behind by a run that was killed (this one holds the lock)
        if vsh dominfo "$name" >/dev/null 2>&1; then
                vsh destroy "$name" >/dev/null 2>&1
                vsh undefine "$name" >/dev/null 2>&1
        fi
        vsh define "$work/$name.xml" >/dev/null || return 1
        domains+=("$name")
}
booted() { more_than "$(console "$1")" "^READY " 0; }
# agent() DOMAIN JSON — one command to the guest's agent, as root through virsh
agent() { vsh qemu-agent-command "$1" "$2" 2>&1; }
# guest_flag DOMAIN FILE — creates FILE in the guest (the workload's control files)
guest_flag() {
        local h
        h=$(agent "$1" "{\"execute\":\"guest-file-open\",\"arguments\":{\"path\":\"$2\",\"mode\":\"w\"}}" |
            sed -n 's/.*"return":\([0-9]*\).*/\1/p')
        [ -n "$h" ] && agent "$1" "{\"execute\":\"guest-file-close\",\"arguments\":{\"handle\":$h}}" >/dev/null
}
# guest_run DOMAIN PROGRAM ARGS… — its output, through the agent (for the log)
guest_run() {
        local dom=$1 prog=$2 args= pid a; shift 2
        for a in "$@"; do args+="${args:+,}\"$a\""; done
        pid=$(agent "$dom" "{\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"$prog\",\"arg\":[$args],\"capture-output\":true}}" |
              sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
        [ -n "$pid" ] || return 1
        sleep 1
        agent "$dom" "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":$pid}}" |
                sed -n 's/.*"out-data":"\([^"]*\)".*/\1/p' | base64 -d 2>/dev/null
}
# the pretend Windows agent's record of what it was asked (tests/guest/qga-windows.c)
win() { lines "$(console "$1")" | grep -a "^QGA-WIN: "; }
line_no() { lines "$1" | grep -an -- "$2" | tail -n 1 | cut -d: -f1; } # FILE PATTERN → number of its last line

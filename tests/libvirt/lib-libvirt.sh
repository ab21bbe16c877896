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

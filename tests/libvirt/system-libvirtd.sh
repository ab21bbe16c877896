# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/system-libvirtd.sh — sourced by the libvirt suite's scripts
# (after tests/lib.sh, with $work set): the system libvirtd as they run it
# here, without systemd (no unit starts it; QEMU runs as libvirt-qemu).
#
#   system_libvirtd_setup SCRIPT   the libvirt-qemu user and group, and an
#                                  /etc/libvirt/qemu.conf naming them when there
#                                  is none (SCRIPT is written into it)
#   system_libvirtd_start [USER]   uses a libvirtd that answers, else starts one
#                                  (USER, when given, may reach it without polkit:
#                                  there is no system bus here); 1 when it fails
#   system_libvirtd_launch [USER]  starts one (a restart: after a kill)
#   system_libvirtd_resume [USER]  SIGCONT to the one a test stopped (SIGSTOP), and
#                                  a new one if it died waking up (see below)
#   system_libvirtd_cleanup        stops what was started, removes what was written
# started_libvirtd is the pid of the libvirtd started, empty when one was running.
started_libvirtd= wrote_qemu_conf=

system_libvirtd_setup() {
        getent group libvirt-qemu >/dev/null || groupadd --system libvirt-qemu
        id -u libvirt-qemu >/dev/null 2>&1 ||
                useradd --system --gid libvirt-qemu --home-dir /var/lib/libvirt --shell /usr/sbin/nologin libvirt-qemu
        # QEMU's user may open /dev/kvm, as Debian's libvirt-daemon-system sets it up.
        # Without it libvirtd finds its QEMU capability cache stale on every lookup
        # ("KVM was enabled when probing …, but it is not available now") and
        # re-probes QEMU on every define and start: ~50 s per define on a 2-core
        # machine, longer than a D-Bus caller waits.  The guests stay TCG.
        if getent group kvm >/dev/null && ! id -nG libvirt-qemu | grep -qw kvm; then
                usermod -a -G kvm libvirt-qemu || return 1
        fi
        mkdir -p /var/log/libvirt /etc/libvirt
        if [ ! -f /etc/libvirt/qemu.conf ]; then
                printf '%s\n' "# written by sluice $1" 'user = "libvirt-qemu"' \
                        'group = "libvirt-qemu"' 'stdio_handler = "file"' > /etc/libvirt/qemu.conf
                wrote_qemu_conf=1
        fi
}

system_libvirtd_launch() {
        local conf=()

        if [ -n "${1:-}" ]; then
                cat > "$work/libvirtd.conf" <<CONF
unix_sock_group = "$(id -gn "$1")"
unix_sock_ro_perms = "0777"
unix_sock_rw_perms = "0770"
auth_unix_ro = "none"
auth_unix_rw = "none"
CONF
                conf=(-f "$work/libvirtd.conf")
        fi
        libvirtd "${conf[@]}" >>"$work/libvirtd.log" 2>&1 &
        started_libvirtd=$!
        # the first start probes QEMU (~8 s idle, much longer under load)
        wait_for 180 virsh -q -c qemu:///system version >/dev/null 2>&1
}

system_libvirtd_start() {
        if virsh -q -c qemu:///system version >/dev/null 2>&1; then
                note "using the running system libvirtd"
                return 0
        fi
        system_libvirtd_launch "$@" || { echo "libvirtd did not start" >&2; return 1; }
        if [ -n "${1:-}" ] && ! runuser -u "$1" -- virsh -q -c qemu:///system list >/dev/null 2>&1; then
                echo "$1 cannot reach the system libvirtd" >&2
                return 1
        fi
}

# Whether the libvirtd started here has ended (a zombie counts: it is this
# shell's child, reaped only by wait).
system_libvirtd_dead() {
        local state
        state=$(cut -d' ' -f3 "/proc/$started_libvirtd/stat" 2>/dev/null)
        [ -z "$state" ] || [ "$state" = Z ]
}

system_libvirtd_answers_or_dead() {
        virsh -q -c qemu:///system version >/dev/null 2>&1 || system_libvirtd_dead
}

# Debian 12's libvirtd (9.0) can crash as it wakes up from a stop long enough
# for a client's keepalive to have given up on it: it segfaults freeing that
# client's event callbacks (remoteClientFreePrivateCallbacks meets a NULL
# callback array; dmesg shows it).  That is libvirtd's bug, not Sluice's: the
# test says so and starts a new libvirtd, and its checks go on against that
# one (Sluice must reconnect to it by itself).
system_libvirtd_resume() {
        kill -CONT "$started_libvirtd" 2>/dev/null
        wait_for 30 system_libvirtd_answers_or_dead || return 1
        system_libvirtd_dead || return 0
        wait "$started_libvirtd" 2>/dev/null
        note "libvirtd (pid $started_libvirtd) crashed as it woke up: $(dmesg 2>/dev/null | grep -a "libvirtd\[$started_libvirtd\]" | tail -n 1 || true); starting a new one (libvirt's bug, see system-libvirtd.sh)"
        system_libvirtd_launch "$@"
}

system_libvirtd_cleanup() {
        if [ -n "$started_libvirtd" ]; then
                kill -CONT "$started_libvirtd" 2>/dev/null
                kill "$started_libvirtd" 2>/dev/null
                wait_for 5 pid_gone "$started_libvirtd"
        fi
        [ -n "$wrote_qemu_conf" ] && rm -f /etc/libvirt/qemu.conf
}

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo.sh BUILD — `make demo`: Sluice as a desktop user's session runs it.
#
# A throwaway TCG VM in a libvirt daemon of the demo's own (qemu:///session of
# the demo user) — or, where that cannot run, in the system's (qemu:///system;
# see "Where the VM runs" below) —, a private session bus with sluice-service
# on it, then what a user types: `sluicectl add DIR --vm NAME --attach`
# hot-plugs the folder and the service mounts it in the guest through the
# guest's QEMU guest agent (the guest itself mounts nothing: the share appears
# there by itself, at /mnt/TAG); the guest lists it and writes a file that
# shows on the host; `sluicectl set TAG readonly on` makes the guest's next
# write fail with "Read-only file system"; `sluicectl stats TAG` shows the
# traffic, at least the 4 MiB the guest wrote.  Each step prints a heading and
# its time; the last line is the verdict.  Everything the demo starts is stopped and the VM is undefined,
# whatever happens (also on Ctrl-C); the exit status is 0 only if every step
# did what it says.
#
# Who runs it: as an ordinary user, the demo runs as that user.  As root, it
# runs everything as the ordinary user $SLUICE_DEMO_USER (default sluice-demo,
# created if missing) — not the test suites' sluice-test, whose session
# libvirtd the libvirt suite may be using at the same time.
# The guest (tests/guest/demo-workload.sh) and this script take turns: the
# guest prints "STEP NAME" on its console and waits for .ctl/go-NAME in the
# share, which this script creates once it has done its part.
#
# Where the VM runs: the demo tries qemu:///session first, by doing it: it
# starts the demo user's libvirtd and starts the VM there.  Whatever stops
# that (libvirtd exits, does not answer, or the VM does not start — e.g. a
# temporary folder so deep that the daemon's or QEMU's sockets do not fit in a
# socket address, a process limit, a security policy) sends the VM to
# qemu:///system instead, where QEMU runs as libvirt-qemu and sluice-service
# grants that user the worker's socket with an ACL.  As root the demo starts
# a system libvirtd when none answers (tests/libvirt/system-libvirtd.sh); as
# an ordinary user it needs a running one it may reach (the libvirt group).
# It prints which it used and why: "VMs: qemu:///… (…)".  Everything else
# stays the same: sluice-service and sluice-fs run as the ordinary user.
# One run that uses libvirt at a time (tests/libvirt/lock.sh): the demo waits
# for the libvirt tests.
# Environment: SLUICE_DEMO_USER, SLUICE_DEMO_KEEP=1 (keep the work folder),
# TMPDIR (where the work folder goes), SLUICE_DEMO_EXPECT=session (fail
# instead of falling back: make check's `demo` test).
# Exit: 0 demo OK, 1 a step failed, 77 something the demo needs is missing
# (the message says what).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
build=${1:-build}
build=$(cd "$build" 2>/dev/null && pwd) || { echo "demo: no build directory '${1:-build}' (run make build)" >&2; exit 1; }
. "$here/../libvirt/system-libvirtd.sh"
# one run that starts libvirt daemons at a time (a person waiting sees why)
. "$here/../libvirt/lock.sh"
if [ -z "${SLUICE_LIBVIRT_TEST_LOCKED:-}" ]; then
        lock=/run/lock/sluice-libvirt-test.lock
        [ -d /run/lock ] || lock=/tmp/sluice-libvirt-test.lock
        flock -n "$lock" true 2>/dev/null || echo "demo: waiting for another run that uses libvirt to finish ($lock)"
fi
libvirt_test_lock "$0" "$@"
# libvirtd is in /usr/sbin, which an ordinary user's PATH often lacks
PATH=$PATH:/usr/sbin:/sbin

bold=; plain=
if [ -t 1 ]; then bold=$(printf '\033[1m'); plain=$(printf '\033[0m'); fi
# The demo speaks to a person: steps with headings and times, and a verdict
# line (say, die, missing) instead of the tests' PASS/FAIL lines.
step=0 step_name= t_step=
end_step() { [ -z "$t_step" ] || echo "    ($(since "$t_step") s)"; t_step=; }
say() { end_step; step=$((step + 1)) step_name=$*; echo; echo "${bold}==> Step $step: $*${plain}"; t_step=$EPOCHREALTIME; }
failed=
# die MESSAGE — this step failed: the message and the verdict, exit 1
die() {
        echo "    $*" >&2
        failed=1
        end_step
        echo; echo "${bold}demo FAILED at step $step ($step_name): $*${plain}"
        exit 1
}
# missing MESSAGE — something the demo needs is not here: exit 77 (a skip)
missing() { echo "demo: $*" >&2; echo; echo "${bold}demo NOT RUN: $*${plain}"; exit 77; }
# shows the command that follows the way a user would type it
show() { echo "    \$ $*"; }
indent() { sed 's/^/      /'; }

vm=sluice-demo-vm tag=demo uri=qemu:///session
work= session_bus_pid= service_pid= libvirtd_pid= vm_defined=
# stop_system_libvirtd — stops the system libvirtd the demo started (if it
# did) and takes back the qemu.conf it wrote
stop_system_libvirtd() {
        if [ -n "$started_libvirtd" ]; then
                kill -CONT "$started_libvirtd" 2>/dev/null
                kill "$started_libvirtd" 2>/dev/null && wait "$started_libvirtd" 2>/dev/null
        fi
        system_libvirtd_cleanup
        started_libvirtd= wrote_qemu_conf=
}
cleanup() {
        set +e
        if [ -n "$vm_defined" ]; then
                # A Ctrl-C reaches libvirtd too (the terminal signals the whole
                # process group), not QEMU (libvirt starts it in a session of its
                # own): a daemon started again finds the VM and can stop it.
                if ! as_user virsh -q -c "$uri" uri >/dev/null 2>&1; then
                        if [ "$uri" = qemu:///session ]; then
                                "${user_exec[@]}" libvirtd >>"$work/libvirtd-session.log" 2>&1 9>&- &
                                libvirtd_pid=$!
                                wait_for 60 libvirt_up
                        elif [ -n "$started_libvirtd" ]; then
                                system_libvirtd_launch "$user" >/dev/null 2>&1 9>&-
                        fi
                fi
                as_user virsh -q -c "$uri" destroy "$vm" >/dev/null 2>&1
                as_user virsh -q -c "$uri" undefine "$vm" >/dev/null 2>&1
        fi
        for pid in $service_pid $libvirtd_pid $session_bus_pid; do
                kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        done
        stop_system_libvirtd
        if [ -n "$failed" ] && [ -n "$work" ]; then
                for f in "$work/vm/console.log" "$work/service.log" "$work/libvirtd-session.log" "$work/libvirtd.log"; do
                        [ -s "$f" ] && { echo "---- the end of $f"; tail -n 15 "$f" | tr -d '\r'; } >&9
                done
        fi
        [ -z "$work" ] || [ -n "${SLUICE_DEMO_KEEP:-}" ] || rm -rf "$work"
        [ -z "${SLUICE_DEMO_KEEP:-}" ] || echo "demo: kept $work" >&9
}
trap cleanup EXIT
# The demo's output, kept as fd 9 for what the traps say: a signal can come
# while a command runs whose output is discarded (wait_for's condition), and
# a trap writes where that command does.  Daemons are started without it.
exec 9>&1
trap 'echo >&9; echo "demo interrupted: stopping what it started" >&9; exit 1' INT TERM HUP

# ---- 1 ------------------------------------------------------------------------------------
say "what the demo needs"
for tool in qemu-system-x86_64 libvirtd virsh dbus-daemon gdbus; do
        command -v "$tool" >/dev/null || missing "$tool is not installed (make deps installs it)"
done
for bin in daemon/sluice-fs service/sluice-service cli/sluicectl; do
        [ -x "$build/$bin" ] || missing "$build/$bin is not built (make build)"
done
if [ "$(id -u)" = 0 ]; then
        user=${SLUICE_DEMO_USER:-sluice-demo}
        command -v setpriv >/dev/null || missing "setpriv is not installed (util-linux)"
        if ! id -u "$user" >/dev/null 2>&1; then
                echo "    creating the ordinary user $user to run the demo"
                (ensure_user "$user") || die "useradd $user failed"
        fi
        [ "$(id -u "$user")" != 0 ] || die "SLUICE_DEMO_USER must be an ordinary user, not $user"
else
        user=$(id -un)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-demo.XXXXXX") || die "mktemp failed"
chmod 0755 "$work"
mkdir -p "$work/run" "$work/config/libvirt" "$work/cache" "$work/vm" "$work/bin"
chmod 0700 "$work/run"
# the session libvirtd writes QEMU's output to a file (no virtlogd left behind)
echo 'stdio_handler = "file"' >"$work/config/libvirt/qemu.conf"
[ "$(id -u)" != 0 ] || chown -R "$user:" "$work/run" "$work/config" "$work/cache" "$work/vm"
user_env=(XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config" XDG_CACHE_HOME="$work/cache"
          HOME="$(getent passwd "$user" | cut -d: -f6)" DBUS_SESSION_BUS_ADDRESS="unix:path=$work/run/bus"
          LIBVIRT_AUTOSTART=0 LANG="${LANG:-C.UTF-8}")
as_user_prefix as_root "$user"
# COMMAND… as the user, in the demo's environment; SLUICE_FS is the demo's
# choice, not whatever the caller's environment names
as_user() { "${as_root[@]}" env -u SLUICE_FS "${user_env[@]}" "$@"; }
# The build tree's programs where the demo user can run them (the service then
# finds the build tree's sluice-fs itself), else copies.
service_dir=$build/service ctl_dir=$build/cli fs=
if ! as_user test -x "$build/service/sluice-service" -a -x "$build/cli/sluicectl" -a -x "$build/daemon/sluice-fs"; then
        cp "$build/daemon/sluice-fs" "$build/service/sluice-service" "$build/cli/sluicectl" "$work/bin/"
        service_dir=$work/bin ctl_dir=$work/bin fs=$work/bin/sluice-fs
fi
user_env+=(PATH="$service_dir:$ctl_dir:$PATH")
[ -z "$fs" ] || user_env+=(SLUICE_FS="$fs")
# the same for programs started in the background: setpriv and env exec, so
# without a shell function around them $! is the program itself (to stop it)
user_exec=("${as_root[@]}" env -u SLUICE_FS "${user_env[@]}")
ctl() { as_user sluicectl "$@"; }
vsh() { as_user virsh -q -c "$uri" "$@"; }
echo "    user:      $user (sluice-service, sluice-fs and the commands below run as this user)"
echo "    programs:  $service_dir/sluice-service, $ctl_dir/sluicectl"
echo "    QEMU:      $(qemu-system-x86_64 --version | head -1)"
echo "    libvirt:   $(libvirtd --version)"

# ---- 2 ------------------------------------------------------------------------------------
say "the guest: a Debian kernel and a busybox initramfs (built once)"
image=$build/tests/guest/image
# kept in the build tree for the next run, unless we may not write there
[ -w "$image" ] || { [ ! -e "$image" ] && [ -w "$(dirname "$image")" ]; } || image=$work/image
"$here/build-image.sh" "$image" >"$work/build-image.log" 2>&1
case $? in
0) ;;
77) missing "no guest kernel or busybox-static: $(tail -1 "$work/build-image.log")" ;;
*) cat "$work/build-image.log" >&2; die "build-image.sh failed" ;;
esac
[ -f "$image/qemu-ga" ] || missing "the guest image has no QEMU guest agent: $(cat "$image/qemu-ga.missing" 2>/dev/null)"
"$here/mkcpio.sh" "$work/workload.cpio" "$here/demo-workload.sh:/workload.sh" || die "mkcpio.sh failed"
cp "$image/vmlinux" "$work/vm/vmlinux"
cat "$image/initrd.cpio" "$work/workload.cpio" >"$work/vm/initrd.cpio"
chmod 0644 "$work/vm/vmlinux" "$work/vm/initrd.cpio"
echo "    kernel $(cat "$image/kernel-version"), $(cat "$image/qemu-ga"), with tests/guest/demo-workload.sh as its job"

# ---- 3 ------------------------------------------------------------------------------------
say "a throwaway VM: $vm (TCG, 1 vCPU, 256 MiB of shared memory, no disk, the QEMU guest agent)"
console=$work/vm/console.log
"$here/../domain-xml.sh" --kernel "$work/vm/vmlinux" --initrd "$work/vm/initrd.cpio" --console "$console" \
        --tag "$tag" --agent "$vm" >"$work/vm/$vm.xml" || die "domain-xml.sh failed"
chmod 0644 "$work/vm/$vm.xml"
# libvirt's last error in LOG (its "error : FUNCTION:LINE : " prefix cut)
last_error() { sed -n 's/^.* error : [^ ]* : //p' "$1" 2>/dev/null | tail -n 1; }
# start_vm — defines and starts the VM in $uri; on failure, the VM undefined
# again and start_error saying why
start_vm() {
        local out
        : >"$console"
        [ "$(id -u)" != 0 ] || chown "$user:" "$console"
        show "virsh -c $uri define $vm.xml && virsh -c $uri start $vm"
        out=$(vsh define "$work/vm/$vm.xml" 2>&1) || { start_error="virsh define: ${out##*error: }"; return 1; }
        vm_defined=1
        out=$(vsh start "$vm" 2>&1) && return 0
        start_error=${out##*error: }
        vsh destroy "$vm" >/dev/null 2>&1
        vsh undefine "$vm" >/dev/null 2>&1 && vm_defined=
        return 1
}
# up (it takes connections), or dead (no point in waiting for it then)
libvirt_up() { ! kill -0 "$libvirtd_pid" 2>/dev/null || vsh uri >/dev/null 2>&1; }
# why libvirt could not run QEMU, from its LOG: the last probe's failure
# (QEMU's own words, its command line cut)
probe_failure() {
        grep -a 'Failed to probe capabilities for .*x86_64' "$1" 2>/dev/null | tail -n 1 |
                sed 's/.*for probing: //; s/^qemu-system-[^:]*: //; s/^-[a-z]* [^ ]*: //'
}
# try_session — the demo user's own libvirtd, and the VM started there;
# on failure nothing of it is left and why_not says what stopped it
try_session() {
        local out rc
        uri=qemu:///session
        echo "    trying qemu:///session: a libvirt daemon of $user's own"
        show "libvirtd &"
        "${user_exec[@]}" libvirtd >"$work/libvirtd-session.log" 2>&1 9>&- &
        libvirtd_pid=$!
        # its first start probes QEMU's capabilities (seconds; longer on a loaded machine)
        if ! wait_for 120 libvirt_up; then
                why_not="libvirtd did not answer within 120 s"
        elif ! kill -0 "$libvirtd_pid" 2>/dev/null; then
                wait "$libvirtd_pid"
                rc=$?
                why_not="libvirtd exited (status $rc): $(last_error "$work/libvirtd-session.log")"
                libvirtd_pid=
                return 1
        elif ! out=$(vsh version 2>&1); then
                # the daemon runs, but found no QEMU it can start (its capability probe failed)
                why_not=$(probe_failure "$work/libvirtd-session.log")
                why_not="libvirtd runs but cannot run QEMU: ${why_not:-${out##*error: }}"
        elif start_vm; then
                echo "    libvirtd (pid $libvirtd_pid) answers on $work/run/libvirt/libvirt-sock"
                return 0
        else
                why_not="the VM did not start there: $start_error"
        fi
        kill "$libvirtd_pid" 2>/dev/null && wait "$libvirtd_pid" 2>/dev/null
        libvirtd_pid=
        return 1
}
# use_system — the system's libvirtd: as root, one that answers or one the
# demo starts (reachable by $user without polkit); else a running one $user
# may reach
use_system() {
        uri=qemu:///system
        echo "    using qemu:///system: QEMU runs as libvirt-qemu, sluice-service grants it the socket with an ACL"
        if [ "$(id -u)" = 0 ]; then
                system_libvirtd_setup tests/guest/demo.sh || die "cannot set up the system libvirtd (the libvirt-qemu user, /etc/libvirt/qemu.conf)"
                [ -n "$wrote_qemu_conf" ] && echo "    wrote /etc/libvirt/qemu.conf (QEMU as libvirt-qemu; taken back at the end)"
                show "libvirtd &    (as root)"
                system_libvirtd_start "$user" >>"$work/libvirtd.log" 2>&1 9>&- ||
                        die "no system libvirtd $user may reach: $(tail -n 1 "$work/libvirtd.log") $(last_error "$work/libvirtd.log")"
                if [ -n "$started_libvirtd" ]; then
                        echo "    libvirtd (pid $started_libvirtd, as root) answers on /run/libvirt/libvirt-sock"
                else
                        echo "    the system libvirtd that was running already answers"
                fi
        elif ! vsh version >/dev/null 2>&1; then
                missing "qemu:///session could not start ($why_not), and there is no system libvirtd $user may reach (run the demo as root, or join the libvirt group)"
        else
                echo "    the system libvirtd that is running answers $user"
        fi
        start_vm || die "virsh -c $uri start failed: $start_error (qemu:///session could not start either: $why_not)"
}
why_not=
if try_session; then
        vms="VMs: qemu:///session (a libvirt daemon of $user's own)"
else
        echo "    qemu:///session could not start: $why_not"
        # make check's demo: session mode broken must not pass as a fallback
        [ "${SLUICE_DEMO_EXPECT:-}" != session ] ||
                die "qemu:///session could not start ($why_not), and SLUICE_DEMO_EXPECT=session"
        use_system
        vms="VMs: qemu:///system (qemu:///session could not start: $why_not)"
fi
guest_says() { tr -d '\r' <"$console" | grep -c "$1" >/dev/null; }
guest_failed() { tr -d '\r' <"$console" | grep '^FAIL'; }
# guest_waits SECONDS PATTERN — until the console shows PATTERN; a guest that gave up ends it early
guest_reached() { guest_says "$1" || guest_failed >/dev/null; }
guest_waits() { wait_for "$1" guest_reached "$2" && ! guest_failed >/dev/null; }
guest_lines() { tr -d '\r' <"$console" | sed -n "s/^guest: //p"; }
echo "    $vms"

# ---- 4 ------------------------------------------------------------------------------------
say "a private session bus and sluice-service on it, as $user"
start_session_bus "$work/run/bus" "$work/bus.log" "${user_exec[@]}" 9>&- ||
        die "the session bus did not start: $(cat "$work/bus.log")"
show "sluice-service &"
"${user_exec[@]}" SLUICE_LIBVIRT_URIS=$uri sluice-service >"$work/service.log" 2>&1 9>&- &
service_pid=$!
# up, or dead (no point in waiting for it then)
service_up() { ! kill -0 "$service_pid" 2>/dev/null ||
               as_user gdbus introspect --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 >/dev/null 2>&1; }
wait_for 60 service_up && kill -0 "$service_pid" 2>/dev/null ||
        die "sluice-service did not come up: $(tail -5 "$work/service.log")"
echo "    sluice-service (pid $service_pid) owns org.sluice.Sluice1 on the bus and follows $uri"

# ---- 5 ------------------------------------------------------------------------------------
say "the VM boots; sluice-service sees it and its guest agent"
qemu_log=$work/cache/libvirt/qemu/log/$vm.log
[ "$uri" = qemu:///session ] || qemu_log=/var/log/libvirt/qemu/$vm.log
guest_waits 120 '^READY' || die "the guest did not boot: $(tail -5 "$console" | tr -d '\r') $(tail -3 "$qemu_log" 2>/dev/null)"
# the service hears the guest's agent once it runs
vm_json() { ctl --json vms 2>/dev/null | tr -d ' \n'; }
agent_ready() { vm_json | grep -c '"guest_agent":"ready"' >/dev/null; }
wait_for 90 agent_ready || echo "    (the guest's agent has not answered yet)"
show "sluicectl vms"
ctl vms 2>&1 | indent

# ---- 6 ------------------------------------------------------------------------------------
share=$work/demo
mkdir -p "$share/photos" "$share/.ctl"
echo "This folder lives on the host; Sluice shares it with the VM." >"$share/README.txt"
printf '# Notes\n- shared over virtiofs by sluice-fs\n' >"$share/notes.md"
head -c 200000 /dev/urandom >"$share/photos/holiday.jpg"
[ "$(id -u)" != 0 ] || chown -R "$user:" "$share"
say "share a folder with the VM: sluicectl add $share --vm $vm --attach"
show "sluicectl add $share --vm $vm --attach"
out=$(ctl add "$share" --vm "$vm" --attach 2>&1) || die "sluicectl add failed: $out"
echo "$out" | indent
got_tag=$(ctl --json list | tr -d ' \n' | sed -n 's/.*"tag":"\([^"]*\)".*/\1/p')
[ "$got_tag" = "$tag" ] || die "the share's tag is '$got_tag', the guest mounts '$tag'"
# the guest mounts nothing: the service does it through the guest's agent
guest_path() { ctl --json list 2>/dev/null | tr -d ' \n' | sed -n 's/.*"guest_path":"\([^"]*\)".*/\1/p'; }
in_guest() { [ "$(guest_path)" = "/mnt/$tag" ]; }
wait_for 90 in_guest && guest_waits 60 '^PASS mount' ||
        die "the share did not appear in the guest by itself (the guest's agent mounts it):" \
            "$(guest_failed) $(ctl --json list 2>&1 | tr -d '\n')"
echo "    the share appeared in the guest by itself, at $(guest_path): nobody typed a mount command there"
show "sluicectl list"
ctl list 2>&1 | indent

# ---- 7 ------------------------------------------------------------------------------------
say "in the guest: the share is there; list the folder, write a file"
guest_waits 90 '^STEP readonly' || die "the guest did not write: $(guest_failed)"
guest_lines | indent

# ---- 8 ------------------------------------------------------------------------------------
say "on the host: the file the guest wrote"
show "cat $share/hello-from-guest.txt"
[ -f "$share/hello-from-guest.txt" ] || die "hello-from-guest.txt is not in $share"
indent <"$share/hello-from-guest.txt"
owner=$(stat -c %U "$share/hello-from-guest.txt")
echo "    owned by $owner on the host (the user sluice-fs runs as); data.bin: $(stat -c %s "$share/data.bin") bytes"
[ "$owner" = "$user" ] || die "hello-from-guest.txt is owned by $owner, not $user"
grep -q "Hello from the guest" "$share/hello-from-guest.txt" || die "hello-from-guest.txt does not say hello"

# ---- 9 ------------------------------------------------------------------------------------
say "make the share read-only while the guest runs; the guest writes again"
show "sluicectl set $tag readonly on"
out=$(ctl set "$tag" readonly on 2>&1) || die "sluicectl set $tag readonly on failed: $out"
[ -z "$out" ] || echo "$out" | indent
# the host side stays writable: the go-ahead is written here, not through the guest
touch "$share/.ctl/go-readonly"
guest_waits 90 '^RESULT readonly-write' || die "the guest did not try again: $(guest_failed)"
result=$(tr -d '\r' <"$console" | sed -n 's/^RESULT readonly-write: //p')
guest_lines | sed -n '/made the share read-only/,/reading still works/p' | indent
case $result in *"Read-only file system"*) ;; *) die "the write after readonly on: '$result' (expected Read-only file system)" ;; esac
[ ! -e "$share/after-readonly.txt" ] || die "after-readonly.txt appeared on the host"
echo "    after-readonly.txt is not on the host: the worker refused it"

# ---- 10 -----------------------------------------------------------------------------------
say "the traffic: sluicectl stats $tag"
# The totals must add up to what the guest did since the share started: at
# least the 4 MiB of data.bin it wrote (plus hello-from-guest.txt).  The
# service samples the worker's counters about once a second.
min_written=$((4 * 1024 * 1024))
bytes_written() { ctl --json stats "$tag" 2>/dev/null | tr -d ' \n' | sed -n 's/.*"bytes-written":\([0-9]*\).*/\1/p'; }
wrote_all() { local n; n=$(bytes_written); [ "${n:-0}" -ge "$min_written" ]; }
wait_for 30 wrote_all ||
        die "sluicectl stats counts $(bytes_written || true) bytes written, the guest wrote at least $min_written" \
            "(data.bin: $(stat -c %s "$share/data.bin") bytes): $(ctl stats "$tag" 2>&1)"
show "sluicectl stats $tag"
ctl stats "$tag" 2>&1 | indent

# ---- 11 -----------------------------------------------------------------------------------
say "clean up: remove the share, the VM, libvirtd, sluice-service and the bus"
# the guest powers off when its job is done
vm_off() { [ "$(vsh domstate "$vm" 2>/dev/null)" = "shut off" ]; }
wait_for 60 vm_off || { echo "    (the guest did not power off by itself: destroying it)"; vsh destroy "$vm" >/dev/null 2>&1; }
show "sluicectl remove $tag"
ctl remove "$tag" >/dev/null 2>&1 || die "sluicectl remove $tag failed"
show "virsh -c $uri undefine $vm"
vsh undefine "$vm" >/dev/null || die "virsh undefine failed"
vm_defined=
if [ "$uri" = qemu:///session ]; then
        left=$(vsh list --all --name | grep -c .)
        [ "$left" = 0 ] || die "$left domain(s) still defined in the demo's libvirtd"
else
        # the system's libvirtd may hold other people's VMs: only the demo's counts
        ! vsh dominfo "$vm" >/dev/null 2>&1 || die "$vm is still defined in qemu:///system"
fi
for pid in $service_pid $libvirtd_pid $session_bus_pid; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
done
# a system libvirtd the demo started goes too (one that was running stays)
[ -z "$started_libvirtd" ] || show "kill $started_libvirtd    (the system libvirtd the demo started)"
stop_system_libvirtd
# what the demo started is gone: its own processes, and anything (QEMU, sluice-fs,
# the bus) whose command line names the demo's folder
left=$(for pid in $service_pid $libvirtd_pid $session_bus_pid; do ! kill -0 "$pid" 2>/dev/null || echo "$pid"; done
       pgrep -f -- "$work/")
service_pid= libvirtd_pid= session_bus_pid=
[ -z "$left" ] || die "still running: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
echo "    nothing left running, nothing left defined"
end_step

echo
echo "$vms"
echo "${bold}demo OK in $(since "$test_t0") s: the hot-plugged folder appeared in the guest by itself (mounted through its agent), the guest wrote a file the host reads, got \"Read-only file system\" after sluicectl set readonly on, and sluicectl stats counted the 4 MiB it wrote.${plain}"

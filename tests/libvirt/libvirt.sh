#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/libvirt.sh — sluice-service against a real libvirtd and real
# TCG guests, through the service's D-Bus API, as a desktop user would use it.
#
# As root: starts the system libvirtd (without systemd: no unit starts it; QEMU
# runs as libvirt-qemu, so the service must grant it access to the socket)
# unless one already runs, and runs sluice-service as $SLUICE_TEST_USER on a
# private session bus, tracking qemu:///session (that user's own libvirtd) and
# qemu:///system.  Guests are diskless (kernel + busybox initramfs from
# tests/guest/build-image.sh) and run guest-workload.sh, which mounts every
# virtiofs device that appears, reads hello.txt and writes a file back.
#
# Checks: live attach → guest reads/writes, QEMU's user gets ACL entries (on
# the sockets' folder under /tmp, none on the runtime folder) and is the one
# peer its worker accepts (--allow-peer-uid), and of that user only the VM's
# QEMU (its pid from libvirt, Worker1.SetPeerPid): another process of
# libvirt-qemu is refused, the share says so and stays attached;
# detach → device gone, the folders' ACL entries Sluice added gone; VM stopped
# and started → share back; worker SIGKILLed → recovered, guest reads again;
# sluice-service SIGKILLed → the VM keeps its share, the restarted service
# takes over the socket, a re-plug reaches its worker;
# libvirtd restarted → tracking resumes; VM without shared memory → the named
# error, EnableSharedMemory, restart → works; Windows OS → the hint says what
# Windows needs; a q35 VM without a free PCIe root port → the named error
# that says what to do, Vm.HotplugSlots 0, AddHotplugSlots adds root ports to
# the saved definition, restart → attached; an i440fx VM → AddHotplugSlots
# says root ports do not help it; libvirt launching sluice-fs itself (<binary path=…>) → boots
# and mounts; a qemu:///session VM → attach and read; libvirtd stopped (SIGSTOP)
# with an EnableSharedMemory call in flight → the service still answers others;
# libvirtd stalled longer than a D-Bus caller waits → the caller gets a named
# error in time and the service follows the VM afterwards (keepalive, reconnect).
# Exit: 0 pass, 1 fail, 77 skip (not root, or no QEMU/libvirt/kernel).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}
vmm=${SLUICE_TEST_VMM:-$build/tests/frontend/sluice-test-vmm}

. "$top/tests/lib.sh"
. "$here/lib-libvirt.sh"
need_root "starts the system libvirtd"
need_tools libvirtd virsh qemu-system-x86_64 dbus-daemon gdbus setfacl runuser setpriv flock

user=${SLUICE_TEST_USER:-sluice-test}
ensure_user "$user"
uid=$(id -u "$user")

# One instance per machine (lock.sh says why), and the guest.
libvirt_open "$0" "$@"

# Each check reports PASS or FAIL and the run goes on (fail_later, finish);
# a step the rest depends on stops it (fail).

work=$(mktemp -d /tmp/sluice-libvirt.XXXXXX)
chmod 755 "$work"

# ---- clean-up ------------------------------------------------------------
service_pid= session_bus_pid=
domains=()
# the session libvirtd that the test user's connection auto-started
libvirt_cleanup_more() {
        local pid
        for pid in $(pgrep -u "$user" -x libvirtd) $(pgrep -u "$user" -x virtlogd); do kill "$pid"; done
}
trap libvirt_cleanup EXIT

# ---- system libvirtd ---------------------------------------------------------
system_libvirtd_setup tests/libvirt/libvirt.sh || exit 1
vsh() { local uri=$1; shift; if [ "$uri" = qemu:///session ]; then
                runuser -u "$user" -- env XDG_RUNTIME_DIR="$work/run" HOME="$work/home" virsh -q -c "$uri" "$@"
        else virsh -q -c "$uri" "$@"; fi; }
libvirt_virsh() { vsh "$@"; }   # the clean-up's (lib-libvirt.sh)
system_libvirtd_start "$user" || fail "no system libvirtd for $user"
[ -n "$started_libvirtd" ] || note "the running libvirtd is not restarted by this test: that check is skipped"

# ---- session bus and sluice-service as the test user ----------------------------
libvirt_user_session

start_service() {
        "${as_user[@]}" SLUICE_FS="$work/bin/sluice-fs" SLUICE_LIBVIRT_URIS=qemu:///session,qemu:///system \
                G_MESSAGES_DEBUG="${SLUICE_DEBUG:-}" "$work/bin/sluice-service" >>"$work/service.log" 2>&1 &
        service_pid=$!
        wait_for 60 runu gdbus introspect --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 >/dev/null 2>&1
}

# D-Bus calls wait generously (a loaded machine is slow); the service itself
# answers calls that wait on libvirtd within 20 s (SLUICE_VM_ANSWER_TIMEOUT_S)
call() { # OBJECT METHOD ARGS… — prints the reply; errors on stderr
        local obj=$1 method=$2; shift 2
        runu gdbus call --session --timeout 90 -d org.sluice.Sluice1 -o "$obj" -m "$method" "$@"
}
prop() { # OBJECT INTERFACE NAME — prints the value, unquoted
        call "$1" org.freedesktop.DBus.Properties.Get "$2" "$3" 2>/dev/null |
                sed -e "s/^(<//; s/>,)\$//; s/^'//; s/'\$//"
}
vm_path() { # NAME → object path of its Vm, once the service knows it
        call /org/sluice/Sluice1 org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null |
                grep -o "'/org/sluice/Sluice1/vm/[0-9a-f]*': {'org.sluice.Sluice1.Vm': {[^}]*'Name': <'$1'>" |
                sed "s/^'\([^']*\)'.*/\1/"
}
has_vm() { [ -n "$(vm_path "$1")" ]; }
count() { grep -c "$2" "$1" 2>/dev/null || true; }
more_than() { [ "$(count "$1" "$2")" -gt "$3" ]; }
# the guest's latest round has unmounted (guest-workload.sh prints IDLE after its read)
guest_idle() { grep -aE '^(PASS read|IDLE) ' "$1" 2>/dev/null | tail -n 1 | grep -q '^IDLE'; }
has_vm_state() { [ "$(prop "$1" org.sluice.Sluice1.Vm State)" = "$2" ]; }
has_share_state() { # OBJECT STATE…
        local state; state=$(prop "$1" org.sluice.Sluice1.Share State); shift
        for s in "$@"; do [ "$state" = "$s" ] && return 0; done
        return 1
}

# ---- guests ---------------------------------------------------------------------
cp "$image/vmlinux" "$work/vmlinux"
"$top/tests/guest/mkcpio.sh" "$work/workload.cpio" "$here/guest-workload.sh:/workload.sh" || exit 1
cat "$image/initrd.cpio" "$work/workload.cpio" > "$work/initrd.cpio"
chmod 644 "$work/vmlinux" "$work/initrd.cpio"

# domain_xml NAME OPTIONS… — the definition of test VM NAME (tests/domain-xml.sh
# OPTIONS), booting the suite's kernel and initramfs, its console in vm-NAME/
domain_xml() {
        local name=$1; shift
        mkdir -p "$work/vm-$name"
        : > "$work/vm-$name/console.log"
        chmod 777 "$work/vm-$name"
        "$top/tests/domain-xml.sh" --kernel "$work/vmlinux" --initrd "$work/initrd.cpio" \
                --console "$work/vm-$name/console.log" "$@" "$name"
}
WIN11="<libosinfo:libosinfo xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'><libosinfo:os id='http://microsoft.com/win/11'/></libosinfo:libosinfo>"
define() { # URI NAME XML
        echo "$3" > "$work/$2.xml"
        chmod 644 "$work/$2.xml"
        # left behind by a run that was killed (this one holds the lock)
        if vsh "$1" dominfo "$2" >/dev/null 2>&1; then
                vsh "$1" destroy "$2" >/dev/null 2>&1
                vsh "$1" undefine "$2" >/dev/null 2>&1
        fi
        vsh "$1" define "$work/$2.xml" >/dev/null || return 1
        domains+=("$1|$2")
}
console() { echo "$work/vm-$1/console.log"; }
boot() { # URI NAME — start and wait until the workload is up
        local before; before=$(count "$(console "$2")" READY)
        local start; start=$(date +%s.%N)
        vsh "$1" start "$2" >/dev/null || return 1
        wait_for 180 more_than "$(console "$2")" READY "$before" || return 1
        note "$2 booted to its workload in $(since "$start") s"
}
guest_failed() { grep FAIL "$(console "$1")"; }

share_dir=$work/share
mkdir -p "$share_dir"
echo "hello from the host" > "$share_dir/hello.txt"
chown -R "$user:" "$share_dir"

add_share() { # DIR VM TAG → object path
        call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.AddShare "$1" "$2" "{'tag': <'$3'>}" |
                sed -n "s/^(objectpath '\(.*\)',)\$/\1/p"
}

start_service || fail "sluice-service did not come up"
note "sluice-service is up"

# ---- A: live attach, guest reads and writes -------------------------------------------
A=sluice-lvt-a
define qemu:///system $A "$(domain_xml $A --tag docs)" || fail "define $A"
boot qemu:///system $A || fail "$A did not boot"
wait_for 20 has_vm $A || fail_later "no Vm object for $A"
vmA=$(vm_path $A)
[ "$(prop "$vmA" org.sluice.Sluice1.Vm State)" = running ] && [ "$(prop "$vmA" org.sluice.Sluice1.Vm SharedMemory)" = true ] &&
        [ "$(prop "$vmA" org.sluice.Sluice1.Vm Uri)" = qemu:///system ] && pass "Vm object: running, shared memory, qemu:///system" ||
        fail_later "Vm object properties: $(call "$vmA" org.freedesktop.DBus.Properties.GetAll org.sluice.Sluice1.Vm)"

shareA=$(add_share "$share_dir" $A docs)
[ -n "$shareA" ] || fail "AddShare"
call "$shareA" org.sluice.Sluice1.Share.Start >/dev/null || fail_later "Share.Start"
wait_for 10 has_share_state "$shareA" running attached || true
t_attach=$(date +%s.%N)
hint=$(call "$shareA" org.sluice.Sluice1.Share.Attach 2>&1)
note "Share.Attach took $(since "$t_attach") s: $hint"
case $hint in *"mount -t virtiofs docs"*) pass "attach returns the Linux mount hint" ;; *) fail_later "attach: $hint" ;; esac
[ "$(stat -c %U "$(prop "$shareA" org.sluice.Sluice1.Share SocketPath)")" = "$user" ] || fail_later "socket not owned by $user"
getfacl -p "$(prop "$shareA" org.sluice.Sluice1.Share SocketPath)" 2>/dev/null | grep -q "^user:libvirt-qemu:rw-" &&
        pass "socket ACL grants rw to libvirt-qemu only" || fail_later "no ACL for libvirt-qemu on the socket"
socket_dir=$(dirname "$(prop "$shareA" org.sluice.Sluice1.Share SocketPath)")
qemu_acl() { getfacl -p "$1" 2>/dev/null | grep "^user:libvirt-qemu:"; }
# the sockets' folder is outside the runtime folder, which libvirt-qemu never enters
# (its other sockets, pipewire-0 and such, rely on its 0700: socket-dir.h)
case $socket_dir in "$work/run"*) fail_later "the socket is in the runtime folder: $socket_dir" ;; esac
[ -z "$(qemu_acl "$work/run")" ] && [ "$(qemu_acl "$socket_dir")" = "user:libvirt-qemu:--x" ] &&
        ! runuser -u libvirt-qemu -- test -x "$work/run" &&
        pass "$(basename "$socket_dir")/: search-only ACL for libvirt-qemu; the runtime folder: none, closed to it" ||
        fail_later "folder ACLs after attach: run: '$(qemu_acl "$work/run")' $(basename "$socket_dir"): '$(qemu_acl "$socket_dir")'"
# the worker serves libvirt-qemu's connection and no other user's (sluice-fs --allow-peer-uid)
# the worker of share A, found by its socket (the service hands it the folder
# opened, --shared-dir-fd: no path on its command line)
sockA=$(prop "$shareA" org.sluice.Sluice1.Share SocketPath)
worker_of_A() { pgrep -u "$user" -f "$work/bin/sluice-fs --socket-path=$sockA( |\$)" | head -1; }
wpid=$(worker_of_A)
[ -n "$wpid" ] && tr '\0' ' ' < "/proc/$wpid/cmdline" | grep -q -- "--allow-peer-uid=$(id -u libvirt-qemu) " &&
        pass "the worker accepts a frontend of libvirt-qemu only (--allow-peer-uid)" ||
        fail_later "worker's command line: $([ -n "$wpid" ] && tr '\0' ' ' < "/proc/$wpid/cmdline")"
if wait_for 30 more_than "$(console $A)" "PASS read" 0 && wait_for 10 more_than "$(console $A)" "PASS write" 0; then
        ls "$share_dir"/guest-*-0.txt >/dev/null 2>&1 && [ "$(stat -c %U "$share_dir"/guest-*-0.txt)" = "$user" ] &&
                pass "guest read the host file and wrote one back (owned by $user)" ||
                fail_later "guest's file missing or owned by $(stat -c %U "$share_dir"/guest-*-0.txt 2>/dev/null)"
else
        fail_later "guest did not read the share: $(guest_failed $A)"
fi

# ---- another QEMU of libvirt-qemu tries A's socket -------------------------------------------
# Every system VM's QEMU runs as libvirt-qemu: the user check lets any of them
# in.  The service names A's QEMU (libvirt's pid file) to the worker before the
# plug; another process of that user (the test VMM, as a second VM's QEMU
# would) is refused and the share's user hears of it, while A keeps its share.
qemu_pid=$(cat "/run/libvirt/qemu/$A.pid" 2>/dev/null)
if [ -n "$qemu_pid" ] && grep -q "sluice-fs\[docs\]: .*accepting a frontend from process $qemu_pid only" "$work/service.log"; then
        pass "before the plug the worker was told A's QEMU is process $qemu_pid (libvirt's pid file)"
else
        fail_later "the worker was not told A's QEMU (pid ${qemu_pid:-unknown}): $(grep -a 'accepting a frontend' "$work/service.log" | tail -n 2)"
fi
if [ -x "$vmm" ]; then
        cp "$vmm" "$work/bin/sluice-test-vmm" && chmod 755 "$work/bin/sluice-test-vmm"
        refused_before=$(count "$work/service.log" "Another program (process")
        out=$(runuser -u libvirt-qemu -- "$work/bin/sluice-test-vmm" --timeout=5000 --socket "$sockA" ls 2>&1)
        rc=$?
        if [ $rc != 0 ] && wait_for 10 more_than "$work/service.log" "Another program (process" "$refused_before"; then
                pass "another process of libvirt-qemu is refused: $(grep -a 'docs: Another program' "$work/service.log" | tail -n 1)"
        else
                fail_later "another process of libvirt-qemu on A's socket: exit $rc ($out); service log: $(grep -a 'refus' "$work/service.log" | tail -n 2)"
        fi
        [ "$(worker_of_A)" = "$wpid" ] && has_share_state "$shareA" attached &&
                pass "A's worker serves on and the share stays attached" ||
                fail_later "after the refusal: worker $(worker_of_A) (was $wpid), state $(prop "$shareA" org.sluice.Sluice1.Share State)"
else
        note "SKIP another QEMU of libvirt-qemu: no test VMM at $vmm"
fi

# ---- tag uniqueness: a second share with the same tag is refused ---------------------------
mkdir -p "$work/share-dup" && chown "$user:" "$work/share-dup"
dup=$(call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.AddShare "$work/share-dup" $A "{'tag': <'docs'>}" 2>&1)
case $dup in *TagInUse*|*AlreadyShared*) pass "same tag twice in one VM refused: ${dup#*Error.}" ;;
        *objectpath*) dupshare=$(echo "$dup" | sed -n "s/^(objectpath '\(.*\)',)\$/\1/p")
                err=$(call "$dupshare" org.sluice.Sluice1.Share.Attach 2>&1)
                case $err in *TagInUse*) pass "same tag twice in one VM refused at attach" ;; *) fail_later "duplicate tag: $err" ;; esac
                call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$dupshare" >/dev/null ;;
        *) fail_later "duplicate tag: $dup" ;; esac

# ---- detach ----------------------------------------------------------------------------
call "$shareA" org.sluice.Sluice1.Share.Detach >/dev/null || fail_later "Share.Detach"
wait_for 15 more_than "$(console $A)" GONE 0 && ! vsh qemu:///system dumpxml $A | grep -c "<filesystem" >/dev/null &&
        pass "detach: the device left the guest and the live definition" || fail_later "detach did not remove the device"
# the last (only) system-mode share is detached: the entries Sluice added go
if [ -z "$(qemu_acl "$work/run")" ] && [ -z "$(qemu_acl "$socket_dir")" ] &&
   ! getfacl -p "$work/run" "$socket_dir" 2>/dev/null | grep -q "^mask::"; then
        pass "detach: libvirt-qemu's ACL entry on $(basename "$socket_dir")/ is gone, its ACL as before"
else
        fail_later "ACLs after detach: $(getfacl -p "$work/run" "$socket_dir" 2>&1 | tr '\n' ' ')"
fi

# ---- stop and start: the share comes back -------------------------------------------------
call "$shareA" org.sluice.Sluice1.Share.Attach >/dev/null || fail_later "re-attach"
wait_for 30 more_than "$(console $A)" "PASS read" 1 || fail_later "re-attach: guest did not read"
vsh qemu:///system destroy $A >/dev/null
wait_for 10 has_vm_state "$vmA" shutoff && pass "Vm State follows a stop" || fail_later "Vm State after destroy: $(prop "$vmA" org.sluice.Sluice1.Vm State)"
reads=$(count "$(console $A)" "PASS read")
boot qemu:///system $A || fail_later "$A did not boot again"
wait_for 40 more_than "$(console $A)" "PASS read" "$reads" && pass "VM stopped and started: share attached again, guest reads" ||
        fail_later "no share after restart: state $(prop "$shareA" org.sluice.Sluice1.Share State) $(prop "$shareA" org.sluice.Sluice1.Share Error)"

# ---- worker killed with SIGKILL while attached ------------------------------------------------
# The next worker takes the same device up from the store the service kept
# (the guest sees no unplug: no GONE); then a detach and an attach go
# through the resumed worker: the device leaves, a new one comes, and the
# guest reads through it.  (Before resuming, a request in flight to the dead
# worker — an idle guest's umount DESTROY — left virtio-fs unable to let
# the device go until the VM reset.)
wait_for 10 has_share_state "$shareA" attached || true
wait_for 60 guest_idle "$(console $A)" ||
        fail_later "the guest did not finish its round before the SIGKILL test"
wpid=$(worker_of_A)
if [ -n "$wpid" ]; then
        reads=$(count "$(console $A)" "PASS read") gone=$(count "$(console $A)" "^GONE ")
        resumed=$(count "$work/service.log" "sluice-fs for docs resumed in")
        kill -KILL "$wpid"
        if wait_for 60 more_than "$work/service.log" "sluice-fs for docs resumed in" "$resumed" &&
           [ "$(count "$(console $A)" "^GONE ")" = "$gone" ] && has_share_state "$shareA" attached; then
                pass "worker SIGKILLed: the next one resumed the same device, no unplug in the guest"
        else
                fail_later "no resume after SIGKILL: $(prop "$shareA" org.sluice.Sluice1.Share State) $(prop "$shareA" org.sluice.Sluice1.Share Error); $(grep -a 'sluice-fs for docs' "$work/service.log" | tail -n 2)"
        fi
        call "$shareA" org.sluice.Sluice1.Share.Detach >/dev/null || fail_later "Share.Detach after the resume"
        wait_for 30 more_than "$(console $A)" "^GONE " "$gone" || fail_later "the device did not leave after the resume"
        call "$shareA" org.sluice.Sluice1.Share.Attach >/dev/null || fail_later "Share.Attach after the resume"
        if wait_for 60 more_than "$(console $A)" "PASS read" "$reads"; then
                pass "after the resume: detached and attached again, the guest reads through the resumed worker"
        else
                fail_later "no read after detach and attach: $(prop "$shareA" org.sluice.Sluice1.Share State) $(prop "$shareA" org.sluice.Sluice1.Share Error)"
        fi
else
        fail_later "no sluice-fs worker process found"
fi

# ---- sluice-service SIGKILLed while attached: the VM keeps its share ----------------------------
# The worker serving the VM outlives the service, gives up its socket and
# serves on (service/worker-orphans.h); the restarted service finds the share
# (the device on its socket is still in the VM) and starts its own worker on
# the socket; unplugging the old device ends the old worker, and a re-plug
# reaches the new one.
wait_for 10 has_share_state "$shareA" attached || true
wait_for 60 guest_idle "$(console $A)" || fail_later "the guest did not finish its round before the service SIGKILL"
sockA=$(prop "$shareA" org.sluice.Sluice1.Share SocketPath)
orphan=$(worker_of_A)
listening() { grep -c " 00010000 .* $1\$" /proc/net/unix 2>/dev/null || true; }
listeners_are() { [ "$(listening "$1")" = "$2" ]; }
kill -KILL "$service_pid"; wait "$service_pid" 2>/dev/null
if wait_for 30 listeners_are "$sockA" 0 && [ -n "$orphan" ] && kill -0 "$orphan" 2>/dev/null; then
        pass "service SIGKILLed: the worker serving $A lives on and gave up its socket"
else
        fail_later "after the service's SIGKILL: worker '$orphan' alive: $(kill -0 "$orphan" 2>/dev/null && echo yes || echo no), $(listening "$sockA") listener(s)"
fi
start_service || fail_later "sluice-service did not come up again"
if wait_for 30 has_share_state "$shareA" running attached && wait_for 30 listeners_are "$sockA" 1 &&
   kill -0 "$orphan" 2>/dev/null; then
        pass "restarted service: the share is back, one worker listens on its socket, the old one still serves $A"
else
        fail_later "restarted service: share $(prop "$shareA" org.sluice.Sluice1.Share State), $(listening "$sockA") listener(s)"
fi
reads=$(count "$(console $A)" "PASS read")
call "$shareA" org.sluice.Sluice1.Share.Attach >/dev/null || fail_later "Attach after the restart (device already in $A)"
call "$shareA" org.sluice.Sluice1.Share.Detach >/dev/null || fail_later "Detach after the restart"
wait_for 30 pid_gone "$orphan" && pass "the old worker exited once its device was unplugged" ||
        fail_later "the old worker $orphan outlived its device"
call "$shareA" org.sluice.Sluice1.Share.Attach >/dev/null || fail_later "re-attach after the restart"
wait_for 60 more_than "$(console $A)" "PASS read" "$reads" && pass "re-plugged: $A reads through the new service's worker" ||
        fail_later "no read after the re-plug: $(prop "$shareA" org.sluice.Sluice1.Share State) $(prop "$shareA" org.sluice.Sluice1.Share Error)"

# ---- libvirtd restarted: tracking resumes ---------------------------------------------------
if [ -n "$started_libvirtd" ]; then
        again=$(count "$work/service.log" "libvirt qemu:///system connected again")
        kill "$started_libvirtd"; wait "$started_libvirtd" 2>/dev/null
        system_libvirtd_launch "$user" || fail_later "libvirtd did not restart"
        wait_for 60 more_than "$work/service.log" "libvirt qemu:///system connected again" "$again" ||
                fail_later "the service did not reconnect to the restarted libvirtd"
        vsh qemu:///system destroy $A >/dev/null
        wait_for 20 has_vm_state "$vmA" shutoff && pass "libvirtd restarted: the service still follows the VM" ||
                fail_later "after a libvirtd restart the Vm State stayed $(prop "$vmA" org.sluice.Sluice1.Vm State)"
        reads=$(count "$(console $A)" "PASS read")
        boot qemu:///system $A && wait_for 40 more_than "$(console $A)" "PASS read" "$reads" &&
                pass "after the libvirtd restart a started VM gets its share" || fail_later "no share after libvirtd restart"
fi

# ---- someone else unplugs the device: the share notices ----------------------------------------
wait_for 10 has_share_state "$shareA" attached || fail_later "share not attached before the outside unplug"
alias=$(vsh qemu:///system dumpxml $A | sed -n "/<filesystem/,/<\/filesystem>/s/.*<alias name='\([^']*\)'.*/\1/p" | head -1)
gone=$(count "$(console $A)" GONE)
if [ -n "$alias" ] && vsh qemu:///system detach-device-alias $A "$alias" --live >/dev/null; then
        # the service hears it from the VM manager's device-removed signal
        if wait_for 15 more_than "$(console $A)" GONE "$gone" && wait_for 10 has_share_state "$shareA" running; then
                pass "device unplugged outside Sluice: the share is back to running"
        else
                fail_later "unplug outside Sluice not noticed: state $(prop "$shareA" org.sluice.Sluice1.Share State)"
        fi
else
        fail_later "no device alias to unplug (${alias:-none})"
fi
vsh qemu:///system destroy $A >/dev/null 2>&1
call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareA" >/dev/null

# ---- no shared memory; Windows hint after EnableSharedMemory ------------------------------------------
B=sluice-lvt-b
define qemu:///system $B "$(domain_xml $B --tag docsb --no-shared-memory --metadata "$WIN11")" || fail_later "define $B"
boot qemu:///system $B || fail_later "$B did not boot"
wait_for 20 has_vm $B || fail_later "no Vm object for $B: $(call /org/sluice/Sluice1 org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>&1)"
vmB=$(vm_path $B)
[ "$(prop "$vmB" org.sluice.Sluice1.Vm SharedMemory)" = false ] && [ "$(prop "$vmB" org.sluice.Sluice1.Vm Os)" = win11 ] &&
        pass "Vm object: no shared memory, Os win11" || fail_later "Vm $B: $(call "$vmB" org.freedesktop.DBus.Properties.GetAll org.sluice.Sluice1.Vm)"
shareB=$(add_share "$share_dir" $B docsb)
call "$shareB" org.sluice.Sluice1.Share.Start >/dev/null
err=$(call "$shareB" org.sluice.Sluice1.Share.Attach 2>&1)
case $err in *org.sluice.Sluice1.Error.NoSharedMemory*EnableSharedMemory*) pass "attach without shared memory: NoSharedMemory, says what to do" ;;
        *) fail_later "attach without shared memory: $err" ;; esac
if [ -n "$started_libvirtd" ]; then
        # a stopped libvirtd must not freeze the service: stop it with a call in
        # flight, and keep it stopped until the service has answered others
        esm_before=$(count "$work/service.log" "Enabling shared memory in the definition of $B")
        kill -STOP "$started_libvirtd"
        call "$vmB" org.sluice.Sluice1.Vm.EnableSharedMemory > "$work/esm.out" 2>&1 &
        esm_pid=$!
        if wait_for 30 more_than "$work/service.log" "Enabling shared memory in the definition of $B" "$esm_before"; then
                t_list=$(date +%s.%N)
                if timeout 8 "${as_user[@]}" "$work/bin/sluicectl" list >/dev/null 2>&1 &&
                   [ "$(timeout 8 "${as_user[@]}" gdbus call --session --timeout 8 -d org.sluice.Sluice1 -o "$vmB" \
                        -m org.freedesktop.DBus.Properties.Get org.sluice.Sluice1.Vm Name 2>/dev/null)" = "(<'$B'>,)" ]; then
                        if kill -0 "$esm_pid" 2>/dev/null; then
                                pass "libvirtd stopped, EnableSharedMemory in flight: sluicectl list and a property answered in $(since "$t_list") s"
                        else
                                fail_later "EnableSharedMemory did not wait for the stopped libvirtd: $(cat "$work/esm.out")"
                        fi
                else
                        fail_later "the service did not answer while libvirtd was stopped"
                fi
        else
                fail_later "EnableSharedMemory did not reach the service: $(cat "$work/esm.out")"
        fi
        system_libvirtd_resume "$user" || fail_later "libvirtd did not run again after SIGCONT"
        wait "$esm_pid"
        msg=$(cat "$work/esm.out")
else
        note "libvirtd not started by this test: the stopped-libvirtd check is skipped"
        msg=$(call "$vmB" org.sluice.Sluice1.Vm.EnableSharedMemory 2>&1)
fi
case $msg in *"next boot"*) pass "EnableSharedMemory: $msg" ;; *) fail_later "EnableSharedMemory: $msg" ;; esac
vsh qemu:///system dumpxml --inactive $B | grep -c "<access mode='shared'/>" >/dev/null &&
        vsh qemu:///system dumpxml --inactive $B | grep -c "microsoft.com/win/11" >/dev/null || fail_later "persistent definition not rewritten"
vsh qemu:///system destroy $B >/dev/null
boot qemu:///system $B || fail_later "$B did not boot with shared memory"
if wait_for 40 more_than "$(console $B)" "PASS read" 0; then
        pass "after EnableSharedMemory and a restart the share works"
else
        fail_later "share on $B after EnableSharedMemory: $(prop "$shareB" org.sluice.Sluice1.Share State) $(prop "$shareB" org.sluice.Sluice1.Share Error)"
fi
hint=$(prop "$shareB" org.sluice.Sluice1.Share GuestHint)
case $hint in *WinFsp*VirtIO-FS*Automatic*drive*) pass "Windows guest hint: $hint" ;; *) fail_later "Windows hint: $hint" ;; esac
if [ -n "$started_libvirtd" ]; then
        # libvirtd stalls for longer than a D-Bus caller waits: the caller still
        # gets an answer in time (a named error), and the service follows the VM
        # once libvirtd runs again (keepalive closes a stalled connection; the
        # service reconnects)
        kill -STOP "$started_libvirtd"
        t_stall=$(date +%s.%N)
        err=$(call "$vmB" org.sluice.Sluice1.Vm.EnableSharedMemory 2>&1)
        took=$(since "$t_stall")
        system_libvirtd_resume "$user" || fail_later "libvirtd did not run again after SIGCONT"
        case $err in
        *org.sluice.Sluice1.Error.Libvirt*[Tt]"ry again"*)
                if awk -v t="$took" 'BEGIN { exit !(t < 25) }'; then
                        pass "libvirtd stalled: EnableSharedMemory answered in $took s: ${err#*Error.}"
                else
                        fail_later "libvirtd stalled: the answer came after $took s (D-Bus callers give up at 25 s)"
                fi ;;
        *) fail_later "libvirtd stalled: EnableSharedMemory: $err (after $took s)" ;;
        esac
        vsh qemu:///system destroy $B >/dev/null
        wait_for 90 has_vm_state "$vmB" shutoff && pass "after the stall the service still follows the VM" ||
                fail_later "after the stall the Vm State stayed $(prop "$vmB" org.sluice.Sluice1.Vm State)"
fi
vsh qemu:///system destroy $B >/dev/null 2>&1
call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareB" >/dev/null

# ---- no free PCIe root port: the named error, AddHotplugSlots, restart → attached ------------------
C=sluice-lvt-c
slots_of() { prop "$1" org.sluice.Sluice1.Vm HotplugSlots | sed -n 's/^uint32 //p'; }
has_slots() { [ "$(slots_of "$1")" = "$2" ]; }
counted() { [ -n "$(slots_of "$1")" ] && [ "$(slots_of "$1")" != 4294967295 ]; }
saved_ports() { vsh qemu:///system dumpxml --inactive "$1" | grep -c "model='pcie-root-port'"; }
slot_dir() { # TAG → a folder of its own (one folder is shared with a VM once)
        mkdir -p "$work/slots/$1" && cp "$share_dir/hello.txt" "$work/slots/$1/" &&
                chown -R "$user:" "$work/slots" && echo "$work/slots/$1"
}
# no spare root ports of its own: libvirt adds those its devices (USB, balloon)
# take and one more; shares use that up, as a user's hot-plugged folders would
define qemu:///system $C "$(domain_xml $C --tag slotc --root-ports 0)" || fail_later "define $C"
boot qemu:///system $C || fail_later "$C did not boot"
wait_for 20 has_vm $C || fail_later "no Vm object for $C"
vmC=$(vm_path $C)
wait_for 20 counted "$vmC" || fail_later "Vm.HotplugSlots of $C not counted: $(prop "$vmC" org.sluice.Sluice1.Vm HotplugSlots)"
# shares are plugged in until one is refused: the spare ports are used up
fillers=() full=
for i in 1 2 3 4 5; do
        f=$(add_share "$(slot_dir "fill$i")" $C "fill$i")
        call "$f" org.sluice.Sluice1.Share.Start >/dev/null
        wait_for 10 has_share_state "$f" running attached failed || true
        if ! call "$f" org.sluice.Sluice1.Share.Attach >/dev/null 2>&1; then
                call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$f" >/dev/null
                full=1
                break
        fi
        fillers+=("$f")
done
note "$C took ${#fillers[@]} share(s) before one was refused"
[ -n "$full" ] || fail_later "$C took five shares: its spare root ports were not used up"
wait_for 20 has_slots "$vmC" 0 && pass "Vm.HotplugSlots once the spare root ports are used: 0" ||
        fail_later "Vm.HotplugSlots of $C: $(slots_of "$vmC")"
# the share the guest mounts (its tag is on the kernel command line)
shareC=$(add_share "$(slot_dir slotc)" $C slotc)
call "$shareC" org.sluice.Sluice1.Share.Start >/dev/null
wait_for 10 has_share_state "$shareC" running attached failed || true
err=$(call "$shareC" org.sluice.Sluice1.Share.Attach 2>&1)
case $err in
*org.sluice.Sluice1.Error.NoHotplugSlot*"no free PCIe root port"*"add-slots"*"next start"*"Add Hardware"*)
        pass "attach without a free root port: NoHotplugSlot, says what to do" ;;
*) fail_later "attach without a free root port: $err" ;;
esac
case $(prop "$shareC" org.sluice.Sluice1.Share Error) in
*"no free PCIe root port"*) pass "the share's Error says the VM has no free root port" ;;
*) fail_later "the share's Error: $(prop "$shareC" org.sluice.Sluice1.Share Error)" ;;
esac
err=$(call "$vmC" org.sluice.Sluice1.Vm.AddHotplugSlots 17 2>&1)
case $err in *org.sluice.Sluice1.Error.InvalidArgument*) pass "AddHotplugSlots 17: refused" ;;
        *) fail_later "AddHotplugSlots 17: $err" ;; esac
ports_before=$(saved_ports $C)
added=$(call "$vmC" org.sluice.Sluice1.Vm.AddHotplugSlots 0 2>&1)
ports_after=$(saved_ports $C)
if [ "$added" = "(uint32 4,)" ] && [ "$ports_after" = $((ports_before + 4)) ]; then
        pass "AddHotplugSlots 0: 4 root ports added to the saved definition ($ports_before → $ports_after)"
else
        fail_later "AddHotplugSlots: $added; saved definition's root ports $ports_before → $ports_after"
fi
# the running VM is not changed: still no place until it restarts
has_slots "$vmC" 0 || fail_later "HotplugSlots changed before a restart: $(slots_of "$vmC")"
reads=$(count "$(console $C)" "PASS read")
vsh qemu:///system destroy $C >/dev/null
boot qemu:///system $C || fail_later "$C did not boot with the new root ports"
# every share is plugged in at the start: the fillers and slotc, one port each
if wait_for 20 has_share_state "$shareC" attached; then
        pass "after AddHotplugSlots and a restart the share attaches"
else
        fail_later "share on $C after AddHotplugSlots: $(prop "$shareC" org.sluice.Sluice1.Share State) $(prop "$shareC" org.sluice.Sluice1.Share Error)"
fi
wait_for 40 more_than "$(console $C)" "PASS read" "$reads" || fail_later "the guest did not read after the restart: $(guest_failed $C)"
wait_for 20 has_slots "$vmC" 3 && pass "Vm.HotplugSlots after the restart: 3 (4 added, 1 taken by the refused share)" ||
        fail_later "Vm.HotplugSlots after the restart: $(slots_of "$vmC")"
vsh qemu:///system destroy $C >/dev/null 2>&1
for f in "$shareC" "${fillers[@]}"; do call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$f" >/dev/null; done
# an i440fx ("pc") VM plugs into its PCI bus: root ports do not help, and it says so
P=sluice-lvt-pc
define qemu:///system $P "<domain type='qemu'><name>$P</name><memory unit='MiB'>128</memory>
  <os><type arch='x86_64' machine='pc'>hvm</type></os><devices/></domain>" || fail_later "define $P"
wait_for 20 has_vm $P || fail_later "no Vm object for $P"
vmP=$(vm_path $P)
wait_for 20 counted "$vmP" && [ "$(slots_of "$vmP")" -gt 0 ] && pass "Vm.HotplugSlots of an i440fx VM: $(slots_of "$vmP") free PCI slots" ||
        fail_later "Vm.HotplugSlots of $P: $(prop "$vmP" org.sluice.Sluice1.Vm HotplugSlots)"
err=$(call "$vmP" org.sluice.Sluice1.Vm.AddHotplugSlots 0 2>&1)
case $err in *org.sluice.Sluice1.Error.Unsupported*i440fx*) pass "AddHotplugSlots on an i440fx VM: Unsupported, says why" ;;
        *) fail_later "AddHotplugSlots on an i440fx VM: $err" ;; esac
vsh qemu:///system dumpxml --inactive $P | grep -q "pcie-root-port" && fail_later "root ports were added to the i440fx VM $P"

# ---- qemu:///session: the test user's own libvirtd --------------------------------------------------
S=sluice-lvt-s
if define qemu:///session $S "$(domain_xml $S --tag docss)" && chown "$user:" "$work/vm-$S" "$(console $S)"; then
        boot qemu:///session $S || fail_later "$S did not boot"
        wait_for 30 has_vm $S || fail_later "no Vm object for the session VM"
        shareS=$(add_share "$share_dir" $S docss)
        call "$shareS" org.sluice.Sluice1.Share.Start >/dev/null
        wait_for 10 has_share_state "$shareS" running attached || true
        call "$shareS" org.sluice.Sluice1.Share.Attach >/dev/null || fail_later "attach to the session VM"
        wait_for 30 more_than "$(console $S)" "PASS read" 0 && pass "qemu:///session VM: attached, guest reads" ||
                fail_later "session VM: $(guest_failed $S)"
        vsh qemu:///session destroy $S >/dev/null 2>&1
        call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareS" >/dev/null
else
        fail_later "cannot define a qemu:///session domain as $user"
fi

# ---- libvirt launches sluice-fs itself (<binary path=…>) --------------------------------------------
L=sluice-lvt-l
lv_dev="<filesystem type='mount' accessmode='passthrough'><driver type='virtiofs' queue='1024'/>
  <binary path='$work/bin/sluice-fs'/><source dir='$share_dir'/><target dir='lv'/></filesystem>"
define qemu:///system $L "$(domain_xml $L --tag lv --device "$lv_dev")" || fail_later "define $L"
if boot qemu:///system $L && wait_for 30 more_than "$(console $L)" "PASS read" 0; then
        pass "libvirt-launched sluice-fs: boots and mounts"
else
        fail_later "libvirt-launched sluice-fs: $(guest_failed $L) $(tail -3 /var/log/libvirt/qemu/$L-fs*-virtiofsd.log 2>/dev/null)"
fi

finish

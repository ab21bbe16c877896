#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-guest.sh [OPTIONS] WORKLOAD.sh — boots the Sluice test guest under QEMU
# with a host folder shared into it, runs WORKLOAD.sh in the guest and checks
# the PASS/FAIL/DONE lines it prints.
#
# Options:
#   --image DIR         guest image directory (built with build-image.sh if
#                       missing or stale; default $SLUICE_GUEST_IMAGE, else
#                       $SLUICE_BUILD_ROOT/tests/guest/image, else ./guest-image)
#   --backend B         sluice (default; $SLUICE_GUEST_BACKEND) — sluice-fs over vhost-user-fs
#                       virtiofsd — QEMU's legacy C virtiofsd (root only) over vhost-user-fs
#                       rust-virtiofsd — the Rust virtiofsd 1.13 that Debian 13 ships
#                         ($SLUICE_RUST_VIRTIOFSD, else fetched by bench/fetch-trixie.sh), run
#                         like sluice-fs as $SLUICE_TEST_USER, with its default namespace sandbox
#                       9p — QEMU's built-in virtio-9p, no daemon
#                       none — no share at all
#   --shared-dir DIR    host folder to share (needed unless --backend none)
#   --tag TAG           mount tag (default "share")
#   --daemon-arg ARG    extra argument for the daemon, repeatable (--readonly, --xattr, -d…)
#   --daemon-as-root    run sluice-fs as root (as libvirt's <binary> route does), not as
#                       $SLUICE_TEST_USER
#   --sluice-fs PATH    default $SLUICE_FS, else $SLUICE_BUILD_ROOT/daemon/sluice-fs
#   --file SRC:DEST     extra file in the guest (see mkcpio.sh), repeatable
#   --env NAME=VALUE    environment variable for the workload, repeatable
#   --timeout SECS      whole run, boot included (default 150)
#   --console FILE      keep the guest console here (default: a temporary file)
#   --daemon-log FILE   keep the daemon's stderr here (default: a temporary file)
#   --mem MIB  --smp N  guest size (default 512, 1)
#   --disk FILE         a raw image as a read-only virtio disk (the guest's /dev/vda;
#                       its driver is virtio_blk, which the workload loads if needed)
#   --queues N          request queues: QEMU's num-request-queues=N, and sluice-fs --queues=N
#                       (default 1; the guest kernel uses them from Linux 6.10 on)
#   --kernel K          6.1 (default: the installed Debian 12 kernel in /boot) or 6.12 (Debian
#                       13's, fetched once by bench/fetch-trixie.sh into $SLUICE_BUILD_ROOT/trixie
#                       or beside the image, and booted from its own image directory IMAGE-6.12)
#   --reboot            a guest reboot or reset restarts the guest (QEMU without
#                       -no-reboot), as in a VM; by default it ends the run
#   --kill-on TEXT      when the console shows TEXT, QEMU is SIGKILLed (a VM killed mid-request),
#                       at most $SLUICE_GUEST_KILLS times (default 10); after each kill the
#                       worker's fd count and VmRSS go into the daemon log
#                       and started again, with the same daemon; a boot that does not show
#                       TEXT ends the run (at most 10 kills).  The console keeps every boot.
#   --quiet             do not echo the console while the guest runs
#   --no-check          do not require DONE / reject FAIL (plain boot: exit status is QEMU's)
#
# The workload always gets SLUICE_TAG, SLUICE_FSTYPE (virtiofs|9p|none) and
# SLUICE_MOUNT (the whole mount command for /mnt) in its environment, and
# /workload-lib.sh (the PASS/FAIL helpers) beside it.
#
# Accelerator: $SLUICE_GUEST_ACCEL = tcg (default) | kvm | auto.  "auto" boots a probe guest
# once with KVM (cached in the image directory as .kvm-probe) and uses KVM only if that
# guest reached /init; a host with /dev/kvm whose guests die (e.g. a paravirtual KVM)
# then falls back to TCG.
#
# The daemon runs as $SLUICE_TEST_USER (via setpriv) when that is set and we are root,
# else as the caller.  After the guest powers off, sluice-fs gets SIGUSR1 (it prints its
# counters to the daemon log after a line "--- run-guest: SIGUSR1 (counters follow) ---"),
# then SIGTERM (the line "--- run-guest: SIGTERM ---" ends them).  Everything started here is killed on exit.
#
# Exit status: 0 when the workload printed DONE and no FAIL line (and the daemon did not
# crash or report a sanitizer error), 1 otherwise, 77 when QEMU or the guest kernel is
# not installed, or a Debian 13 package cannot be had (a test harness skips), 2 on usage errors.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

image=${SLUICE_GUEST_IMAGE:-}
backend=${SLUICE_GUEST_BACKEND:-sluice}
shared_dir='' tag=share timeout=150 console='' daemon_log='' mem=512 smp=1 quiet=0 check=1 reboot=0 as_root=0
queues=1 kernel=6.1 kill_on='' max_kills=${SLUICE_GUEST_KILLS:-10}
sluice_fs=${SLUICE_FS:-${SLUICE_BUILD_ROOT:+$SLUICE_BUILD_ROOT/daemon/sluice-fs}}
daemon_args=() files=() envs=() disks=()
while [ $# -gt 0 ]; do
        case "$1" in
        --image) image=$2; shift ;;
        --backend) backend=$2; shift ;;
        --shared-dir) shared_dir=$2; shift ;;
        --tag) tag=$2; shift ;;
        --daemon-arg) daemon_args+=("$2"); shift ;;
        --daemon-as-root) as_root=1 ;;
        --sluice-fs) sluice_fs=$2; shift ;;
        --file) files+=("$2"); shift ;;
        --env) envs+=("$2"); shift ;;
        --timeout) timeout=$2; shift ;;
        --console) console=$2; shift ;;
        --daemon-log) daemon_log=$2; shift ;;
        --mem) mem=$2; shift ;;
        --smp) smp=$2; shift ;;
        --disk) disks+=("$2"); shift ;;
        --queues) queues=$2; shift ;;
        --kernel) kernel=$2; shift ;;
        --quiet) quiet=1 ;;
        --reboot) reboot=1 ;;
        --kill-on) kill_on=$2; shift ;;
        --no-check) check=0 ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "run-guest: unknown option $1" >&2; usage ;;
        *) break ;;
        esac
        shift
done
[ $# -eq 1 ] || usage
workload=$1
[ -f "$workload" ] || fail "run-guest: no workload script $workload"
case "$backend" in sluice|virtiofsd|rust-virtiofsd|9p|none) ;; *) fail "run-guest: unknown backend $backend" ;; esac
case "$queues" in [1-9]|1[0-6]) ;; *) fail "run-guest: --queues $queues: use a number from 1 to 16" ;; esac
case "$kernel" in 6.1|6.12) ;; *) fail "run-guest: --kernel $kernel: use 6.1 or 6.12" ;; esac
[ "$backend" = none ] || [ -d "$shared_dir" ] || fail "run-guest: --shared-dir must name a directory"
case "$tag" in *[!A-Za-z0-9_.-]*|'') fail "run-guest: tag '$tag': use letters, digits, _ . -" ;; esac

qemu=$(command -v qemu-system-x86_64) || skip "run-guest: qemu-system-x86_64 is not installed"
if [ -z "$image" ]; then
        if [ -n "${SLUICE_BUILD_ROOT:-}" ]; then image=$SLUICE_BUILD_ROOT/tests/guest/image; else image=guest-image; fi
fi
# Debian 13's software (Linux 6.12, Rust virtiofsd) is unpacked here, once.
trixie_cache=${SLUICE_BUILD_ROOT:+$SLUICE_BUILD_ROOT/trixie}
trixie_cache=${trixie_cache:-$(dirname "$image")/trixie}
fetch_trixie() {
        local out status
        out=$("$here/../../bench/fetch-trixie.sh" "$trixie_cache" "$1")
        status=$?
        case $status in
        0) echo "$out" ;;
        77) skip "run-guest: Debian 13's $1 cannot be had here (see the message above)" >&2 ;;
        *) fail "run-guest: fetching Debian 13's $1 failed" ;;
        esac
}
kernel_env=()
if [ "$kernel" = 6.12 ]; then
        kout=$(fetch_trixie kernel) || exit $?
        read -r vmlinuz modroot <<<"$kout"
        image=$image-6.12
        kernel_env=(SLUICE_GUEST_KERNEL="$vmlinuz" SLUICE_GUEST_MODULES="$modroot")
fi
env "${kernel_env[@]}" "$here/build-image.sh" "$image"
case $? in
0) ;;
77) skip "run-guest: no guest kernel or busybox-static" ;;
*) fail "run-guest: building the guest image in $image failed" ;;
esac

# ---- clean-up of everything started below -------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-guest.XXXXXX")
chmod 0755 "$work"
daemon_pid='' qemu_pid='' tail_pid=''
cleanup() {
        local pid
        for pid in $tail_pid $qemu_pid $daemon_pid; do
                kill -KILL "$pid" 2>/dev/null
        done
        for pid in $tail_pid $qemu_pid $daemon_pid; do
                wait "$pid" 2>/dev/null
        done
        rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ -n "$console" ] || console=$work/console.log
[ -n "$daemon_log" ] || daemon_log=$work/daemon.log
: >"$console" && : >"$daemon_log" || fail "run-guest: cannot write the logs"

# ---- the daemon ------------------------------------------------------------------------
as_user=()
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ] && [ "$as_root" = 0 ] &&
   { [ "$backend" = sluice ] || [ "$backend" = rust-virtiofsd ]; }; then
        # setpriv (as_user_prefix) execs the daemon in place: SIGUSR1 reaches it
        as_user_prefix as_user "$SLUICE_TEST_USER"
        chown "$SLUICE_TEST_USER:" "$work"
fi
sock=$work/fs.sock
daemon_cmd=()
case "$backend" in
sluice)
        [ -n "$sluice_fs" ] && [ -x "$sluice_fs" ] || fail "run-guest: no sluice-fs binary (set SLUICE_BUILD_ROOT, SLUICE_FS or --sluice-fs)"
        # The build tree may sit where the test user cannot enter: run a copy then.
        if [ ${#as_user[@]} -gt 0 ] && ! "${as_user[@]}" test -x "$sluice_fs"; then
                install -m 0755 "$sluice_fs" "$work/sluice-fs"
                sluice_fs=$work/sluice-fs
        fi
        # No --tag: QEMU's -device tag= names the share, as libvirt's <target dir> does.
        qarg=(); [ "$queues" = 1 ] || qarg=(--queues="$queues")
        daemon_cmd=("${as_user[@]}" "$sluice_fs" --socket-path="$sock" --shared-dir="$shared_dir"
                    "${qarg[@]}" "${daemon_args[@]}")
        ;;
rust-virtiofsd)
        rust=${SLUICE_RUST_VIRTIOFSD:-}
        [ -n "$rust" ] || rust=$(fetch_trixie virtiofsd) || exit $?
        [ -x "$rust" ] || fail "run-guest: no Rust virtiofsd at $rust"
        # As for sluice-fs: a copy where the test user can reach it (the wrapper is relative).
        if [ ${#as_user[@]} -gt 0 ] && ! "${as_user[@]}" test -x "$rust"; then
                cp -a "$(dirname "$rust")" "$work/rust-virtiofsd"
                chmod -R a+rX "$work/rust-virtiofsd"
                rust=$work/rust-virtiofsd/$(basename "$rust")
        fi
        daemon_cmd=("${as_user[@]}" "$rust" --socket-path="$sock" --shared-dir="$shared_dir"
                    --cache auto "${daemon_args[@]}")
        ;;
virtiofsd)
        [ "$(id -u)" = 0 ] || fail "run-guest: the legacy virtiofsd needs root"
        [ -x /usr/lib/qemu/virtiofsd ] || skip "run-guest: no /usr/lib/qemu/virtiofsd"
        daemon_cmd=(/usr/lib/qemu/virtiofsd --socket-path="$sock" -o source="$shared_dir"
                    -o cache=auto "${daemon_args[@]}")
        ;;
esac
start_daemon() {
        [ ${#daemon_cmd[@]} -gt 0 ] || return 0
        rm -f "$sock"
        # Appending, so that the marker lines written below land after the daemon's own.
        "${daemon_cmd[@]}" </dev/null 2>>"$daemon_log" >&2 &
        daemon_pid=$!
        daemon_ready() { [ -S "$sock" ] || pid_gone "$daemon_pid"; }
        wait_for 10 daemon_ready
        if [ ! -S "$sock" ]; then
                echo "run-guest: the daemon did not create $sock; its log:" >&2
                cat "$daemon_log" >&2
                exit 1
        fi
}
start_daemon

# ---- the initrd: image + workload + extra files ----------------------------------------
case "$backend" in
sluice|virtiofsd|rust-virtiofsd) fstype=virtiofs mountcmd="mount -t virtiofs $tag /mnt" ;;
9p) fstype=9p mountcmd="mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 $tag /mnt" ;;
none) fstype=none mountcmd=true ;;
esac
# The workload's environment travels as /workload.env, which /init sources.
{
        printf 'SLUICE_TAG=%q\nSLUICE_FSTYPE=%q\nSLUICE_MOUNT=%q\n' "$tag" "$fstype" "$mountcmd"
        for e in "${envs[@]}"; do
                [[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || fail "run-guest: --env '$e': use NAME=VALUE"
                printf '%s=%q\n' "${e%%=*}" "${e#*=}"
        done
} >"$work/workload.env"
append="console=ttyS0 quiet panic=-1"
"$here/mkcpio.sh" "$work/extra.cpio" "$workload:/workload.sh" "$work/workload.env:/workload.env" \
        "$here/workload-lib.sh:/workload-lib.sh" \
        "${files[@]}" || fail "run-guest: mkcpio failed"
cat "$image/initrd.cpio" "$work/extra.cpio" >"$work/initrd.cpio"

# ---- accelerator ---------------------------------------------------------------------
qemu_base=("$qemu" -M q35 -m "$mem" -smp "$smp" -display none -monitor none -nic none
           -no-reboot -kernel "$image/vmlinux")
qemu_run=()
for a in "${qemu_base[@]}"; do
        [ "$reboot" = 1 ] && [ "$a" = -no-reboot ] && continue
        qemu_run+=("$a")
done
accel=${SLUICE_GUEST_ACCEL:-tcg}
if [ "$accel" = auto ]; then
        accel=tcg
        if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
                if [ ! -f "$image/.kvm-probe" ]; then
                        printf 'echo KVM-PROBE-OK\n' >"$work/probe.sh"
                        "$here/mkcpio.sh" "$work/probe.cpio" "$work/probe.sh:/workload.sh" &&
                                cat "$image/initrd.cpio" "$work/probe.cpio" >"$work/probe-initrd.cpio"
                        if timeout -k 2 20 "${qemu_base[@]}" -accel kvm -cpu max -initrd "$work/probe-initrd.cpio" \
                                -append 'console=ttyS0 quiet panic=-1' -serial "file:$work/probe.log" \
                                </dev/null >/dev/null 2>&1 && grep -q KVM-PROBE-OK "$work/probe.log"; then
                                echo kvm >"$image/.kvm-probe"
                        else
                                echo tcg >"$image/.kvm-probe"
                        fi
                fi
                accel=$(cat "$image/.kvm-probe")
        fi
fi
case "$accel" in
kvm) accel_args=(-accel kvm -cpu max) ;;
tcg) accel_args=(-accel tcg) ;;
*) fail "run-guest: SLUICE_GUEST_ACCEL=$accel: use tcg, kvm or auto" ;;
esac

# ---- QEMU ------------------------------------------------------------------------------
dev_args=(-object "memory-backend-memfd,id=mem,size=${mem}M,share=on" -numa node,memdev=mem)
case "$backend" in
sluice|virtiofsd|rust-virtiofsd)
        dev_args+=(-chardev "socket,id=c0,path=$sock"
                   -device "vhost-user-fs-pci,chardev=c0,tag=$tag,queue-size=1024,num-request-queues=$queues") ;;
9p)
        ro=; for a in "${daemon_args[@]}"; do [ "$a" = --readonly ] && ro=,readonly=on; done
        dev_args+=(-fsdev "local,id=f0,path=$shared_dir,security_model=none$ro"
                   -device "virtio-9p-pci,fsdev=f0,mount_tag=$tag") ;;
esac
for d in "${disks[@]}"; do
        [ -r "$d" ] || fail "run-guest: --disk $d is not readable"
        dev_args+=(-drive "file=$d,format=raw,if=virtio,readonly=on")
done

# A guest kernel that dies while booting, before /init runs the workload, says nothing
# about the share: QEMU 7.2's multi-threaded TCG sometimes lets a second vCPU run code
# the first is patching (Linux 6.12, 2 vCPUs: "Oops: int3" in sched_clock_cpu, about 1
# boot in 60 here), and a loaded host can fail the guest's timer check.  Such a boot is
# retried once, saying so; a failure after the workload started is never retried.
boot_died() {
        ! grep -q 'sluice-guest: workload starting' "$console" &&
                grep -qE 'Kernel panic|Oops:|IO-APIC \+ timer' "$console"
}
kills=0 attempt=1
: >"$work/killed-boots"
while :; do
        start=$(date +%s.%N)
        "${qemu_run[@]}" "${accel_args[@]}" "${dev_args[@]}" -initrd "$work/initrd.cpio" \
                -append "$append" -serial "file:$console" </dev/null >"$work/qemu.log" 2>&1 &
        qemu_pid=$!
        if [ "$quiet" = 0 ]; then
                tail -n +1 -F --pid="$qemu_pid" "$console" 2>/dev/null &
                tail_pid=$!
        fi
        timed_out=0 killed=0
        deadline=$(( $(date +%s) + timeout ))
        while kill -0 "$qemu_pid" 2>/dev/null; do
                if [ "$(date +%s)" -ge "$deadline" ]; then
                        timed_out=1
                        kill -KILL "$qemu_pid" 2>/dev/null
                        break
                fi
                if [ -n "$kill_on" ] && [ "$kills" -lt "$max_kills" ] && grep -qF -- "$kill_on" "$console"; then
                        killed=1
                        kill -KILL "$qemu_pid" 2>/dev/null
                        break
                fi
                sleep 0.1
        done
        { wait "$qemu_pid"; } 2>/dev/null
        qemu_status=$?
        qemu_pid=
        end=$(date +%s.%N)
        if [ -n "$tail_pid" ]; then
                wait "$tail_pid" 2>/dev/null
                tail_pid=
        fi
        if [ "$killed" = 1 ]; then
                kills=$((kills + 1))
                echo "run-guest: QEMU SIGKILLed ($kills): the console showed '$kill_on'; booting again" >&2
                # QEMU truncates the console file at each start: keep this boot's
                cat "$console" >>"$work/killed-boots"
                : >"$console"
                if [ "$backend" = sluice ] && [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
                        # Once the worker has seen this frontend go (its log says so),
                        # its fds and memory from /proc, for the caller to compare
                        # across kills (guest-kill.sh).
                        session_reset() { [ "$(grep -c 'frontend disconnected; session reset' "$daemon_log")" -ge "$kills" ]; }
                        wait_for 60 session_reset
                        echo "run-guest: after kill $kills: worker fds $(ls "/proc/$daemon_pid/fd" | wc -l)" \
                             "VmRSS $(awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status") KiB" \
                             "maps $(wc -l <"/proc/$daemon_pid/maps")" >>"$daemon_log"
                fi
                if [ -n "$daemon_pid" ] && ! kill -0 "$daemon_pid" 2>/dev/null; then
                        wait "$daemon_pid" 2>/dev/null
                        start_daemon
                fi
                continue
        fi
        [ "$attempt" = 1 ] && [ "$timed_out" = 0 ] && boot_died || break
        attempt=2
        echo "run-guest: the guest kernel died while booting, before the workload ran" \
             "(its console: $console.boot-1); booting once more" >&2
        tr -d '\r' <"$console" | grep -E 'Oops|panic|RIP:' | head -5 >&2
        cp "$console" "$console.boot-1"
        : >"$console"
        # Daemons that exit when their frontend goes (the virtiofsds) start again;
        # sluice-fs --socket-path waits for the next one.
        if [ -n "$daemon_pid" ] && ! kill -0 "$daemon_pid" 2>/dev/null; then
                wait "$daemon_pid" 2>/dev/null
                start_daemon
        fi
done

# ---- the daemon's counters and exit ----------------------------------------------------
daemon_bad=0
if [ -n "$daemon_pid" ]; then
        if [ "$backend" = sluice ] && kill -0 "$daemon_pid" 2>/dev/null; then
                echo "--- run-guest: SIGUSR1 (counters follow) ---" >>"$daemon_log"
                kill -USR1 "$daemon_pid" 2>/dev/null
                sleep 0.5
                echo "--- run-guest: SIGTERM ---" >>"$daemon_log"
        fi
        kill -TERM "$daemon_pid" 2>/dev/null
        if ! wait_for 5 pid_gone "$daemon_pid"; then
                echo "run-guest: FAIL: the daemon did not exit within 5 s of SIGTERM" >&2
                daemon_bad=1
        fi
        kill -KILL "$daemon_pid" 2>/dev/null
        wait "$daemon_pid"
        daemon_status=$?
        daemon_pid=
        # 0, or 143 (killed by the SIGTERM we sent) are fine; a crash (SIGSEGV, SIGABRT from a
        # sanitizer) is not.
        if [ "$daemon_bad" = 0 ] && [ "$daemon_status" != 0 ] && [ "$daemon_status" != 143 ]; then
                echo "run-guest: FAIL: the daemon exited with status $daemon_status" >&2
                daemon_bad=1
        fi
        if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$daemon_log"; then
                echo "run-guest: FAIL: sanitizer report in the daemon log" >&2
                daemon_bad=1
        fi
fi

# ---- verdict ---------------------------------------------------------------------------
if [ -s "$work/killed-boots" ]; then
        cat "$work/killed-boots" "$console" >"$work/all-boots" && cat "$work/all-boots" >"$console"
fi
tr -d '\r' <"$console" >"$work/console.txt"
printf 'run-guest: guest ran %.1f s (%s, backend %s, QEMU status %d)\n' \
        "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$accel" "$backend" "$qemu_status"
fail=0
if [ "$timed_out" = 1 ]; then
        echo "run-guest: FAIL: timed out after ${timeout}s" >&2
        fail=1
fi
if [ "$check" = 1 ]; then
        if grep -q '^FAIL' "$work/console.txt"; then
                echo "run-guest: FAIL: the workload reported failures:" >&2
                grep '^FAIL' "$work/console.txt" >&2
                fail=1
        fi
        if ! grep -q '^DONE$' "$work/console.txt"; then
                echo "run-guest: FAIL: the workload did not print DONE" >&2
                fail=1
        fi
        echo "run-guest: $(grep -c '^PASS' "$work/console.txt") PASS, $(grep -c '^FAIL' "$work/console.txt") FAIL"
elif [ "$qemu_status" != 0 ]; then
        fail=1
fi
[ "$daemon_bad" = 0 ] || fail=1
if [ "$fail" = 1 ]; then
        if [ -s "$work/qemu.log" ]; then echo "--- QEMU:" >&2; cat "$work/qemu.log" >&2; fi
        if [ -s "$daemon_log" ]; then echo "--- daemon log (last 40 lines):" >&2; tail -n 40 "$daemon_log" >&2; fi
        if [ "$quiet" = 1 ]; then echo "--- console:" >&2; cat "$work/console.txt" >&2; fi
        exit 1
fi
exit 0

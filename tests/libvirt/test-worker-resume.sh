#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/test-worker-resume.sh — a real guest keeps its share while
# the share's worker is SIGKILLed again and again: the service relaunches it
# with its fd store and it resumes the same device (no unplug, no remount).
#
# As root, like libvirt.sh: the system libvirtd, sluice-service as
# $SLUICE_TEST_USER on a private session bus, one diskless TCG guest (Linux
# 6.1, busybox) running tests/guest/resume-workload.sh with
# tests/guest/resume-probe.c built static beside it.  Phases (the host starts
# and ends each with GO-/STOP- files in the share):
#   touch  the guest reads hello.txt in a tight loop; one SIGKILL: the loop
#          goes on without an error (a guest that touches the share at once)
#   pause  the same loop, SIGKILLed 20 times: the pause per crash, from the
#          guest's loop (its largest gap between two answered reads around
#          each kill) and from the service's log ("resumed in N ms")
#   work   writes with checksums, reads, stats, ls -R of a tree, creates,
#          renames, removals, one file held open throughout, while the worker
#          is SIGKILLed 20 times at random moments
# Checks: no error from an operation safe to run twice, the final checksums
# exact (the guest's mirror, the host's files), the held file reads the same,
# the EIOs the guest saw = the requests the workers answered EIO ("was in
# flight … answered EIO" in their logs, FORGETs aside) and their total,
# with the dropped FORGETs, is the Stats' "resume-failed"; the <filesystem> of the live domain XML (alias,
# PCI address) is the same before and after; `virsh event` saw no
# device-removed/device-added for the domain; Stats "worker-crashes" counts
# every kill (21 in touch+work, 41 with pause).
#
# The kill moments are random but seeded: the seed is printed; run again
# with SLUICE_RESUME_SEED=N to replay them.  SLUICE_RESUME_PHASES or
# --phases "…" (default "touch work") picks phases; bench/resume-pause.sh runs "pause" and prints
# the figures (SLUICE_RESUME_PAUSE_SPACING: seconds between its kills, 1.5;
# SLUICE_RESUME_KILLS: 20; SLUICE_RESUME_OUT=DIR keeps what the report reads).
# Exit: 0 pass, 1 fail, 77 skip (not root, no QEMU/libvirt/kernel, or a
# sluice-service without the fd store: it must pass --resume to its workers).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}

. "$top/tests/lib.sh"
. "$here/lib-libvirt.sh"
need_root "starts the system libvirtd"
need_tools libvirtd virsh qemu-system-x86_64 dbus-daemon gdbus runuser setpriv flock cc

user=${SLUICE_TEST_USER:-sluice-test}
ensure_user "$user"
phases=${SLUICE_RESUME_PHASES:-touch work}
# --phases "…" (meson's rows: libvirt-worker-resume-touch runs "touch" alone)
if [ "${1:-}" = --phases ] && [ -n "${2:-}" ]; then phases=$2; fi
kills=${SLUICE_RESUME_KILLS:-20}
seed=${SLUICE_RESUME_SEED:-$(( $(date +%s) % 100000 ))}
# the pause phase's kills are this many seconds apart (bench/resume-pause.sh
# spaces them beyond the service's crash-loop window)
pause_spacing=${SLUICE_RESUME_PAUSE_SPACING:-1.5}

libvirt_open "$0" "$@"

work=$(mktemp -d /tmp/sluice-resume.XXXXXX)
chmod 755 "$work"
service_pid= session_bus_pid= events_pid=
domains=()
libvirt_cleanup_more() { [ -z "$events_pid" ] || kill "$events_pid" 2>/dev/null; }
trap libvirt_cleanup EXIT

system_libvirtd_setup tests/libvirt/test-worker-resume.sh || exit 1
vsh() { virsh -q -c qemu:///system "$@"; }
system_libvirtd_start "$user" || fail "no system libvirtd for $user"
libvirt_user_session

call() { # OBJECT METHOD ARGS…
        local obj=$1 method=$2; shift 2
        runu gdbus call --session --timeout 90 -d org.sluice.Sluice1 -o "$obj" -m "$method" "$@"
}
prop() {
        call "$1" org.freedesktop.DBus.Properties.Get "$2" "$3" 2>/dev/null |
                sed -e "s/^(<//; s/>,)\$//; s/^'//; s/'\$//"
}
has_share_state() { local s; s=$(prop "$1" org.sluice.Sluice1.Share State); shift
        for x in "$@"; do [ "$s" = "$x" ] && return 0; done; return 1; }
count() { grep -ac -- "$2" "$1" 2>/dev/null || true; }
more_than() { [ "$(count "$1" "$2")" -gt "$3" ]; }

"${as_user[@]}" SLUICE_FS="$work/bin/sluice-fs" SLUICE_LIBVIRT_URIS=qemu:///system \
        "$work/bin/sluice-service" >>"$work/service.log" 2>&1 &
service_pid=$!
wait_for 60 runu gdbus introspect --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 >/dev/null 2>&1 ||
        fail "sluice-service did not come up"

# ---- the guest: the workload and the probe in an extra cpio ------------------
cc -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -static -o "$work/resume-probe" \
        "$top/tests/guest/resume-probe.c" || fail "cannot build resume-probe.c statically"
cp "$image/vmlinux" "$work/vmlinux"
"$top/tests/guest/mkcpio.sh" "$work/workload.cpio" "$top/tests/guest/resume-workload.sh:/workload.sh" \
        "$work/resume-probe:/bin/resume-probe" || exit 1
cat "$image/initrd.cpio" "$work/workload.cpio" > "$work/initrd.cpio"
chmod 644 "$work/vmlinux" "$work/initrd.cpio"

share=$work/share
mkdir -p "$share/work/tree" "$share/work/names"
echo "hello from the host" > "$share/hello.txt"
for k in 0 1 2 3; do head -c 262144 /dev/urandom > "$share/work/data$k"; done
head -c 65536 /dev/urandom > "$share/work/held"
for d in 1 2 3; do
        mkdir -p "$share/work/tree/d$d/sub"
        for f in 1 2 3 4 5; do echo "d$d f$f" > "$share/work/tree/d$d/f$f"; done
        echo leaf > "$share/work/tree/d$d/sub/leaf"
done
echo a > "$share/work/names/a"
chown -R "$user:" "$share"

A=sluice-resume
mkdir -p "$work/vm"
: > "$work/vm/console.log"
chmod 777 "$work/vm"
console=$work/vm/console.log
"$top/tests/domain-xml.sh" --kernel "$work/vmlinux" --initrd "$work/initrd.cpio" \
        --console "$console" --tag docs "$A" > "$work/$A.xml" || fail "domain-xml.sh"
chmod 644 "$work/$A.xml"
if vsh dominfo "$A" >/dev/null 2>&1; then vsh destroy "$A" >/dev/null 2>&1; vsh undefine "$A" >/dev/null 2>&1; fi
vsh define "$work/$A.xml" >/dev/null || fail "define $A"
domains+=("$A")
# every device event of the domain from now on (the check: none after the plug)
virsh -c qemu:///system event --domain "$A" --all --loop --timestamp > "$work/events.log" 2>&1 &
events_pid=$!
vsh start "$A" >/dev/null || fail "start $A"
wait_for 180 more_than "$console" "^READY" 0 || fail "$A did not boot to its workload"

shareA=$(call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.AddShare "$share" "$A" "{'tag': <'docs'>}" |
        sed -n "s/^(objectpath '\(.*\)',)\$/\1/p")
[ -n "$shareA" ] || fail "AddShare"
call "$shareA" org.sluice.Sluice1.Share.Start >/dev/null || fail "Share.Start"
wait_for 20 has_share_state "$shareA" running attached || true
call "$shareA" org.sluice.Sluice1.Share.Attach >/dev/null || fail "Share.Attach"
wait_for 60 more_than "$console" "^MOUNTED" 0 || fail "the guest did not mount the share: $(grep -a FAIL "$console")"
pass "guest booted and mounted the share"

fs_xml() { vsh dumpxml "$A" | sed -n '/<filesystem/,/<\/filesystem>/p'; }
fs_before=$(fs_xml)
[ -n "$fs_before" ] || fail "no <filesystem> in the live definition"
events_before=$(grep -ac "device-" "$work/events.log")
sockA=$(prop "$shareA" org.sluice.Sluice1.Share SocketPath)
worker() { pgrep -u "$user" -f "$work/bin/sluice-fs .*--socket-path=$sockA( |\$)" | head -1; }
resumed_lines() { count "$work/service.log" "sluice-fs for docs resumed in"; }
stats() { call "$shareA" org.sluice.Sluice1.Share.SampleStats 2>/dev/null; }
# the share's total (the first KEY: the per-queue dicts come after it)
stat_of() { stats | grep -o "'$1': <uint64 [0-9]*>" | head -n 1 | grep -o '[0-9]*>' | tr -d '>'; }
requests_over() { [ "$(stat_of requests)" -gt "$1" ] 2>/dev/null; }

note "kill moments: seed $seed (SLUICE_RESUME_SEED=$seed replays them)"
RANDOM=$seed
killed=0 policy=
pauses_ms=()
# kill_worker — SIGKILL the share's worker, wait (bounded) until its
# successor has resumed; 1 when it did not
kill_worker() {
        local pid new resumed
        pid=$(worker)
        [ -n "$pid" ] || { fail_later "no worker to kill (kill $((killed + 1)))"; return 1; }
        resumed=$(resumed_lines)
        echo "KILL $phase ${EPOCHREALTIME/[.,]/}" >> "$work/kill-times.log"
        kill -KILL "$pid"
        killed=$((killed + 1))
        if ! wait_for 30 more_than "$work/service.log" "sluice-fs for docs resumed in" "$resumed"; then
                fail_later "kill $killed: no resumed worker within 30 s: $(grep -a 'sluice-fs for docs' "$work/service.log" | tail -n 3)"
                return 1
        fi
        new=$(worker)
        [ -n "$new" ] && [ "$new" != "$pid" ] || { fail_later "kill $killed: no new worker ($new)"; return 1; }
        # a SIGKILL is never a poisoned request: the service must not take
        # the kills for a crash loop (no --replay=no, no dropped store)
        if grep -aq -e "sluice-fs for docs died while resuming" -e "sluice-fs for docs died [0-9]* times within" \
                "$work/service.log"; then
                policy=$(grep -a -m 1 -e "sluice-fs for docs died" "$work/service.log" | sed 's/.*Message: [0-9:.]*: //')
                return 2
        fi
        pauses_ms+=("$(grep -a "sluice-fs for docs resumed in" "$work/service.log" | tail -n 1 |
                sed -n 's/.*resumed in \([0-9]*\) ms.*/\1/p')")
}
# a random pause of 0.2–3 s (the seeded sequence), then a kill
random_kill() {
        local ms=$((200 + RANDOM % 2800))
        echo "kill $((killed + 1)) after $ms ms" >> "$work/kills.log"
        sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
        kill_worker
}
phase_go() { touch "$share/GO-$1"; wait_for 30 more_than "$console" "^STARTED $1" 0; }
phase_stop() { # PHASE BOUND_S
        touch "$share/STOP-$1"
        wait_for "$2" more_than "$console" "^ENDED $1" 0
}
probe_section() { sed -n "/^STARTED $1/,/^ENDED $1/p" "$console"; }
median_max() { # numbers… → "median M, max X" (lower median)
        printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "median %d, max %d (n=%d)", v[int((NR + 1) / 2)], v[NR], NR }'
}

for phase in touch pause work; do
        case " $phases " in *" $phase "*) ;; *) touch "$share/SKIP-$phase"; continue ;; esac
        phase_go "$phase" || { fail_later "the guest did not start phase $phase"; continue; }
        case $phase in
        touch)
                # the loop is running: its reads reach the worker
                wait_for 30 requests_over 200 || note "few requests before the kill: $(stat_of requests)"
                kill_worker
                # the loop reads on after the resume (it looks for STOP only every 256 rounds)
                after=$(stat_of requests)
                wait_for 30 requests_over $((${after:-0} + 500)) || note "few requests after the kill: $(stat_of requests)"
                phase_stop touch 60 || fail_later "touch: the read loop did not end: $(probe_section touch | tail -n 3)"
                if probe_section touch | grep -aq "^DONE .* errors=0 "; then
                        pass "touch: a read loop across a SIGKILL saw no error ($(probe_section touch | grep -a '^DONE'))"
                else
                        fail_later "touch: $(probe_section touch | grep -a -E '^(ERR|DONE)' | head -n 5)"
                fi ;;
        pause)
                pauses_ms=()
                for _ in $(seq 1 "$kills"); do
                        sleep "$pause_spacing"   # one gap per kill; the crash-loop policy
                        kill_worker || break
                done
                [ -z "$policy" ] || note "pause: the service's crash-loop policy stopped the kills after $killed: $policy"
                sleep "$pause_spacing"
                phase_stop pause 60 || fail_later "pause: the read loop did not end"
                probe_section pause | grep -a '^ERR' | head -n 3 | sed 's/^/pause: /'
                note "FIGURE the service's 'resumed in' (crash seen → resumed, ms): $(median_max "${pauses_ms[@]}")"
                note "the pause the guest saw per kill: bench/resume-pause-report.py (bench/resume-pause.sh)"
                probe_section pause | grep -aq "^DONE .* errors=0 " &&
                        pass "pause: $kills kills, the read loop saw no error" ||
                        fail_later "pause: $(probe_section pause | grep -a -E '^(ERR|DONE)' | head -n 5)" ;;
        work)
                before_crashes=$killed
                wait_for 60 more_than "$console" "^WORKING" 0 || fail_later "work: the guest did not start working"
                for _ in $(seq 1 "$kills"); do random_kill || break; done
                [ -z "$policy" ] ||
                        fail_later "the kills at random moments were taken for a crash loop after $killed of $kills: \"$policy\""
                phase_stop work 120 || fail_later "work: the workload did not end: $(probe_section work | tail -n 5)"
                result=$(probe_section work | grep -a '^RESULT')
                note "work: $result; kills: $(tr '\n' ' ' < "$work/kills.log")"
                case $result in
                *" idem_errors=0 "*) pass "work: no error from an operation safe to run twice" ;;
                *) fail_later "work: $(probe_section work | grep -a '^FAIL' | head -n 5)" ;;
                esac
                case $result in *" other_errors=0 "*) ;; *) fail_later "work: a name operation failed otherwise than EIO" ;; esac
                case $result in *" held=ok"*) pass "work: the file held open reads the same" ;;
                        *) fail_later "work: the held file: $result" ;; esac
                # checksums: the guest's mirror against the host's files
                bad=0
                for k in 0 1 2 3; do
                        want=$(probe_section work | sed -n "s/^SUM data$k \([0-9a-f]*\).*/\1/p")
                        got=$(md5sum < "$share/work/data$k" | cut -d' ' -f1)
                        [ -n "$want" ] && [ "$want" = "$got" ] || { bad=1; note "data$k: guest $want, host $got"; }
                done
                [ $bad = 0 ] && pass "work: the 4 data files' checksums are exact on the host" ||
                        fail_later "work: checksums differ"
                # EIO: the guest's count against the workers' logs and Stats
                guest_eio=$(echo "$result" | sed -n 's/.* eio=\([0-9]*\).*/\1/p')
                # every answered or dropped one, once: the service also quotes
                # a worker's last line in its crash messages, so each line is
                # taken by its pid and time stamp; a FORGET (no reply) is
                # "dropped" but counted as failed like the rest
                logged=$(grep -ao -E 'sluice-fs\[[0-9]+\] [0-9.]+ warning: [A-Z_0-9]+ \(unique [0-9]+\) was in flight when the previous worker died: not run again, (answered EIO|dropped)' \
                         "$work/service.log" | sort -u)
                logged_all=$(printf '%s' "$logged" | grep -c . || true)
                logged_seen=$(printf '%s' "$logged" | grep -vc -E '(BATCH_)?FORGET|INTERRUPT' || true)
                failed=$(stat_of resume-failed)
                note "work: EIO seen by the guest $guest_eio; logged by the workers $logged_all ($logged_seen with a reply); Stats resume-failed ${failed:-?}, resume-replayed $(stat_of resume-replayed)"
                [ "$guest_eio" = "$logged_seen" ] && pass "work: the guest's EIOs ($guest_eio) are the workers' logged ones" ||
                        fail_later "work: the guest saw $guest_eio EIO, the workers logged $logged_seen: $(printf '%s' "$logged" | tail -n 5)"
                [ "${failed:-x}" = "$logged_all" ] && pass "work: Stats resume-failed = the logged ones ($logged_all)" ||
                        fail_later "work: Stats resume-failed ${failed:-?}, logged $logged_all" ;;
        esac
done

# for bench/resume-pause.sh: the guest's console, the kill times (µs since
# the epoch), the service's log
if [ -n "${SLUICE_RESUME_OUT:-}" ]; then
        mkdir -p "$SLUICE_RESUME_OUT" &&
                cp "$console" "$work/kill-times.log" "$work/service.log" "$SLUICE_RESUME_OUT/"
fi

# ---- the device is the same one; nothing was plugged or unplugged ---------------------
fs_after=$(fs_xml)
[ "$fs_after" = "$fs_before" ] && pass "the live <filesystem> is unchanged ($(echo "$fs_after" | grep -o "<alias name='[^']*'/>") $(echo "$fs_after" | grep -o "<address [^>]*>" | head -n 1))" ||
        fail_later "the live <filesystem> changed: before $fs_before; after $fs_after"
kill "$events_pid" 2>/dev/null; wait "$events_pid" 2>/dev/null; events_pid=
if [ "$(grep -ac "device-" "$work/events.log")" = "$events_before" ]; then
        pass "virsh event: no device-removed/device-added after the plug"
else
        fail_later "device events: $(grep -a "device-" "$work/events.log" | tail -n 4)"
fi
grep -aq "unplugging" "$work/service.log" && fail_later "the service unplugged: $(grep -a unplugging "$work/service.log" | head -n 2)"
crashes=$(stat_of worker-crashes)
[ "${crashes:-x}" = "$killed" ] && pass "Stats worker-crashes = $killed, the kills" ||
        fail_later "Stats worker-crashes ${crashes:-?}, kills $killed"
finish

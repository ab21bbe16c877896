#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# soak.sh [BUILD [MINUTES]] — `make soak` (not part of make check): a Linux 6.12
# guest with 2 vCPUs and 2 request queues runs bench/soak-guest.c for MINUTES
# ($SOAK_MINUTES, default 10): one process per vCPU, each pinned, doing mixed
# metadata and data operations (create, write, append, truncate, rename, link,
# unlink, mkdir, rmdir, chmod, setxattr, directory renames) on its own subtree
# of a few thousand files while keeping a model of it.  Meanwhile the host
# samples the worker's open fds (/proc/PID/fd) and VmRSS (/proc/PID/status)
# every $SOAK_SAMPLE_SECONDS (default: a twentieth of the run, at least 5 s).
#
# Passes when
#   - every guest process found what its model expected (reads checked as it
#     goes) and the host tree matches the models exactly (bench/soak-verify.py:
#     names, types, modes, sizes, link counts, CRC-32 of every file, xattrs);
#   - both request queues served requests (the worker's counters);
#   - the worker is flat: the last sample of the mixed phase has no more fds than
#     the first sample after the warm-up (every process has created its starting
#     tree, then a fifth of the run) + 5 % + 32, no more fds beyond the inodes in
#     the tree (each one the guest made and knows: the worker holds one O_PATH fd
#     per inode the guest knows) than it + 32, and no more VmRSS than it + 10 %
#     + 4 MiB.
# Prints the table and the verdict.  Needs root or the kernel cache of
# bench/fetch-trixie.sh; the worker runs as $SLUICE_TEST_USER (sluice-test if it
# exists) when we are root.  Exit 0 pass, 1 fail, 77 when a guest cannot run here.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-build}" && pwd) || exit 2
minutes=${2:-${SOAK_MINUTES:-10}}
procs=${SOAK_PROCS:-2}
seed=${SOAK_SEED:-$(date +%s)}
case "$minutes" in ''|*[!0-9.]*) echo "soak: MINUTES must be a number" >&2; exit 2 ;; esac
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
sample=${SOAK_SAMPLE_SECONDS:-$(( seconds / 20 < 5 ? 5 : seconds / 20 ))}
warmup=$(( seconds / 5 ))
export SLUICE_BUILD_ROOT=$build
if [ "$(id -u)" = 0 ] && [ -z "${SLUICE_TEST_USER:-}" ] && id sluice-test >/dev/null 2>&1; then
        export SLUICE_TEST_USER=sluice-test
fi
user=${SLUICE_TEST_USER:-$(id -un)}
[ -x "$build/daemon/sluice-fs" ] || { echo "soak: no $build/daemon/sluice-fs (meson compile -C $build)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-soak.XXXXXX")
guest_pid=''
trap '[ -z "$guest_pid" ] || kill -TERM "$guest_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP
chmod 0755 "$work"
gcc -static -O2 -o "$work/soak-guest" "$here/soak-guest.c" || { echo "soak: cannot build soak-guest.c statically" >&2; exit 1; }
share=$work/share
mkdir -p "$share/soak" "$share/manifests"
[ "$(id -u)" != 0 ] || chown -R "$user:" "$share"
console=$work/console.log daemon_log=$work/daemon.log
: >"$console"; : >"$daemon_log"

echo "soak: $minutes min, $procs guest processes, seed $seed, sample every $sample s, warm-up $warmup s"
"$root/tests/guest/run-guest.sh" --kernel 6.12 --smp 2 --queues 2 --mem 768 --quiet \
        --shared-dir "$share" --daemon-arg --xattr --sluice-fs "$build/daemon/sluice-fs" \
        --file "$work/soak-guest:/bin/soak-guest" \
        --env SOAK_SECONDS="$seconds" --env SOAK_PROCS="$procs" --env SOAK_SEED="$seed" \
        --console "$console" --daemon-log "$daemon_log" --timeout $(( seconds + 900 )) \
        "$here/soak-workload.sh" >"$work/run-guest.out" 2>&1 &
guest_pid=$!

# The worker's pid: its log lines start "sluice-fs[PID]".
pid=''
for _ in $(seq 600); do
        pid=$(sed -n 's/^sluice-fs\[\([0-9]*\)\].*/\1/p' "$daemon_log" | head -1)
        [ -n "$pid" ] && break
        kill -0 "$guest_pid" 2>/dev/null || break
        sleep 0.1
done
[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sluice-fs ] ||
        { cat "$work/run-guest.out"; echo "soak: FAIL: the worker never started"; exit 1; }

# ---- sampling while the guest runs its mixed phase -------------------------------------
in_console() { tr -d '\r' <"$console" | grep -qx "$1"; }
for _ in $(seq 3000); do in_console SOAK-RUNNING && break; kill -0 "$guest_pid" 2>/dev/null || break; sleep 0.1; done
t0=$(date +%s)
rows=() t_mixed=''
while kill -0 "$guest_pid" 2>/dev/null && ! in_console SOAK-FINISHED; do
        t=$(( $(date +%s) - t0 ))
        if [ -z "$t_mixed" ] &&
           [ "$(tr -d '\r' <"$console" | grep -c '^SOAK p[0-9]* populated$')" -ge "$procs" ]; then
                t_mixed=$t
        fi
        fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
        rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
        # Inodes in the guests' trees now (hard links counted once): each one the guest
        # made, and knows.
        # A walk that races with a directory rename misses that directory's files: the
        # largest of three walks.
        entries=0
        for _ in 1 2 3; do
                n=$(find "$share/soak" -mindepth 1 -printf '%i\n' 2>/dev/null | sort -u | wc -l)
                [ "$n" -le "$entries" ] || entries=$n
        done
        [ -n "$rss" ] && rows+=("$t $fds $rss $entries")
        # Until the next sample, watching for the end of the phase.
        next=$(( t0 + t + sample ))
        while [ "$(date +%s)" -lt "$next" ] && kill -0 "$guest_pid" 2>/dev/null && ! in_console SOAK-FINISHED; do
                sleep 1
        done
done
wait "$guest_pid"
status=$?
guest_pid=''
[ "$status" = 77 ] && { cat "$work/run-guest.out"; exit 77; }

fail=0
echo
tr -d '\r' <"$console" | grep -E '^(SOAK p|FAIL|GUEST-KERNEL)' | sed 's/^/guest: /'
tail -n 3 "$work/run-guest.out" | sed 's/^/run-guest: /'
[ "$status" = 0 ] || { echo "soak: FAIL: run-guest exited $status"; tail -n 40 "$work/run-guest.out"; fail=1; }

# ---- both request queues served ---------------------------------------------------------
counters=$(sed -n '/^--- run-guest: SIGUSR1/,/^--- run-guest: SIGTERM/p' "$daemon_log")
for q in 1 2; do
        n=$(echo "$counters" | awk -v k="queue$q-requests" '$1 == k { print $2 }')
        echo "soak: request queue $q served ${n:-no counter} requests"
        [ -n "$n" ] && [ "$n" -gt 0 ] || { echo "soak: FAIL: request queue $q served nothing"; fail=1; }
done

# ---- the host tree against the models ----------------------------------------------------
python3 "$here/soak-verify.py" "$share/soak" "$share"/manifests/p*.tsv || fail=1

# ---- the worker's fds and RSS: table and flatness -----------------------------------------
echo
echo "| t (s) | open fds | inodes in the tree | fds - inodes | VmRSS (KiB) |"
echo "|------:|---------:|-------------------:|-------------:|------------:|"
for r in "${rows[@]}"; do
        read -r t fds rss entries <<<"$r"
        printf '| %5d | %8d | %18d | %12d | %11d |\n' "$t" "$fds" "$entries" $(( fds - entries )) "$rss"
done
base='' last=''
echo "soak: the processes had populated their trees at ${t_mixed:-?} s; warm-up until $(( ${t_mixed:-0} + warmup )) s"
for r in "${rows[@]}"; do
        read -r t _ _ <<<"$r"
        [ -z "$base" ] && [ -n "$t_mixed" ] && [ "$t" -ge $(( t_mixed + warmup )) ] && base=$r
        last=$r
done
if [ -z "$base" ] || [ "$base" = "$last" ]; then
        echo "soak: FAIL: too few samples after the warm-up (${#rows[@]} samples)"
        fail=1
else
        read -r bt bf br be <<<"$base"
        read -r lt lf lr le <<<"$last"
        fd_limit=$(( bf + bf / 20 + 32 )) rss_limit=$(( br + br / 10 + 4096 ))
        extra_limit=$(( bf - be + 32 ))
        echo "soak: fds $bf at ${bt}s (after the warm-up) -> $lf at ${lt}s (limit $fd_limit);" \
             "fds beyond the tree's inodes $(( bf - be )) -> $(( lf - le )) (limit $extra_limit);" \
             "VmRSS $br -> $lr KiB (limit $rss_limit)"
        [ "$lf" -le "$fd_limit" ] || { echo "soak: FAIL: the worker's fd count grew"; fail=1; }
        [ $(( lf - le )) -le "$extra_limit" ] ||
                { echo "soak: FAIL: the worker keeps more fds beyond the tree's inodes"; fail=1; }
        [ "$lr" -le "$rss_limit" ] || { echo "soak: FAIL: the worker's RSS grew"; fail=1; }
fi
if [ "$fail" = 0 ]; then
        echo "soak: PASS ($minutes min, seed $seed)"
else
        echo "soak: FAIL (seed $seed: SOAK_SEED=$seed repeats the guest's choices)"
        exit 1
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/run.sh [OPTIONS] [BUILD] — sluice-fs side by side with its peers, in one run.
#
# Boots the same test guest (tests/guest, TCG) once per set, configuration and
# repetition, runs the same workload (bench/guest-bench.c: metadata, sequential,
# 4 KiB random psync, a small build; on the multi-queue set 4 KiB random writes in
# 2 jobs) on the share, and writes the medians and the ratios to
# BUILD/bench/results.md and results.json (raw consoles and daemon logs in
# BUILD/bench/raw/).  Not a test: nothing here passes or fails on a figure.
#
# Sets (guests), interleaved with the configurations (set 1 config A, B, C, set 2
# A, B, C, ..., then again), so that a noisy minute hits all of them:
#   6.1    Debian 12's Linux 6.1, 1 vCPU, one request queue: the single-threaded rows
#   6.12   Debian 13's Linux 6.12, 1 vCPU, one request queue: the same rows
#   mq     Linux 6.12, 2 vCPUs: 4 KiB random writes, 1 job and 2 jobs, sluice-fs with
#          --queues 2 (QEMU num-request-queues=2) against the peers' one queue
#
# Options:
#   --reps N          repetitions of everything (default 5, $BENCH_REPS)
#   --sets A,B,…      sets to run (default 6.1,6.12,mq)
#   --configs A,B,…   configurations of the 6.1 and 6.12 sets (default
#                     sluice,sluice-poll0,rust,virtiofsd,9p-mmap; see below)
#   --mq-configs A,…  configurations of the mq set (default sluice-q2,sluice-q1,rust)
#   --quick           smaller workloads, one repetition unless --reps says otherwise
#                     (a smoke run: ~3 min)
#   --bench-args ARGS guest-bench options of the 6.1/6.12 sets instead of the default
#                     ("-n FILES -s SEQ_MIB -t RAND_SECONDS -T TREE_FILES -p PHASES",
#                     see guest-bench.c)
#   --mq-args ARGS    the same for the mq set
#   --trace MODE      strace: count the daemons' system calls (strace -c -f on every
#                     thread, raw/*.strace); perf: perf stat of the daemons (CPU time,
#                     context switches, migrations, page faults; raw/*.perf; light
#                     enough that the figures still mean something); debug: the daemons log every request
#                     (sluice-fs -d, Rust virtiofsd --log-level debug, legacy -d).
#                     Both slow the daemons down: the figures of such a run mean
#                     nothing, its counts do (bench/gb-analyse.py summarises them)
#   --dir DIR         where the shared folders are created (default /dev/shm: a tmpfs,
#                     so that the host disk is not what gets measured)
#   --sluice-fs PATH  default BUILD/daemon/sluice-fs
#
# Configurations:
#   sluice          sluice-fs, default options (--cache=auto, default --poll-us)
#   sluice-poll0    sluice-fs --poll-us=0      (no busy-poll: every request needs a kick)
#   sluice-always   sluice-fs --cache=always
#   sluice-poll200  sluice-fs --poll-us=200
#   rust            Rust virtiofsd 1.13 (Debian 13's, bench/fetch-trixie.sh), --cache auto,
#                   its default namespace sandbox, run as the same user as sluice-fs
#   virtiofsd       QEMU's legacy C virtiofsd -o cache=auto (needs root; skipped otherwise)
#   9p-mmap         virtio-9p, msize=512000, cache=mmap
#   9p-loose        virtio-9p, msize=512000, cache=loose
#   mq set: sluice-q2 (sluice-fs --queues 2), sluice-q2-poll0, sluice-q1 (one queue),
#           rust (one queue: all Rust virtiofsd serves), virtiofsd (legacy, one queue)
#
# sluice-fs and Rust virtiofsd run as $SLUICE_TEST_USER when that is set, else (as
# root) as the user sluice-test when it exists: neither needs root.
# Debian 13's packages are cached in BUILD/trixie (a link to a shared cache is fine).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "bench: $*" >&2; exit 1; }

all_configs=(sluice sluice-poll0 sluice-always sluice-poll200 rust virtiofsd 9p-mmap 9p-loose)
default_configs=sluice,sluice-poll0,rust,virtiofsd,9p-mmap
all_mq_configs=(sluice-q2 sluice-q2-poll0 sluice-q1 rust virtiofsd)
default_mq_configs=sluice-q2,sluice-q1,rust
all_sets=(6.1 6.12 mq)
reps=${BENCH_REPS:-} configs=$default_configs mq_configs=$default_mq_configs sets=6.1,6.12,mq
quick=0 share_root=/dev/shm sluice_fs='' bench_args='' mq_args='' trace=none
while [ $# -gt 0 ]; do
        case "$1" in
        --reps) reps=$2; shift ;;
        --sets) sets=$2; shift ;;
        --configs) configs=$2; shift ;;
        --mq-configs) mq_configs=$2; shift ;;
        --quick) quick=1 ;;
        --bench-args) bench_args=$2; shift ;;
        --mq-args) mq_args=$2; shift ;;
        --trace) trace=$2; shift ;;
        --dir) share_root=$2; shift ;;
        --sluice-fs) sluice_fs=$2; shift ;;
        -h|--help) usage ;;
        -*) echo "bench: unknown option $1" >&2; usage ;;
        *) break ;;
        esac
        shift
done
[ $# -le 1 ] || usage
build=${1:-build}
[ -d "$build" ] || die "no build directory $build (run make build, or meson setup $build)"
build=$(cd "$build" && pwd)
if [ -z "$reps" ]; then
        if [ "$quick" = 1 ]; then reps=1; else reps=5; fi
fi
[[ "$reps" =~ ^[1-9][0-9]?$ ]] || die "--reps $reps: use 1 to 99"
for a in "$bench_args" "$mq_args"; do
        [[ "$a" =~ ^[-0-9nstTjpc\ a-z,]*$ ]] || die "guest-bench arguments '$a': only -n -s -t -T -j -p -c, numbers and phase names"
done
case "$trace" in none|strace|perf|debug) ;; *) die "--trace $trace: use strace, perf or debug" ;; esac
[ "$trace" = none ] || [ "$trace" = debug ] || command -v "$trace" >/dev/null || die "--trace $trace needs $trace"
[ -d "$share_root" ] || die "--dir $share_root is not a directory"
[ -n "$sluice_fs" ] || sluice_fs=$build/daemon/sluice-fs
[ -x "$sluice_fs" ] || die "no sluice-fs at $sluice_fs (build it first: make build)"
if [ -z "$bench_args" ]; then
        if [ "$quick" = 1 ]; then
                bench_args="-n 200 -s 32 -t 1 -T 200"
        else
                # Small enough for 5 repetitions of everything in ~20 minutes: on a
                # noisy machine more repetitions beat longer ones.
                bench_args="-n 400 -s 64 -t 2 -T 300"
        fi
fi
if [ -z "$mq_args" ]; then
        if [ "$quick" = 1 ]; then mq_args="-s 8 -t 1 -j 2 -p randwrite,jobs"
        else mq_args="-s 16 -t 3 -j 2 -p randwrite,jobs"; fi
fi
pick() {   # LIST ALLOWED... → the names of LIST, checked, without duplicates
        local list=$1 c; shift
        local -a wanted picked=()
        IFS=, read -r -a wanted <<<"$list"
        for c in "${wanted[@]}"; do
                [[ " $* " == *" $c "* ]] || { echo "bench: unknown name $c (see --help)" >&2; return 1; }
                [[ " ${picked[*]} " == *" $c "* ]] || picked+=("$c")
        done
        [ ${#picked[@]} -gt 0 ] || { echo "bench: an empty list: '$list'" >&2; return 1; }
        echo "${picked[*]}"
}
list=$(pick "$sets" "${all_sets[@]}") || exit 2; read -r -a sel_sets <<<"$list"
list=$(pick "$configs" "${all_configs[@]}") || exit 2; read -r -a sel_configs <<<"$list"
list=$(pick "$mq_configs" "${all_mq_configs[@]}") || exit 2; read -r -a sel_mq <<<"$list"
if [ "$(id -u)" != 0 ]; then
        drop_legacy() { local c; for c in "$@"; do [ "$c" = virtiofsd ] || printf '%s ' "$c"; done; }
        echo "bench: skipping virtiofsd: the legacy daemon needs root" >&2
        read -r -a sel_configs <<<"$(drop_legacy "${sel_configs[@]}")"
        read -r -a sel_mq <<<"$(drop_legacy "${sel_mq[@]}")"
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is not installed (make deps)"
command -v python3 >/dev/null || die "python3 is needed for the report (it comes with meson)"

user=${SLUICE_TEST_USER:-}
if [ -z "$user" ] && [ "$(id -u)" = 0 ] && id sluice-test >/dev/null 2>&1; then
        user=sluice-test
fi

out=$build/bench
raw=$out/raw
mkdir -p "$raw" || die "cannot create $raw"
rm -f "$raw"/*.console "$raw"/*.daemon "$raw"/*.status "$raw"/*.strace "$raw"/*.perf

# ---- the guest tool ------------------------------------------------------------------
tool=$out/guest-bench
if [ ! -x "$tool" ] || [ "$here/guest-bench.c" -nt "$tool" ]; then
        ${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -static -o "$tool.tmp" "$here/guest-bench.c" ||
                die "cannot build guest-bench.c statically (need gcc and libc6-dev)"
        mv -f "$tool.tmp" "$tool"
fi

# ---- private copies of the daemons behind a wrapper that reports their CPU time ------------
work=$(mktemp -d "$share_root/sluice-bench.XXXXXX") || die "cannot create a directory in $share_root"
chmod 0755 "$work"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# run-guest.sh signals the process it started (SIGUSR1 for the counters, then SIGTERM):
# the wrapper passes both on and, once the daemon has exited, prints the CPU time it used
# (bash's `times`: user and system time of waited-for children).
cpu_wrapper() {   # WRAPPER REAL
        cat >"$1" <<WRAPPER
#!/usr/bin/env bash
"$2" "\$@" &
child=\$!
trap 'kill -USR1 \$child' USR1
trap 'kill -TERM \$child' TERM
while :; do
        wait \$child
        rc=\$?
        kill -0 \$child 2>/dev/null || break
done
# Not \$(times): a command substitution is a subshell, whose children used no time.
echo "bench-cpu (times, 2nd line: the daemon):" >&2
times >&2
exit \$rc
WRAPPER
        chmod 0755 "$1"
}
install -m 0755 "$sluice_fs" "$work/sluice-fs.real"
cpu_wrapper "$work/sluice-fs" "$work/sluice-fs.real"
needs_rust=0
[[ " ${sel_configs[*]} ${sel_mq[*]} " == *" rust "* ]] && needs_rust=1
if [ "$needs_rust" = 1 ]; then
        rust=${SLUICE_RUST_VIRTIOFSD:-}
        if [ -z "$rust" ]; then
                rust=$("$here/fetch-trixie.sh" "$build/trixie" virtiofsd)
                rc=$?
                [ "$rc" = 0 ] || die "Rust virtiofsd cannot be had (fetch-trixie.sh status $rc); leave out rust with --configs/--mq-configs"
        fi
        # A copy the daemon's user can reach wherever the cache lives.
        cp -a "$(dirname "$rust")" "$work/rust" && chmod -R a+rX "$work/rust" || die "cannot copy $rust"
        cpu_wrapper "$work/rust-virtiofsd" "$work/rust/$(basename "$rust")"
fi

# ---- tracing -----------------------------------------------------------------------------
# strace attaches to every thread of the daemon's processes (found by the --shared-dir=
# / source= argument that names this run's unique share) as soon as they exist.
trace_start() {   # SHARE OUTFILE → sets trace_pid
        local share=$1 file=$2 pids='' p t
        trace_pid=
        for _ in $(seq 200); do
                pids=$(pgrep -f "(shared-dir=|source=)$share( |\$)" | tr '\n' ' ')
                # Rust virtiofsd's namespace sandbox forks its worker: wait for it.
                [ -n "$pids" ] && [ "$(wc -w <<<"$pids")" -ge "$want_procs" ] && break
                sleep 0.1
        done
        [ -n "$pids" ] || { echo "bench: trace: no daemon for $share" >&2; return 0; }
        local -a args=()
        for p in $pids; do
                for t in /proc/"$p"/task/*; do args+=(-p "${t##*/}"); done
        done
        if [ "$trace" = perf ]; then
                # CPU time, context switches, migrations and page faults of all threads.
                perf stat -e task-clock,context-switches,cpu-migrations,page-faults,minor-faults \
                        -p "$(tr ' ' , <<<"${pids% }")" -o "$file" 2>/dev/null &
        else
                strace -c -f -o "$file" "${args[@]}" 2>/dev/null &
        fi
        trace_pid=$!
}

run_one() {   # SET CONFIG REP
        local set=$1 config=$2 rep=$3 backend=sluice share status kernel=6.1 smp=1 bargs=$bench_args
        local -a args=() dbg=()
        want_procs=2   # sluice-fs: the CPU-time wrapper and sluice-fs itself
        case "$set" in
        6.12) kernel=6.12 ;;
        mq) kernel=6.12 smp=2 bargs=$mq_args ;;
        esac
        case "$config" in
        sluice) ;;
        sluice-always) args+=(--daemon-arg --cache=always) ;;
        sluice-poll0) args+=(--daemon-arg --poll-us=0) ;;
        sluice-poll200) args+=(--daemon-arg --poll-us=200) ;;
        sluice-q1) ;;
        sluice-q2) args+=(--queues 2) ;;
        sluice-q2-poll0) args+=(--queues 2 --daemon-arg --poll-us=0) ;;
        rust) backend=rust-virtiofsd want_procs=3 ;;   # + the sandbox's forked worker
        virtiofsd) backend=virtiofsd want_procs=1 ;;
        9p-mmap) backend=9p; args+=(--env BENCH_9P_CACHE=mmap) ;;
        9p-loose) backend=9p; args+=(--env BENCH_9P_CACHE=loose) ;;
        esac
        if [ "$trace" = debug ]; then
                case "$backend" in
                sluice) dbg=(--daemon-arg -d) ;;
                rust-virtiofsd) dbg=(--daemon-arg --log-level=debug) ;;
                virtiofsd) dbg=(--daemon-arg -d) ;;
                esac
        fi
        share=$work/share-$set-$config-$rep
        mkdir "$share" || return 1
        if [ -n "$user" ] && { [ "$backend" = sluice ] || [ "$backend" = rust-virtiofsd ]; }; then
                chown "$user:" "$share" || return 1
        fi
        local base=$raw/$set.$config.$rep
        SLUICE_BUILD_ROOT=$build SLUICE_TEST_USER=$user SLUICE_GUEST_ACCEL=${SLUICE_GUEST_ACCEL:-tcg} \
        SLUICE_RUST_VIRTIOFSD=$work/rust-virtiofsd \
        "$top/tests/guest/run-guest.sh" --quiet --timeout 300 --kernel "$kernel" --smp "$smp" \
                --image "$build/tests/guest/image" --backend "$backend" --shared-dir "$share" \
                --sluice-fs "$work/sluice-fs" --file "$tool:/bin/guest-bench" \
                --env "BENCH_ARGS=$bargs" --console "$base.console" --daemon-log "$base.daemon" \
                "${args[@]}" "${dbg[@]}" "$here/guest-workload.sh" >"$base.status" 2>&1 &
        local guest=$!
        trace_pid=
        if { [ "$trace" = strace ] || [ "$trace" = perf ]; } && [ "$backend" != 9p ]; then
                trace_start "$share" "$base.$trace"
        fi
        wait "$guest"
        status=$?
        if [ -n "$trace_pid" ]; then
                # strace and perf end with their tracees (the daemon has been stopped by now).
                for _ in $(seq 100); do kill -0 "$trace_pid" 2>/dev/null || break; sleep 0.1; done
                kill -INT "$trace_pid" 2>/dev/null
                wait "$trace_pid" 2>/dev/null
        fi
        rm -rf "$share"
        return $status
}

set_configs() {   # SET → its configurations
        if [ "$1" = mq ]; then echo "${sel_mq[*]}"; else echo "${sel_configs[*]}"; fi
}
total=0
for set in "${sel_sets[@]}"; do
        read -r -a cs <<<"$(set_configs "$set")"
        total=$(( total + reps * ${#cs[@]} ))
done
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
n=0 start=$(date +%s)
echo "bench: sets ${sel_sets[*]} x $reps repetitions; configurations ${sel_configs[*]} (mq: ${sel_mq[*]})"
echo "bench: workload $bench_args; mq $mq_args; trace $trace; $(uptime)"
for rep in $(seq "$reps"); do
        for set in "${sel_sets[@]}"; do
                read -r -a cs <<<"$(set_configs "$set")"
                for config in "${cs[@]}"; do
                        n=$((n + 1))
                        printf 'bench: [%d/%d] %-4s %-15s rep %d ... ' "$n" "$total" "$set" "$config" "$rep"
                        t0=$(date +%s)
                        if run_one "$set" "$config" "$rep"; then
                                echo "ok ($(( $(date +%s) - t0 )) s)"
                        else
                                rc=$?
                                echo "FAILED (status $rc; see $raw/$set.$config.$rep.status)"
                                [ "$rc" = 77 ] && die "the guest cannot run here (QEMU, a kernel or a Debian 13 package missing)"
                        fi
                done
        done
done
elapsed=$(( $(date +%s) - start ))
echo "bench: all runs took $elapsed s; $(uptime)"

# ---- versions -----------------------------------------------------------------------------
versions="sluice-fs: $("$sluice_fs" --version 2>&1 | head -1)"
[ "$needs_rust" = 1 ] && versions+="; Rust virtiofsd: $("$work/rust/$(basename "$rust")" --version 2>&1 | head -1)"
[ -x /usr/lib/qemu/virtiofsd ] && versions+="; legacy virtiofsd: $(/usr/lib/qemu/virtiofsd --version 2>&1 | head -1)"
versions+="; QEMU: $(qemu-system-x86_64 --version | head -1)"
machine="$(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), host kernel $(uname -r), load $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end, $elapsed s"
sets_arg=''
for set in "${sel_sets[@]}"; do sets_arg+="$set=$(set_configs "$set" | tr ' ' ,) "; done
python3 "$here/report.py" --raw "$raw" --out "$out" --sets "$sets_arg" --reps "$reps" \
        --workload "$bench_args" --mq-workload "$mq_args" --machine "$machine" \
        --versions "$versions" --trace "$trace" --user "${user:-$(id -un)}" ||
        die "the report failed"
echo
cat "$out/results.md"
echo
echo "bench: written $out/results.md and $out/results.json (raw logs in $raw)"

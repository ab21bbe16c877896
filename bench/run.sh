#!/usr/bin/env bash
# bench/run.sh [OPTIONS] [BUILD] — sluice-fs side by side with its peers, in one run.
#
# Boots the same test guest (tests/guest, TCG, 1 vCPU, 512 MiB) once per
# configuration and repetition, runs the same workload (bench/guest-bench.c:
# metadata, sequential, 4 KiB random psync, a small build) on the share, and
# writes the medians and the ratios to BUILD/bench/results.md and results.json
# (raw consoles and daemon logs in BUILD/bench/raw/).  Not a test: nothing here
# passes or fails on a figure.
#
# Options:
#   --reps N          repetitions of every configuration (default 5, $BENCH_REPS);
#                     rounds are interleaved (every configuration once, then again)
#                     so that a noisy minute on a shared machine hits all of them
#   --configs A,B,…   configurations to run (default: all of them, see below)
#   --quick           a smaller workload, one repetition unless --reps says otherwise
#                     (a smoke run: ~2 min for all configurations)
#   --bench-args ARGS guest-bench options instead of the default workload
#                     ("-n FILES -s SEQ_MIB -t RAND_SECONDS -T TREE_FILES", see guest-bench.c)
#   --dir DIR         where the shared folders are created (default /dev/shm: a tmpfs,
#                     so that the host disk is not what gets measured)
#   --sluice-fs PATH  default BUILD/daemon/sluice-fs
#
# Configurations:
#   sluice          sluice-fs, default options (--cache=auto, --poll-us=50)
#   sluice-always   sluice-fs --cache=always
#   sluice-poll0    sluice-fs --poll-us=0      (no busy-poll: every request needs a kick)
#   sluice-poll200  sluice-fs --poll-us=200
#   virtiofsd       QEMU's legacy C virtiofsd -o cache=auto (needs root; skipped otherwise)
#   9p-mmap         virtio-9p, msize=512000, cache=mmap
#   9p-loose        virtio-9p, msize=512000, cache=loose
#
# sluice-fs runs as $SLUICE_TEST_USER when that is set, else (as root) as the user
# sluice-test when it exists: Sluice's workers are never root in real use.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "bench: $*" >&2; exit 1; }

all_configs=(sluice sluice-always sluice-poll0 sluice-poll200 virtiofsd 9p-mmap 9p-loose)
reps=${BENCH_REPS:-} configs='' quick=0 share_root=/dev/shm sluice_fs='' bench_args=''
while [ $# -gt 0 ]; do
        case "$1" in
        --reps) reps=$2; shift ;;
        --configs) configs=$2; shift ;;
        --quick) quick=1 ;;
        --bench-args) bench_args=$2; shift ;;
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
[[ "$bench_args" =~ ^[-0-9nstT\ ]*$ ]] || die "--bench-args '$bench_args': only -n -s -t -T and numbers"
[ -d "$share_root" ] || die "--dir $share_root is not a directory"
[ -n "$sluice_fs" ] || sluice_fs=$build/daemon/sluice-fs
[ -x "$sluice_fs" ] || die "no sluice-fs at $sluice_fs (build it first: make build)"
if [ -z "$bench_args" ]; then
        if [ "$quick" = 1 ]; then
                bench_args="-n 200 -s 32 -t 1 -T 200"
        else
                # Small enough for 5 repetitions of everything in ~8 minutes: on a
                # noisy machine more repetitions beat longer ones.
                bench_args="-n 400 -s 64 -t 2 -T 300"
        fi
fi
if [ -n "$configs" ]; then
        IFS=, read -r -a wanted <<<"$configs"
        selected=()
        for c in "${wanted[@]}"; do
                [[ " ${all_configs[*]} " == *" $c "* ]] || die "unknown configuration $c (see --help)"
                [[ " ${selected[*]} " == *" $c "* ]] || selected+=("$c")
        done
        [ ${#selected[@]} -gt 0 ] || die "--configs names no configuration"
else
        selected=("${all_configs[@]}")
fi
if [ "$(id -u)" != 0 ]; then
        kept=()
        for c in "${selected[@]}"; do
                if [ "$c" = virtiofsd ]; then
                        echo "bench: skipping virtiofsd: the legacy daemon needs root" >&2
                else
                        kept+=("$c")
                fi
        done
        selected=("${kept[@]}")
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
rm -f "$raw"/*.console "$raw"/*.daemon "$raw"/*.status

# ---- the guest tool ------------------------------------------------------------------
tool=$out/guest-bench
if [ ! -x "$tool" ] || [ "$here/guest-bench.c" -nt "$tool" ]; then
        ${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -static -o "$tool.tmp" "$here/guest-bench.c" ||
                die "cannot build guest-bench.c statically (need gcc and libc6-dev)"
        mv -f "$tool.tmp" "$tool"
fi

# ---- a private copy of sluice-fs behind a wrapper that reports its CPU time ---------------
work=$(mktemp -d "$share_root/sluice-bench.XXXXXX") || die "cannot create a directory in $share_root"
chmod 0755 "$work"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
install -m 0755 "$sluice_fs" "$work/sluice-fs.real"
# run-guest.sh signals the process it started (SIGUSR1 for the counters, then SIGTERM):
# the wrapper passes both on and, once sluice-fs has exited, prints the CPU time it used
# (bash's `times`: user and system time of waited-for children).
cat >"$work/sluice-fs" <<EOF
#!/usr/bin/env bash
"$work/sluice-fs.real" "\$@" &
child=\$!
trap 'kill -USR1 \$child' USR1
trap 'kill -TERM \$child' TERM
while :; do
        wait \$child
        rc=\$?
        kill -0 \$child 2>/dev/null || break
done
# Not \$(times): a command substitution is a subshell, whose children used no time.
echo "bench-cpu (times, 2nd line: sluice-fs):" >&2
times >&2
exit \$rc
EOF
chmod 0755 "$work/sluice-fs"

run_one() {   # CONFIG REP
        local config=$1 rep=$2 backend=sluice share status
        local -a args=()
        case "$config" in
        sluice) ;;
        sluice-always) args+=(--daemon-arg --cache=always) ;;
        sluice-poll0) args+=(--daemon-arg --poll-us=0) ;;
        sluice-poll200) args+=(--daemon-arg --poll-us=200) ;;
        virtiofsd) backend=virtiofsd ;;
        9p-mmap) backend=9p; args+=(--env BENCH_9P_CACHE=mmap) ;;
        9p-loose) backend=9p; args+=(--env BENCH_9P_CACHE=loose) ;;
        esac
        share=$work/share-$config-$rep
        mkdir "$share" || return 1
        if [ "$backend" = sluice ] && [ -n "$user" ]; then
                chown "$user:" "$share" || return 1
        fi
        local base=$raw/$config.$rep
        SLUICE_TEST_USER=$user SLUICE_GUEST_ACCEL=${SLUICE_GUEST_ACCEL:-tcg} \
        "$top/tests/guest/run-guest.sh" --quiet --timeout 240 \
                --image "$build/tests/guest/image" --backend "$backend" --shared-dir "$share" \
                --sluice-fs "$work/sluice-fs" --file "$tool:/bin/guest-bench" \
                --env "BENCH_ARGS=$bench_args" --console "$base.console" --daemon-log "$base.daemon" \
                "${args[@]}" "$here/guest-workload.sh" >"$base.status" 2>&1
        status=$?
        rm -rf "$share"
        return $status
}

total=$(( reps * ${#selected[@]} ))
n=0 start=$(date +%s)
echo "bench: ${#selected[@]} configurations x $reps repetitions (${selected[*]}); workload: $bench_args"
for rep in $(seq "$reps"); do
        for config in "${selected[@]}"; do
                n=$((n + 1))
                printf 'bench: [%d/%d] %-15s rep %d ... ' "$n" "$total" "$config" "$rep"
                t0=$(date +%s)
                if run_one "$config" "$rep"; then
                        echo "ok ($(( $(date +%s) - t0 )) s)"
                else
                        rc=$?
                        echo "FAILED (status $rc; see $raw/$config.$rep.status)"
                        [ "$rc" = 77 ] && die "the guest cannot run here (QEMU or kernel missing)"
                fi
        done
done
echo "bench: all runs took $(( $(date +%s) - start )) s"

machine="$(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/report.py" --raw "$raw" --out "$out" --configs "${selected[*]}" --reps "$reps" \
        --workload "$bench_args" --machine "$machine" --user "${user:-$(id -un)}" ||
        die "the report failed"
echo
cat "$out/results.md"
echo
echo "bench: written $out/results.md and $out/results.json (raw logs in $raw)"

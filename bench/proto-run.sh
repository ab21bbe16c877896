#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# proto-run.sh [OPTION...] BUILD — the protocol benchmark against every daemon.
#
# Runs BUILD/bench/proto-bench (the test VMM of tests/frontend speaking
# vhost-user straight to the daemon: no guest, no QEMU) against each daemon in
# turn on the same page-cache-hot folder in /dev/shm, interleaved (rep 1:
# A B C …, rep 2: A B C …), plus the bare host syscalls for the same work
# ("bare", the physical limit), then writes the medians.
#
#   --quick            1 repetition, 150 ms per figure, a 256 MiB copy (~1 min)
#   --reps N           repetitions (default 5)
#   --daemons LIST     sluice,sluice-poll0,virtiofsd,legacy,bare (default all;
#                      legacy needs root, virtiofsd bench/fetch-trixie.sh)
#   --rows LIST        lat,ops,io,create,notify,win,mem,mq (default all)
#   --duration-ms N    per figure (default 300)
#   --copy-mib N       the Windows-shaped copy (default 2048)
#   --sluice-fs PATH   the sluice-fs binary (default BUILD/daemon/sluice-fs)
#   --trixie-cache DIR where fetch-trixie.sh keeps Rust virtiofsd
#                      (default BUILD/bench/trixie)
#   --out DIR          results (default BUILD/bench/proto): results.md,
#                      results.json, raw.tsv, meta.txt, logs/
#
# As root, sluice-fs and Rust virtiofsd run as the ordinary user sluice-test
# (created when missing, as tests/run-suites.sh does) and the legacy
# virtiofsd as root (it cannot run otherwise); every request carries
# sluice-test's uid and gid.  Benchmarks, not tests: nothing fails on a figure.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

reps=5 daemons=sluice,sluice-poll0,virtiofsd,legacy,bare rows=lat,ops,io,create,notify,win,mem,mq
duration=300 copy=2048 trixie= out= sluice=
while [ $# -gt 0 ]; do
        case "$1" in
        --quick) reps=1 duration=150 copy=256 ;;
        --reps) reps=$2; shift ;;
        --daemons) daemons=$2; shift ;;
        --rows) rows=$2; shift ;;
        --duration-ms) duration=$2; shift ;;
        --copy-mib) copy=$2; shift ;;
        --trixie-cache) trixie=$2; shift ;;
        --sluice-fs) sluice=$2; shift ;;
        --out) out=$2; shift ;;
        -h|--help) usage ;;
        -*) usage ;;
        *) break ;;
        esac
        shift
done
[ $# -eq 1 ] || usage
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
bench=$build/bench/proto-bench
sluice=${sluice:-$build/daemon/sluice-fs}
[ -x "$bench" ] && [ -x "$sluice" ] || { echo "proto-run: build $build first (no bench/proto-bench or $sluice)" >&2; exit 1; }
out=${out:-$build/bench/proto}
trixie=${trixie:-$build/bench/trixie}
say() { echo "proto-run: $*" >&2; }

# Three phases: mem (fresh daemons: idle RSS), the main rows (all daemons
# at once, each figure from each in turn), mq (sluice-fs with 4 queues).
has_row() { case ",$rows," in *",$1,"*) return 0 ;; esac; return 1; }
main_rows=$(echo "$rows" | tr ',' '\n' | grep -vxE 'mem|mq' | paste -sd, || true)

runas=()
creds=$(id -u):$(id -g)
if [ "$(id -u)" -eq 0 ]; then
        id sluice-test >/dev/null 2>&1 || useradd --create-home --user-group sluice-test
        runas=(setpriv --reuid=sluice-test --regid="$(id -g sluice-test)" --init-groups --)
        creds=$(id -u sluice-test):$(id -g sluice-test)
fi

# Which daemons can run here.
wanted=()
for d in ${daemons//,/ }; do
        case "$d" in
        sluice|sluice-poll0|bare) wanted+=("$d") ;;
        virtiofsd)
                if rust=$("$here/fetch-trixie.sh" "$trixie" virtiofsd); then
                        wanted+=("$d")
                else
                        say "Rust virtiofsd unavailable (fetch-trixie.sh failed): skipped"
                fi ;;
        legacy)
                if [ "$(id -u)" -ne 0 ]; then
                        say "legacy virtiofsd needs root: skipped"
                elif [ ! -x /usr/lib/qemu/virtiofsd ]; then
                        say "no /usr/lib/qemu/virtiofsd (qemu-system-common): skipped"
                else
                        wanted+=("$d")
                fi ;;
        *) say "unknown daemon $d"; exit 2 ;;
        esac
done

work=$(mktemp -d /dev/shm/proto-bench.XXXXXX)
pids=()
cleanup() {
        stop_daemons
        rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$work"
share=$work/share
mkdir -p "$share" "$work/sock"
[ ${#runas[@]} -eq 0 ] || chown sluice-test: "$share" "$work/sock"
# A copy the ordinary user can run whatever the build directory's modes.
sluice_src=$sluice
cp "$sluice" "$work/sluice-fs"
sluice=$work/sluice-fs
mkdir -p "$out/logs"
rm -f "$out/raw.tsv" "$out/logs/"*

# start_daemon NAME QUEUES LOG: starts it on a fresh socket and adds
# --daemon=NAME=SOCKET,PID to $specs.  A fresh name each time: the
# virtiofsds lock SOCKET.pid, and one still exiting would block the next.
runs=0
specs=()
start_daemon() {
        local name=$1 queues=$2 log=$3 sock pid
        runs=$((runs + 1))
        sock=$work/sock/$name.$runs.sock
        # exec: the backgrounded case runs in a subshell, and $! must be the
        # daemon itself (its CPU time and RSS are measured by that pid).
        case "$name" in
        sluice) exec "${runas[@]}" "$sluice" --socket-path="$sock" --shared-dir="$share" --queues="$queues" ;;
        sluice-poll0) exec "${runas[@]}" "$sluice" --socket-path="$sock" --shared-dir="$share" --queues="$queues" --poll-us=0 ;;
        virtiofsd) exec "${runas[@]}" "$rust" --socket-path="$sock" --shared-dir="$share" --sandbox none --cache auto ;;
        legacy) exec /usr/lib/qemu/virtiofsd --socket-path="$sock" -o source="$share" -o cache=auto ;;
        esac </dev/null >>"$log" 2>&1 &
        pid=$!
        pids+=("$pid")
        for _ in $(seq 200); do
                if [ -S "$sock" ]; then
                        specs+=("--daemon=$name=$sock,$pid")
                        return 0
                fi
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.05
        done
        say "$name did not create its socket (see $log): left out"
}

stop_daemons() {
        local p
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
        pids=() specs=()
}

# phase ROWS QUEUES DAEMON... -- PROTO-BENCH OPTION...: starts the daemons,
# runs proto-bench on all of them at once, stops them.
phase() {
        local r=$1 queues=$2 d bare=()
        shift 2
        while [ "$1" != -- ]; do
                if [ "$1" = bare ]; then bare=(--bare); else start_daemon "$1" "$queues" "$out/logs/$1.log"; fi
                shift
        done
        shift
        if [ ${#specs[@]} -gt 0 ] || [ ${#bare[@]} -gt 0 ]; then
                "$bench" --dir="$share" --rows="$r" --duration-ms="$duration" --copy-mib="$copy" \
                        --creds="$creds" --out="$out/raw.tsv" "${specs[@]}" "${bare[@]}" "$@" \
                        2>>"$out/logs/proto-bench.log" || say "proto-bench reported failures (see $out/logs/)"
        fi
        stop_daemons
}

{
        echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host kernel $(uname -r); $(nproc) CPUs"
        echo "uptime at start: $(uptime)"
        echo "sluice-fs: $("$sluice" --version 2>&1 | head -1) ($sluice_src)"
        for d in "${wanted[@]}"; do
                case "$d" in
                virtiofsd) echo "Rust virtiofsd: $("$rust" --version 2>&1 | head -1) (--sandbox none --cache auto)" ;;
                legacy) echo "legacy virtiofsd: $(/usr/lib/qemu/virtiofsd --version 2>&1 | head -1) (-o cache=auto)" ;;
                esac
        done
        echo "settings: $reps repetitions, $duration ms per figure, $copy MiB copy; daemons ${wanted[*]}"
} >"$out/meta.txt"

# A phase's start and the machine's load then, on stderr and in meta.txt.
note() {
        local load
        load=$(uptime | sed 's/.*load/load/')
        say "$* ($load)"
        echo "phase: $* — $load" >>"$out/meta.txt"
}

start=$(date +%s)
daemons_only=()
mq_daemons=()
for d in "${wanted[@]}"; do
        [ "$d" = bare ] || daemons_only+=("$d")
        case "$d" in sluice|sluice-poll0|bare) mq_daemons+=("$d") ;; esac
done
# Memory first, from daemons nobody has talked to, one fresh set per rep.
if has_row mem && [ ${#daemons_only[@]} -gt 0 ]; then
        for rep in $(seq "$reps"); do
                note "memory, rep $rep/$reps"
                phase mem 1 "${daemons_only[@]}" -- --first-rep="$rep"
        done
fi
if [ -n "$main_rows" ]; then
        note "rows $main_rows, $reps interleaved reps"
        phase "$main_rows" 1 "${wanted[@]}" -- --reps="$reps"
fi
# Only sluice-fs serves more than one request queue.
if has_row mq && [ ${#mq_daemons[@]} -gt 0 ]; then
        note "request queues 1, 2, 4, $reps interleaved reps"
        phase mq 4 "${mq_daemons[@]}" -- --reps="$reps" --queues=1,2,4
fi
echo "uptime at end: $(uptime); wall time $(( $(date +%s) - start )) s" >>"$out/meta.txt"
"$bench" --summarize="$out" --primary=sluice
say "results in $out/results.md and $out/results.json"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# many-files.sh [--files N] [--daemons sluice,virtiofsd] [--trixie-cache DIR] BUILD_DIR
# many-files.sh --callgrind BUILD_DIR
#
# A tree of real size at the protocol level: bench/many-files (built in
# BUILD_DIR) walks N distinct files (default 1,000,000, made once on
# /dev/shm) through each daemon in turn: LOOKUP of each, GETATTRs, FORGET of
# all.  Prints the figures ("daemon key value") on stdout and writes them to
# BUILD_DIR/bench/many-files.txt.  Daemons run as sluice-test when run by
# root, with their default open-file limits (the hard limit is the machine's);
# sluice-fs with --poll-us=0 --sandbox=none, Rust virtiofsd with --sandbox
# none --cache auto (bench/fetch-trixie.sh; skipped when it cannot be had).
# $SLUICE_OPTS adds options to sluice-fs (say --max-inode-fds=N).
#
# --callgrind counts instead (valgrind): sluice-fs's instructions per LOOKUP +
# FORGET of a new file when every lookup makes it drop another inode's
# descriptor (--max-inode-fds=1000) and when none does: walks of 10,000 and
# of 20,000 files, the difference divided by 10,000 (start-up cancels out).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

files=1000000 daemons=sluice,virtiofsd trixie= callgrind=
while [ $# -gt 0 ]; do
        case "$1" in
        --callgrind) callgrind=1 ;;
        --files) files=$2; shift ;;
        --daemons) daemons=$2; shift ;;
        --trixie-cache) trixie=$2; shift ;;
        -h|--help) usage ;;
        -*) usage ;;
        *) break ;;
        esac
        shift
done
[ $# -eq 1 ] || usage
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
bench=$build/bench/many-files
sluice=$build/daemon/sluice-fs
trixie=${trixie:-$build/bench/trixie}
[ -x "$bench" ] && [ -x "$sluice" ] || { echo "many-files: build $build first" >&2; exit 1; }
say() { echo "many-files: $*" >&2; }

runas=()
if [ "$(id -u)" -eq 0 ]; then
        id sluice-test >/dev/null 2>&1 || useradd --create-home --user-group sluice-test
        runas=(setpriv --reuid=sluice-test --regid="$(id -g sluice-test)" --init-groups --)
fi

if [ -n "$callgrind" ]; then
        command -v valgrind >/dev/null || { say "valgrind is not installed"; exit 77; }
        work=$(mktemp -d /dev/shm/many-files-cg.XXXXXX)
        trap 'rm -rf "$work"' EXIT
        chmod 755 "$work"
        mkdir -p "$work/share" "$work/sock"
        [ ${#runas[@]} -eq 0 ] || chown sluice-test: "$work/sock" "$work"
        "$bench" --share="$work/share" --files=20000 --make-only
        count() {   # CAP FILES: the daemon's instruction total
                local sock=$work/sock/cg.sock out=$work/cg.$1.$2 p
                rm -f "$sock"
                "${runas[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" \
                        "$sluice" --socket-path="$sock" --shared-dir="$work/share" --poll-us=0 \
                        --sandbox=none --max-inode-fds="$1" </dev/null >"$work/cg.log" 2>&1 &
                p=$!
                for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done
                "$bench" --socket="$sock" --pid="$p" --share="$work/share" --files="$2" \
                        --lookups-only >/dev/null
                kill "$p"
                wait "$p" 2>/dev/null || true
                sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$out" | head -1
        }
        for cap in 1000 1000000; do
                a=$(count "$cap" 10000)
                b=$(count "$cap" 20000)
                echo "sluice-fs --max-inode-fds=$cap: $(( (b - a) / 10000 )) instructions per LOOKUP + FORGET"
        done
        exit 0
fi

# About 1 KiB of kernel memory per empty file on tmpfs.
need_kib=$((files + files / 2))
avail_kib=$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)
[ "$avail_kib" -gt $((need_kib * 2)) ] || { say "not enough memory for $files files on /dev/shm"; exit 1; }

work=/dev/shm/many-files-bench
share=$work/share
mkdir -p "$share" "$work/sock"
chmod 755 "$work" "$share"
[ ${#runas[@]} -eq 0 ] || chown sluice-test: "$work/sock"
say "making $files files under $share (once)"
"$bench" --share="$share" --files="$files" --make-only

out=$build/bench/many-files.txt
: >"$out"
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; }
trap cleanup EXIT

for d in ${daemons//,/ }; do
        sock=$work/sock/$d.sock
        rm -f "$sock"
        case "$d" in
        sluice)
                # shellcheck disable=SC2206 # $SLUICE_OPTS: extra options, split on purpose
                cmd=("$sluice" --socket-path="$sock" --shared-dir="$share" --poll-us=0 --sandbox=none ${SLUICE_OPTS:-}) ;;
        virtiofsd)
                if ! rust=$("$here/fetch-trixie.sh" "$trixie" virtiofsd); then
                        say "Rust virtiofsd unavailable: skipped"
                        continue
                fi
                cmd=("$rust" --socket-path="$sock" --shared-dir="$share" --sandbox none --cache auto) ;;
        *) say "unknown daemon $d"; exit 2 ;;
        esac
        "${runas[@]}" "${cmd[@]}" </dev/null >"$work/$d.log" 2>&1 &
        pid=$!
        for _ in $(seq 200); do
                [ -S "$sock" ] && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.05
        done
        # Rust virtiofsd runs through its unpacked loader: its worker is the
        # child of the wrapper (the process that holds the socket).
        wpid=$pid
        for c in $(pgrep -P "$pid" || true); do wpid=$c; done
        say "$d (pid $wpid): $(grep 'Max open files' /proc/"$wpid"/limits)"
        echo "$d nofile_limit $(awk '/Max open files/ { print $4 ":" $5 }' /proc/"$wpid"/limits)" | tee -a "$out"
        "$bench" --socket="$sock" --pid="$wpid" --share="$share" --files="$files" --label="$d" | tee -a "$out"
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        pid=
done
say "figures in $out (the files stay in $share; rm -rf $work to free the memory)"

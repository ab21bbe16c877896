#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cost-run.sh [OPTION...] BUILD — what one request costs each backend,
# counted, not timed: instructions (callgrind) and system calls (strace).
#
# Quick use (BUILD is a meson build directory with bench/cost-bench built;
# run as root for the legacy virtiofsd; needs valgrind, strace, python3):
#   bench/cost-run.sh build                         the whole table, 3 peers (~12 min at -n 200)
#   bench/cost-run.sh --peers sluice --together --no-syscalls -n 200 build
#                                                   sluice-fs's instructions, every row (~20 s)
#   bench/cost-run.sh --peers sluice --rows getattr,read-4k build
#   bench/cost-run.sh --annotate getattr build      where sluice-fs's instructions go, by
#                                                   function, and its system calls by name
#   bench/cost-run.sh --sluice-fs OTHER/sluice-fs ...   another sluice-fs binary
#   bench/cost-run.sh --check bench/cost-budgets.txt build     fails over budget (make check)
#   bench/cost-run.sh --update-budgets bench/cost-budgets.txt build   budgets = counts + 2 %
# Figures go to stdout as a markdown table, progress to stderr.  Do not edit
# this script while it runs (bash reads it as it goes): run a copy.
#
# For each row (bench/cost-bench --list), each backend serves the row twice,
# N and 2N iterations (bench/cost-bench), under `valgrind --tool=callgrind`:
# the difference of the two runs' instruction totals (every thread, every
# process) divided by N is what one iteration costs in user space, with
# start-up, set-up and exit cancelled out.  The same two runs under
# `strace -c -f` give system calls per iteration.
#
#   --rows LIST        rows (default all: cost-bench --list)
#   --peers LIST       sluice,rust,legacy (default all; rust needs
#                      bench/fetch-trixie.sh, legacy /usr/lib/qemu/virtiofsd)
#   -n N               iterations of the smaller run (default 500, 200 for
#                      --check and --update-budgets; the larger has 2N)
#   --no-syscalls      callgrind only
#   --no-instructions  strace only
#   --sluice-fs PATH   the sluice-fs binary (default BUILD/daemon/sluice-fs)
#   --trixie-cache DIR where fetch-trixie.sh keeps Rust virtiofsd
#                      (default BUILD/bench/trixie)
#   --tsv FILE         also write the figures as TSV (peer, row, measure, value)
#   --annotate ROW     sluice-fs alone on ROW: the functions that spend its
#                      instructions, per iteration (callgrind_annotate of the
#                      2N run minus the N run), and its system calls per
#                      iteration by name
#   --check FILE       sluice-fs alone; exit 1 when a row costs more
#                      instructions or system calls than FILE's budgets for
#                      it (or cannot be measured), 77 when valgrind is
#                      missing (--no-syscalls: instructions only)
#   --update-budgets FILE   sluice-fs alone; rewrites FILE's budgets as the
#                      figures measured now plus --margin, keeping each
#                      row's reason
#   --margin PCT       headroom for --update-budgets (default 2: five runs
#                      of N = 200 differed by up to 1.14 %)
#   --together         sluice-fs's instructions from two runs of all the rows
#                      (N each, then 2N each; callgrind dumps per row)
#                      instead of two per row: 3x faster, figures within
#                      ~1 % of the separate runs' (the other rows' files
#                      are there);
#                      --check and --update-budgets use it
#   --racy             send each request as soon as the last reply came, with
#                      EVENT_IDX (cost-bench without --quiesce): how the
#                      first published figures were taken; varies by +-20 %
#
# sluice-fs runs with --poll-us=0 (no busy-poll to count) and
# --sandbox=none, Rust virtiofsd 1.13 through its unpacked loader with
# --sandbox none --seccomp none, the legacy virtiofsd with -o
# sandbox=chroot (under valgrind without its seccomp filter, which valgrind
# cannot run: bench/cost-noseccomp.c).  As root every backend runs as root.
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

rows= peers=sluice,rust,legacy n= syscalls=1 instructions=1 sluice= trixie= tsv=
annotate= check= update= margin=2 bench_args=(--quiesce) together=0
while [ $# -gt 0 ]; do
        case "$1" in
        --rows) rows=$2; shift ;;
        --peers) peers=$2; shift ;;
        -n) n=$2; shift ;;
        --no-syscalls) syscalls=0 ;;
        --no-instructions) instructions=0 ;;
        --sluice-fs) sluice=$2; shift ;;
        --trixie-cache) trixie=$2; shift ;;
        --tsv) tsv=$2; shift ;;
        --annotate) annotate=$2; shift ;;
        --check) check=$2; shift ;;
        --update-budgets) update=$2; shift ;;
        --margin) margin=$2; shift ;;
        --racy) bench_args=(--event-idx) ;;
        --together) together=1 ;;
        -h|--help) usage ;;
        -*) usage ;;
        *) break ;;
        esac
        shift
done
[ $# -eq 1 ] || usage
[ -d "$1" ] || { echo "cost-run: no build directory $1" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
bench=$build/bench/cost-bench
sluice=${sluice:-$build/daemon/sluice-fs}
trixie=${trixie:-$build/bench/trixie}
say() { echo "cost-run: $*" >&2; }
[ -x "$bench" ] && [ -x "$sluice" ] || { say "build $build first (no bench/cost-bench or $sluice)"; exit 1; }
[ -n "$n" ] || if [ -n "$check$update" ]; then n=200; else n=500; fi
case "$n" in *[!0-9]*|0) say "-n needs a positive number"; exit 2 ;; esac
rows=${rows:-$("$bench" --list | awk '{print $1}' | paste -sd,)}
if [ -n "$check$update$annotate" ]; then
        peers=sluice
        [ -z "$annotate" ] || rows=$annotate
        # system calls are whole numbers per request: fewer iterations do
        [ -z "$check$update" ] || { together=1; sc_n=50; }
fi
if [ -n "$check$update" ] && [ -z "$rows" ]; then
        say "no rows"; exit 2
fi
if [ "$instructions" = 1 ] && ! command -v valgrind >/dev/null; then
        say "valgrind is not installed (Debian package valgrind)"
        exit 77
fi
if [ "$syscalls" = 1 ] && ! command -v strace >/dev/null; then
        say "strace is not installed (Debian package strace)"
        [ -z "$check" ] || exit 1
        exit 77
fi

work=$(mktemp -d /tmp/cost-run.XXXXXX)
dpid= keeper_pid=
cleanup() {
        [ -z "$dpid" ] || kill -KILL "$dpid" 2>/dev/null
        [ -z "$keeper_pid" ] || kill "$keeper_pid" 2>/dev/null
        rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Copies: a rebuild while this runs must not mix two programs in one figure.
cp "$bench" "$work/cost-bench" && bench=$work/cost-bench
cp "$sluice" "$work/sluice-fs" && sluice=$work/sluice-fs

# The peers that can run here.
rust_root=
want=()
for p in ${peers//,/ }; do
        case "$p" in
        sluice) want+=(sluice) ;;
        rust)
                if wrapper=$("$here/fetch-trixie.sh" "$trixie" virtiofsd); then
                        rust_root=$(dirname "$wrapper")/root
                        want+=(rust)
                else
                        say "Rust virtiofsd unavailable (fetch-trixie.sh failed): left out"
                fi ;;
        legacy)
                if [ ! -x /usr/lib/qemu/virtiofsd ]; then
                        say "no /usr/lib/qemu/virtiofsd (qemu-system-common): left out"
                elif [ "$(id -u)" -ne 0 ]; then
                        say "the legacy virtiofsd needs root: left out"
                else
                        want+=(legacy)
                fi ;;
        *) say "unknown peer $p (sluice, rust, legacy)"; exit 2 ;;
        esac
done

# daemon_argv PEER SOCKET SHARE: the backend's command line.
daemon_argv() {
        local peer=$1 sock=$2 share=$3
        case "$peer" in
        # --resume, as sluice-service and sluice-fs@ run it: every request
        # pays the bookkeeping a successor needs (start_keeper holds the fds)
        sluice) argv=(env NOTIFY_SOCKET="$(dirname "$sock")/notify" "$sluice" --resume
                      --socket-path="$sock" --shared-dir="$share" --poll-us=0 --sandbox=none) ;;
        rust) argv=("$rust_root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
                    --library-path "$rust_root/usr/lib/x86_64-linux-gnu" "$rust_root/usr/libexec/virtiofsd"
                    --socket-path="$sock" --shared-dir="$share" --sandbox none --seccomp none --cache auto) ;;
        legacy) argv=(/usr/lib/qemu/virtiofsd --socket-path="$sock" -o source="$share" -o cache=auto
                      -o sandbox=chroot) ;;
        esac
}

# start_keeper DIR: the keeper a --resume sluice-fs stores its fds with (the
# protocol of systemd's fd store, service/worker-fd-store.h), reduced to
# holding what it receives on DIR/notify until it is killed; its pid in
# $keeper_pid.
start_keeper() {
        python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
kept = []
while True:
    kept.append(s.recvmsg(4096, socket.CMSG_SPACE(253 * 4)))
' "$1/notify" >"$1/keeper.log" 2>&1 &
        keeper_pid=$!
        for _ in $(seq 200); do
                grep -q bound "$1/keeper.log" 2>/dev/null && return 0
                sleep 0.05
        done
        say "the fd keeper did not start: $(cat "$1/keeper.log")"
        return 1
}

stop_keeper() {
        [ -z "${keeper_pid:-}" ] || { kill "$keeper_pid" 2>/dev/null; wait "$keeper_pid" 2>/dev/null; }
        keeper_pid=
}

# run_once TOOL PEER ROWS N [TWICE]: serves ROWS (row after row) N times
# each, the row TWICE 2N times, with the backend under TOOL (callgrind or
# strace); the tool's output files are $last_dir/cg/out.* or
# $last_dir/out.strace.
# Returns non-zero (and says why) when anything failed.
run_once() {
        local tool=$1 peer=$2 row=$3 iters=$4 twice=${5:-} marks=${6:-} dir sock share log wrap=() i
        # a fresh folder per run (measure runs in a subshell: no counter)
        dir=$(mktemp -d "$work/run.XXXXXX")
        mkdir -p "$dir/share"
        sock=$dir/fs.sock share=$dir/share log=$dir/daemon.log
        daemon_argv "$peer" "$sock" "$share"
        stop_keeper   # a failed run's
        [ "$peer" != sluice ] || start_keeper "$dir" || return 1
        mkdir -p "$dir/cg"
        case "$tool" in
        callgrind) wrap=(valgrind --tool=callgrind --dump-instr=no --trace-children=yes
                         --callgrind-out-file="$dir/cg/out.%p")
                   [ -z "$marks" ] || wrap+=(--dump-before=pt_statfs) ;;
        strace) wrap=(strace -c -f -o "$dir/out.strace") ;;
        esac
        if [ "$peer" = legacy ] && [ "$tool" = callgrind ]; then
                # The legacy daemon chroots into the share before callgrind
                # writes its file: the same path must lead there from inside
                # (a bind mount in a mount namespace of its own).  It cannot
                # run under valgrind with its seccomp filter (cost-noseccomp.c).
                mkdir -p "$share$dir/cg"
                wrap=(unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
                      sh "$dir/cg" "$share$dir/cg" env LD_PRELOAD="$build/bench/cost-noseccomp.so" "${wrap[@]}")
        fi
        "${wrap[@]}" "${argv[@]}" </dev/null >"$log" 2>&1 &
        dpid=$!
        for i in $(seq 1200); do
                [ -S "$sock" ] && break
                kill -0 "$dpid" 2>/dev/null || break
                sleep 0.05
        done
        if [ ! -S "$sock" ]; then
                say "$peer under $tool did not create its socket ($row); its log:"
                tail -n 20 "$log" >&2
                kill -KILL "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=
                return 1
        fi
        # strace runs the backend as its child: that is the one to watch
        qpid=$dpid
        [ "$tool" != strace ] || qpid=$(awk '{print $1}' "/proc/$dpid/task/$dpid/children" 2>/dev/null)
        local args=("${bench_args[@]}")
        [ "${args[0]}" != --quiesce ] || args=(--quiesce="${qpid:-$dpid}")
        [ -z "$twice" ] || args+=(--twice="$twice")
        [ -z "$marks" ] || args+=(--mark)
        if ! "$bench" --socket="$sock" --row="$row" -n "$iters" "${args[@]}" 2>"$dir/bench.log"; then
                say "$peer under $tool: cost-bench failed on $row, n=$iters:"
                cat "$dir/bench.log" >&2
                tail -n 20 "$log" >&2
                kill -KILL "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=
                return 1
        fi
        [ ! -s "$dir/bench.log" ] || sed 's/^/  /' "$dir/bench.log" >&2
        # The virtiofsds exit when their frontend leaves; sluice-fs with
        # --socket-path waits for the next one: once it has said it saw the
        # frontend leave (the same work in every run), SIGTERM ends it cleanly.
        if [ "$peer" = sluice ]; then
                for i in $(seq 1200); do
                        grep -c 'frontend disconnected' "$log" >/dev/null && break
                        sleep 0.05
                done
                signal_daemon "$tool" TERM
        fi
        for i in $(seq 1200); do
                kill -0 "$dpid" 2>/dev/null || break
                sleep 0.05
        done
        if kill -0 "$dpid" 2>/dev/null; then
                say "$peer under $tool did not exit after $row; killed"
                kill -KILL "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=
                return 1
        fi
        wait "$dpid"
        local rc=$?
        dpid=
        stop_keeper
        if [ "$rc" != 0 ]; then
                say "$peer under $tool exited with status $rc after $row; its log:"
                tail -n 20 "$log" >&2
                return 1
        fi
        last_dir=$dir
}

# signal_daemon TOOL SIG: valgrind runs the daemon in its own process; strace
# runs it as its child.
signal_daemon() {
        local tool=$1 sig=$2 child
        if [ "$tool" = strace ]; then
                child=$(cat "/proc/$dpid/task/$dpid/children" 2>/dev/null | awk '{print $1}')
                [ -n "$child" ] && kill "-$sig" "$child" 2>/dev/null
        else
                kill "-$sig" "$dpid" 2>/dev/null
        fi
}

# The instructions of a run: every callgrind output file's total (a
# forking backend leaves one per process).
run_instructions() {
        local f sum=0 v
        for f in "$1"/cg/out.*; do
                [ -f "$f" ] || continue
                v=$(sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$f" | head -1)
                [ -n "$v" ] || return 1
                sum=$((sum + v))
        done
        [ "$sum" -gt 0 ] && echo "$sum"
}

# The system calls of a run: the calls column of strace -c's total line.
run_syscalls() {
        awk '$NF == "total" { print $4 }' "$1/out.strace"
}

# syscall_names DIR_N DIR_2N: "name count, ..." per iteration, most first.
syscall_names() {
        awk -v n="$n" 'NR == FNR { if ($NF != "total" && $4 ~ /^[0-9]+$/) a[$NF] = $4; next }
                $NF != "total" && $4 ~ /^[0-9]+$/ { d = ($4 - a[$NF]) / n; if (d >= 0.05 || d <= -0.05) printf "%.2f %s\n", d, $NF }' \
                "$1/out.strace" "$2/out.strace" | sort -k1,1nr -k2 |
                awk '{ v = $1; sub(/\.?0+$/, "", v); printf "%s%s %s", (NR > 1 ? ", " : ""), $2, v } END { print "" }'
}

# measure TOOL PEER ROW: per-iteration figure ((run 2N - run N) / N) on stdout;
# for strace a second line, the calls by name (syscall_names).
measure() {
        local tool=$1 peer=$2 row=$3 a b
        run_once "$tool" "$peer" "$row" "$n" || return 1
        a=$(if [ "$tool" = callgrind ]; then run_instructions "$last_dir"; else run_syscalls "$last_dir"; fi) || return 1
        dir_n=$last_dir
        run_once "$tool" "$peer" "$row" $((2 * n)) || return 1
        b=$(if [ "$tool" = callgrind ]; then run_instructions "$last_dir"; else run_syscalls "$last_dir"; fi) || return 1
        dir_2n=$last_dir
        [ -n "$a" ] && [ -n "$b" ] || { say "$peer $row: no $tool total"; return 1; }
        [ -z "${COST_RUN_DEBUG:-}" ] || say "$peer $row $tool: $a (n=$n), $b (n=$((2 * n)))"
        awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f\n", (b - a) / n }'
        [ "$tool" != strace ] || syscall_names "$dir_n" "$dir_2n"
}

# measure_together ROWS: "ROW FIGURE" lines for sluice-fs under callgrind,
# from two runs of all the rows one after the other (N each, then 2N each):
# cost-bench --mark sends a STATFS before every row and after the last, and
# callgrind dumps its counts each time sluice-fs enters pt_statfs, so the
# dump after row i's (number i + 1) holds row i alone (with the same STATFS
# around it in both runs).
measure_together() {
        local list=$1 a b row i=1
        run_once callgrind sluice "$list" "$n" "" mark || return 1
        a=$last_dir
        run_once callgrind sluice "$list" $((2 * n)) "" mark || return 1
        b=$last_dir
        for row in ${list//,/ }; do
                i=$((i + 1))
                local fa fb va vb
                fa=$(ls "$a"/cg/out.*."$i" 2>/dev/null | head -1)
                fb=$(ls "$b"/cg/out.*."$i" 2>/dev/null | head -1)
                va=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$fa" 2>/dev/null)
                vb=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$fb" 2>/dev/null)
                if [ -n "$va" ] && [ -n "$vb" ]; then
                        [ -z "${COST_RUN_DEBUG:-}" ] || say "sluice $row callgrind: $va (n=$n), $vb (n=$((2 * n)))"
                        awk -v r="$row" -v a="$va" -v b="$vb" -v n="$n" 'BEGIN { printf "%s %.1f\n", r, (b - a) / n }'
                else
                        say "no callgrind dump for row $row (part $i)"
                        echo "$row failed"
                fi
        done
}

# ---- --annotate: the functions and the system calls of one row ----
if [ -n "$annotate" ]; then
        "$bench" --list | awk '{print $1}' | grep -cx -- "$annotate" >/dev/null ||
                { say "no row $annotate"; exit 2; }
        # not in a subshell: dir_n and dir_2n are wanted here
        measure callgrind sluice "$annotate" >"$work/ir" || exit 1
        echo "## sluice-fs, $annotate: $(cat "$work/ir") instructions per iteration"
        echo
        echo "Instructions per iteration by function (the $((2 * n))-iteration run minus the $n-iteration run, / $n):"
        echo
        python3 "$here/cost-annotate.py" "$n" "$dir_n" "$dir_2n" "${COST_ANNOTATE_TOP:-30}" || exit 1
        if command -v strace >/dev/null; then
                run_once strace sluice "$annotate" "$n" || exit 1
                sa=$last_dir
                run_once strace sluice "$annotate" $((2 * n)) || exit 1
                echo
                echo "System calls per iteration (strace -c -f, the 2N run minus the N run, / N):"
                echo
                syscall_names "$sa" "$last_dir" | tr ',' '\n' | sed 's/^ *//'
        fi
        exit 0
fi

# ---- the table ----
declare -A fig
status=0
if [ "$together" = 1 ] && [ "$instructions" = 1 ] && [[ " ${want[*]} " == *" sluice "* ]]; then
        for row in ${rows//,/ }; do fig[sluice,$row,ir]=failed; done
        while read -r row v; do
                fig[sluice,$row,ir]=$v
                say "$row sluice: $v instructions per iteration"
        done < <(measure_together "$rows")
        for row in ${rows//,/ }; do [ "${fig[sluice,$row,ir]}" != failed ] || status=1; done
fi
for row in ${rows//,/ }; do
        for peer in "${want[@]}"; do
                if [ "$instructions" = 1 ] && { [ "$together" = 0 ] || [ "$peer" != sluice ]; }; then
                        if v=$(measure callgrind "$peer" "$row"); then
                                fig[$peer,$row,ir]=$v
                        else
                                fig[$peer,$row,ir]=failed status=1
                        fi
                        say "$row $peer: ${fig[$peer,$row,ir]} instructions per iteration"
                fi
                if [ "$syscalls" = 1 ]; then
                        if v=$(n=${sc_n:-$n} measure strace "$peer" "$row"); then
                                fig[$peer,$row,sc]=$(sed -n 1p <<<"$v")
                                fig[$peer,$row,names]=$(sed -n 2p <<<"$v")
                        else
                                fig[$peer,$row,sc]=failed status=1
                        fi
                        say "$row $peer: ${fig[$peer,$row,sc]} system calls per iteration"
                fi
        done
done

get() { echo "${fig[$1]:--}"; }
fmt() { # thousands separators, one decimal only below 100
        awk -v v="$1" 'BEGIN { if (v !~ /^-?[0-9.]+$/) { print v; exit }
                if (v < 100) { printf "%.1f\n", v; exit }
                s = sprintf("%.0f", v); o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2fx\n", a / b; else print "-" }'; }

if [ -n "$tsv" ]; then
        for row in ${rows//,/ }; do
                for peer in "${want[@]}"; do
                        [ "$instructions" = 0 ] || printf '%s\t%s\tinstructions\t%s\n' "$peer" "$row" "$(get "$peer,$row,ir")"
                        [ "$syscalls" = 0 ] || printf '%s\t%s\tsyscalls\t%s\n' "$peer" "$row" "$(get "$peer,$row,sc")"
                done
        done >"$tsv"
fi

# ---- --check / --update-budgets ----
# budget_of ROW FILE [COLUMN]: column 2 instructions, 3 system calls (when
# it is a number: older files have the reason there).
budget_of() { awk -v r="$1" -v c="${3:-2}" '!/^#/ && $1 == r { if ($c ~ /^[0-9.]+$/) print $c; exit }' "$2"; }
if [ -n "$check" ]; then
        [ -f "$check" ] || { say "no budgets file $check"; exit 1; }
        for row in ${rows//,/ }; do
                v=$(get "sluice,$row,ir") b=$(budget_of "$row" "$check")
                if [ -z "$b" ]; then
                        echo "FAIL $row: no budget in $check (measured $v instructions per iteration)"
                        status=1
                elif ! [[ "$v" =~ ^[0-9.]+$ ]]; then
                        echo "FAIL $row: could not be measured (budget $b)"
                        status=1
                elif awk -v v="$v" -v b="$b" 'BEGIN { exit !(v > b) }'; then
                        echo "FAIL $row: $(fmt "$v") instructions per iteration, budget $(fmt "$b") ($check)"
                        status=1
                else
                        echo "ok   $row: $(fmt "$v") instructions per iteration, budget $(fmt "$b")$(awk -v v="$v" -v b="$b" \
                                'BEGIN { if (v < 0.9 * b) printf " (%.0f %% under: lower it with --update-budgets)", 100 - 100 * v / b }')"
                fi
                [ "$syscalls" = 1 ] || continue
                v=$(get "sluice,$row,sc") b=$(budget_of "$row" "$check" 3)
                if [ -z "$b" ]; then
                        echo "FAIL $row: no system call budget in $check (measured $v per iteration)"
                        status=1
                elif ! [[ "$v" =~ ^[0-9.]+$ ]]; then
                        echo "FAIL $row: system calls could not be counted (budget $b)"
                        status=1
                elif awk -v v="$v" -v b="$b" 'BEGIN { exit !(v > b) }'; then
                        echo "FAIL $row: $v system calls per iteration, budget $b ($check)"
                        status=1
                else
                        echo "ok   $row: $v system calls per iteration, budget $b"
                fi
        done
        exit $status
fi
if [ -n "$update" ]; then
        [ "$status" = 0 ] || { say "some rows could not be measured: $update left as it was"; exit 1; }
        tmp=$(mktemp "$update.XXXXXX")
        {
                if [ -f "$update" ]; then grep '^#' "$update"; fi
                for row in ${rows//,/ }; do
                        v=$(get "sluice,$row,ir")
                        reason=$( [ -f "$update" ] && awk -v r="$row" '!/^#/ && $1 == r { $1 = ""; $2 = ""
                                if ($3 ~ /^[0-9.]+$/) $3 = ""; sub(/^ */, ""); print; exit }' "$update")
                        b=$(awk -v v="$v" -v m="$margin" 'BEGIN { printf "%.0f\n", v * (1 + m / 100) + 0.5 }')
                        # system calls: the count itself (five runs agreed exactly)
                        sc=$(awk -v v="$(get "sluice,$row,sc")" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%g\n", v; else print "-" }')
                        printf '%-36s %8s %6s  %s\n' "$row" "$b" "$sc" "${reason:-measured $(date -u +%Y-%m-%d)}"
                done
                # rows not measured now keep their lines
                [ -f "$update" ] && awk -v rows=",$rows," '!/^#/ && NF && index(rows, "," $1 ",") == 0' "$update"
        } >"$tmp"
        mv "$tmp" "$update"
        say "budgets written to $update"
        exit 0
fi

# ---- the markdown table ----
label() {
        case "$1" in
        getattr) echo "GETATTR" ;;
        lookup-forget) echo "LOOKUP + FORGET" ;;
        read-4k) echo "READ 4 KiB" ;;
        write-4k) echo "WRITE 4 KiB" ;;
        read-1m) echo "READ 1 MiB" ;;
        write-1m) echo "WRITE 1 MiB" ;;
        create-release-forget-unlink) echo "CREATE + RELEASE + UNLINK + FORGET" ;;
        opendir-readdirplus100-releasedir) echo "OPENDIR + READDIRPLUS (100 entries) + RELEASEDIR" ;;
        setattr) echo "SETATTR (mode)" ;;
        rename) echo "RENAME" ;;
        *) echo "$1" ;;
        esac
}
echo
echo "Instructions (callgrind) and system calls (strace -c -f) per request, one outstanding; N = $n vs $((2 * n))."
echo
echo "| request | sluice-fs instr | Rust virtiofsd | ratio | legacy virtiofsd | sluice-fs syscalls | Rust syscalls | legacy syscalls |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for row in ${rows//,/ }; do
        s=$(get "sluice,$row,ir") r=$(get "rust,$row,ir") l=$(get "legacy,$row,ir")
        printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(label "$row")" "$(fmt "$s")" "$(fmt "$r")" \
                "$(ratio "$s" "$r")" "$(fmt "$l")" "$(fmt "$(get "sluice,$row,sc")")" \
                "$(fmt "$(get "rust,$row,sc")")" "$(fmt "$(get "legacy,$row,sc")")"
done
if [ "$syscalls" = 1 ]; then
        echo
        echo "System calls per request by name (strace -c -f, every thread and process of the backend):"
        echo
        echo "| request | sluice-fs | Rust virtiofsd | legacy virtiofsd |"
        echo "|---|---|---|---|"
        for row in ${rows//,/ }; do
                printf '| %s | %s | %s | %s |\n' "$(label "$row")" "$(get "sluice,$row,names")" \
                        "$(get "rust,$row,names")" "$(get "legacy,$row,names")"
        done
fi
exit $status

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cost-run.sh [OPTION...] BUILD — what one request costs each backend,
# counted, not timed: instructions (callgrind) and system calls (strace).
#
# Quick use (BUILD is a meson build directory with bench/cost-bench built):
#   bench/cost-run.sh build                         the whole table, 3 peers (~15 min)
#   bench/cost-run.sh --peers sluice build          sluice-fs alone
#   bench/cost-run.sh --peers sluice --rows getattr,read-4k --no-syscalls build
#   bench/cost-run.sh --annotate getattr build      where sluice-fs's instructions go
#   bench/cost-run.sh --check bench/cost-budgets.txt build     fails over budget
#   bench/cost-run.sh --update-budgets bench/cost-budgets.txt build
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
#   -n N               iterations of the smaller run (default 500; the
#                      larger has 2N)
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
#   --check FILE       sluice-fs alone, instructions only; exit 1 when a row
#                      costs more than FILE's budget for it (or cannot be
#                      measured), 77 when valgrind is missing
#   --update-budgets FILE   sluice-fs alone; rewrites FILE's budgets as the
#                      figures measured now plus --margin, keeping each
#                      row's reason
#   --margin PCT       headroom for --update-budgets (default 1)
#
# sluice-fs runs with --poll-us=0 (no busy-poll to count) and
# --sandbox=none, Rust virtiofsd 1.13 through its unpacked loader with
# --sandbox none --seccomp none, the legacy virtiofsd with -o
# sandbox=chroot (it always installs its seccomp filter; see the
# legacy_note below).  As root every backend runs as root.
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

rows= peers=sluice,rust,legacy n=500 syscalls=1 instructions=1 sluice= trixie= tsv=
annotate= check= update= margin=1
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
case "$n" in ''|*[!0-9]*|0) say "-n needs a positive number"; exit 2 ;; esac
rows=${rows:-$("$bench" --list | awk '{print $1}' | paste -sd,)}
if [ -n "$check$update$annotate" ]; then
        peers=sluice
        [ -z "$annotate" ] || rows=$annotate
        [ -z "$check$update" ] || syscalls=0
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
        exit 77
fi

work=$(mktemp -d /tmp/cost-run.XXXXXX)
dpid=
cleanup() {
        [ -z "$dpid" ] || kill -KILL "$dpid" 2>/dev/null
        rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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
        sluice) argv=("$sluice" --socket-path="$sock" --shared-dir="$share" --poll-us=0 --sandbox=none) ;;
        rust) argv=("$rust_root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
                    --library-path "$rust_root/usr/lib/x86_64-linux-gnu" "$rust_root/usr/libexec/virtiofsd"
                    --socket-path="$sock" --shared-dir="$share" --sandbox none --seccomp none --cache auto) ;;
        legacy) argv=(/usr/lib/qemu/virtiofsd --socket-path="$sock" -o source="$share" -o cache=auto
                      -o sandbox=chroot) ;;
        esac
}

# run_once TOOL PEER ROW N: serves ROW N times with the backend under TOOL
# (callgrind or strace); the tool's output files are $last_dir/out.*.
# Returns non-zero (and says why) when anything failed.
run_once() {
        local tool=$1 peer=$2 row=$3 iters=$4 dir sock share log wrap=() i
        # a fresh folder per run (measure runs in a subshell: no counter)
        dir=$(mktemp -d "$work/run.XXXXXX")
        mkdir -p "$dir/share"
        sock=$dir/fs.sock share=$dir/share log=$dir/daemon.log
        daemon_argv "$peer" "$sock" "$share"
        case "$tool" in
        callgrind) wrap=(valgrind --tool=callgrind --dump-instr=no --trace-children=yes
                         --callgrind-out-file="$dir/out.%p") ;;
        strace) wrap=(strace -c -f -o "$dir/out.strace") ;;
        esac
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
        if ! "$bench" --socket="$sock" --row="$row" -n "$iters" --quiesce="${qpid:-$dpid}" 2>"$dir/bench.log"; then
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
        for f in "$1"/out.*; do
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

# measure TOOL PEER ROW: per-iteration figure ((run 2N - run N) / N) on stdout.
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
}

# ---- --annotate: the functions and the system calls of one row ----
if [ -n "$annotate" ]; then
        "$bench" --list | awk '{print $1}' | grep -qx -- "$annotate" 2>/dev/null ||
                { say "no row $annotate"; exit 2; }
        measure callgrind sluice "$annotate" >"$work/ir" || exit 1
        echo "## sluice-fs, $annotate: $(cat "$work/ir") instructions per iteration"
        echo
        echo "Functions (inclusive of nothing: self cost), instructions per iteration, 2N run minus N run:"
        echo
        for d in "$dir_n" "$dir_2n"; do
                for f in "$d"/out.*; do
                        callgrind_annotate --threshold=100 "$f" 2>/dev/null
                done | awk '/^[ ]*[0-9,]+ .*[:]/ { v = $1; gsub(",", "", v); $1 = ""; sub(/^ /, ""); sub(/ \[.*\]$/, ""); s[$0] += v }
                        END { for (k in s) print s[k] "\t" k }' >"$d/functions.tsv"
        done
        awk -F'\t' -v n="$n" 'NR == FNR { a[$2] = $1; next } { d = ($1 - a[$2]) / n; if (d >= 1 || d <= -1) printf "%10.1f  %s\n", d, $2 }' \
                "$dir_n/functions.tsv" "$dir_2n/functions.tsv" | sort -rn | head -40
        if command -v strace >/dev/null; then
                run_once strace sluice "$annotate" "$n" || exit 1
                sa=$last_dir
                run_once strace sluice "$annotate" $((2 * n)) || exit 1
                echo
                echo "System calls per iteration (strace -c -f, 2N run minus N run):"
                echo
                awk -v n="$n" 'NR == FNR { if ($NF != "total" && $4 ~ /^[0-9]+$/) a[$NF] = $4; next }
                        $NF != "total" && $4 ~ /^[0-9]+$/ { d = ($4 - a[$NF]) / n; if (d >= 0.05 || d <= -0.05) printf "%8.2f  %s\n", d, $NF }' \
                        "$sa/out.strace" "$last_dir/out.strace" | sort -rn
        fi
        exit 0
fi

# ---- the table ----
declare -A fig
status=0
for row in ${rows//,/ }; do
        for peer in "${want[@]}"; do
                if [ "$instructions" = 1 ]; then
                        if v=$(measure callgrind "$peer" "$row"); then
                                fig[$peer,$row,ir]=$v
                        else
                                fig[$peer,$row,ir]=failed status=1
                        fi
                        say "$row $peer: ${fig[$peer,$row,ir]} instructions per iteration"
                fi
                if [ "$syscalls" = 1 ]; then
                        if v=$(measure strace "$peer" "$row"); then
                                fig[$peer,$row,sc]=$v
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
budget_of() { awk -v r="$1" '!/^#/ && $1 == r { print $2; exit }' "$2"; }
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
                        echo "ok   $row: $(fmt "$v") instructions per iteration, budget $(fmt "$b")"
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
                        reason=$( [ -f "$update" ] && awk -v r="$row" '!/^#/ && $1 == r { $1 = ""; $2 = ""; sub(/^  */, ""); print; exit }' "$update")
                        b=$(awk -v v="$v" -v m="$margin" 'BEGIN { printf "%.0f\n", v * (1 + m / 100) + 0.5 }')
                        printf '%-36s %8s  %s\n' "$row" "$b" "${reason:-measured $(date -u +%Y-%m-%d) plus ${margin} %}"
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
        create-release-forget-unlink) echo "CREATE + RELEASE + FORGET + UNLINK" ;;
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
exit $status

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/bigtree.sh [OPTIONS] [BUILD] — a tree of real size on the share: Debian's
# linux-source-6.1 (~83,700 entries, 1.3 GB) in a Linux 6.12 TCG guest.
#
# Per guest (bench/bigtree-workload.sh), caches dropped before each phase:
#   extract  tar -xo -f /dev/vda: the uncompressed tarball is the guest's read-only
#            virtio disk, decompressed once on the host (xz under TCG would be the
#            whole measurement), so this is file creation and writing on the share
#   walk     find | xargs stat
#   du       du -s
#   grep     grep -rF STRING | wc -l (GNU grep, shipped into the guest)
#   rm       rm -rf
# Peers, interleaved (A B C D, then again): sluice (sluice-fs, default options),
# rust (Rust virtiofsd 1.13 from Debian 13, --cache auto, bench/fetch-trixie.sh),
# virtiofsd (QEMU 7.2's legacy C daemon, -o cache=auto, root) and 9p (QEMU's
# virtio-9p, msize=512000, cache=mmap).  The host samples, at each phase's start
# and end, the wall time and the CPU time (utime+stime of /proc/PID/stat, all
# threads) of the daemon's processes, or for 9p of QEMU's threads other than the
# vCPU, and the descriptors they hold (peak per phase, counted every 5 s).
#
# Options:
#   --reps N             interleaved repetitions (default 3)
#   --peers A,B,…        default sluice,rust,virtiofsd,9p
#   --nofile N           RLIMIT_NOFILE, soft and hard, of every daemon (and of QEMU):
#                        default 20000, this machine's hard limit (raising it needs
#                        CAP_SYS_RESOURCE, which root lacks here)
#   --nofile-PEER N      the same for one peer (PEER: sluice, rust, virtiofsd, 9p)
#   --drop-every S       the guest drops its dentry and inode caches (drop_caches=2)
#                        every S seconds while a phase runs, so that it knows (and the
#                        daemon holds a descriptor for) fewer inodes: without it every
#                        daemon that keeps one per known inode meets EMFILE at the
#                        limit; 0 = never (default 0)
#   --drop-every-PEER S  the same for one peer
#   --sluice-arg ARG     extra sluice-fs argument, repeatable
#   --mem MIB            guest RAM (default 2048: the dentry cache of the whole tree)
#   --dir DIR            where the shared folders live (default /dev/shm: tmpfs, so
#                        that the host's disk is not measured; 1.3 GB, removed after
#                        each guest)
#   --cache DIR          the package and the .tar (default BUILD/bench/bigtree-cache)
#   --out DIR            results (default BUILD/bench/bigtree): results.md, raw/
#   --timeout S          one guest, boot to power-off (default 3600)
#   --phase-timeout S    one phase in the guest (default 1500)
#   --grep STRING        what grep -r looks for (default virtio_fs)
#   --subset DIRS        only these top-level folders of the tree, comma-separated
#                        (default Documentation,include,fs: 17,887 entries, 127 MB,
#                        below the 20,000 descriptors every daemon may hold, so
#                        that all of them finish it as it is); "all": the whole
#                        tree (83,731 entries, 1.3 GB; ~12 min of extraction alone
#                        per guest here under load)
#   --phases A,B,…       phases to run (default extract,walk,du,grep,rm; the host
#                        removes what is left)
#   --sluice-fs PATH     default BUILD/daemon/sluice-fs
#
# Run as root (the legacy daemon needs it); sluice-fs and Rust virtiofsd run as
# $SLUICE_TEST_USER, else sluice-test.  Not a test: nothing passes or fails on a
# figure; a phase that fails (EMFILE, a timeout) is reported as failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "bigtree: $*" >&2; exit 1; }

all_peers=(sluice rust virtiofsd 9p)
reps=3 peers=sluice,rust,virtiofsd,9p nofile=20000 drop=0 mem=2048 share_root=/dev/shm
cache='' out='' timeout=3600 phase_timeout=1500 needle=virtio_fs sluice_fs=''
subset=Documentation,include,fs phases=extract,walk,du,grep,rm
declare -A nofile_of=() drop_of=()
sluice_args=()
while [ $# -gt 0 ]; do
        case "$1" in
        --reps) reps=$2; shift ;;
        --peers) peers=$2; shift ;;
        --nofile) nofile=$2; shift ;;
        --nofile-*) nofile_of[${1#--nofile-}]=$2; shift ;;
        --drop-every) drop=$2; shift ;;
        --drop-every-*) drop_of[${1#--drop-every-}]=$2; shift ;;
        --sluice-arg) sluice_args+=("$2"); shift ;;
        --mem) mem=$2; shift ;;
        --dir) share_root=$2; shift ;;
        --cache) cache=$2; shift ;;
        --out) out=$2; shift ;;
        --timeout) timeout=$2; shift ;;
        --phase-timeout) phase_timeout=$2; shift ;;
        --grep) needle=$2; shift ;;
        --subset) subset=$2; shift ;;
        --phases) phases=$2; shift ;;
        --sluice-fs) sluice_fs=$2; shift ;;
        -h|--help) usage ;;
        -*) echo "bigtree: unknown option $1" >&2; usage ;;
        *) break ;;
        esac
        shift
done
[ $# -le 1 ] || usage
build=${1:-build}
[ -d "$build" ] || die "no build directory $build"
build=$(cd "$build" && pwd)
[ "$(id -u)" = 0 ] || die "run as root (the legacy virtiofsd and the descriptor limits need it)"
IFS=, read -r -a sel <<<"$peers"
for p in "${sel[@]}" "${!nofile_of[@]}" "${!drop_of[@]}"; do
        [[ " ${all_peers[*]} " == *" $p "* ]] || die "unknown peer $p (use ${all_peers[*]})"
done
for n in "$reps" "$nofile" "$drop" "$mem" "$timeout" "$phase_timeout" "${nofile_of[@]}" "${drop_of[@]}"; do
        [[ "$n" =~ ^[0-9]+$ ]] || die "'$n' is not a number"
done
[[ "$needle" =~ ^[A-Za-z0-9_.-]+$ ]] || die "--grep: letters, digits, _ . - only"
[[ "$subset" =~ ^[A-Za-z0-9_.,-]+$ ]] || die "--subset: folder names, comma-separated"
[[ "$phases" =~ ^[a-z,]+$ ]] || die "--phases: names, comma-separated"
[ -n "$sluice_fs" ] || sluice_fs=$build/daemon/sluice-fs
[ -x "$sluice_fs" ] || die "no sluice-fs at $sluice_fs"
[ -n "$cache" ] || cache=$build/bench/bigtree-cache
[ -n "$out" ] || out=$build/bench/bigtree
mkdir -p "$cache" "$out/raw" || die "cannot create $cache or $out"
cache=$(cd "$cache" && pwd) out=$(cd "$out" && pwd)
user=${SLUICE_TEST_USER:-}
[ -n "$user" ] || ! id sluice-test >/dev/null 2>&1 || user=sluice-test

# ---- the tree: the package's tarball, decompressed once --------------------------------
tarball=$cache/linux-source-6.1.tar
if [ ! -s "$tarball" ]; then
        deb=$(ls "$cache"/linux-source-6.1_*.deb 2>/dev/null | sort -V | tail -1)
        if [ -z "$deb" ]; then
                echo "bigtree: apt-get download linux-source-6.1 (139 MB, once)" >&2
                (cd "$cache" && timeout 900 apt-get -q -o APT::Sandbox::User=root download linux-source-6.1) >&2 ||
                        die "apt-get download linux-source-6.1 failed"
                deb=$(ls "$cache"/linux-source-6.1_*.deb | sort -V | tail -1)
        fi
        echo "bigtree: decompressing the tarball of $deb (once)" >&2
        dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-6.1.tar.xz | xz -dc >"$tarball.tmp" ||
                die "cannot unpack $deb"
        mv -f "$tarball.tmp" "$tarball"
fi
tree_version=$(basename "$(ls "$cache"/linux-source-6.1_*.deb 2>/dev/null | sort -V | tail -1)" .deb)
if [ "$subset" != all ]; then
        # The chosen folders as a tar of their own, made once.
        sub=$cache/linux-source-6.1-${subset//,/+}.tar
        if [ ! -s "$sub" ]; then
                stage=$(mktemp -d "$cache/stage.XXXXXX") || die "cannot stage the subset"
                IFS=, read -r -a dirs <<<"$subset"
                tar -xf "$tarball" -C "$stage" "${dirs[@]/#/linux-source-6.1/}" ||
                        { rm -rf "$stage"; die "cannot extract $subset from $tarball"; }
                tar -cf "$sub.tmp" -C "$stage" linux-source-6.1 || { rm -rf "$stage"; die "cannot make $sub"; }
                rm -rf "$stage"
                mv -f "$sub.tmp" "$sub"
        fi
        tarball=$sub
fi
entries=$(tar -tf "$tarball" | wc -l)

# ---- what the guest needs beyond the image -----------------------------------------------
kout=$("$here/fetch-trixie.sh" "$build/trixie" kernel) || die "no Linux 6.12 (fetch-trixie.sh kernel)"
read -r _ modroot <<<"$kout"
vblk=$(find "$modroot/lib/modules" -name 'virtio_blk.ko*' | head -1)
files=()
if [ -n "$vblk" ]; then
        case "$vblk" in
        *.xz) xz -dc "$vblk" >"$cache/virtio_blk.ko" ;;
        *.zst) zstd -qdc "$vblk" >"$cache/virtio_blk.ko" ;;
        *) cp "$vblk" "$cache/virtio_blk.ko" ;;
        esac
        files+=(--file "$cache/virtio_blk.ko:/lib/bigtree/virtio_blk.ko")
fi
# GNU grep and what it links (libc and the loader too: the image may lack them).
for f in /bin/grep $(ldd /bin/grep | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
        case "$f" in
        /bin/grep) files+=(--file "/bin/grep:/usr/bin/grep-gnu") ;;
        *) files+=(--file "$(realpath "$f"):$f") ;;
        esac
done
needs_rust=0
[[ " ${sel[*]} " == *" rust "* ]] && needs_rust=1
rust=''
if [ "$needs_rust" = 1 ]; then
        rust=$("$here/fetch-trixie.sh" "$build/trixie" virtiofsd) || die "no Rust virtiofsd (fetch-trixie.sh)"
fi

work=$(mktemp -d "$share_root/sluice-bigtree.XXXXXX") || die "cannot create a folder in $share_root"
chmod 0755 "$work"
mon_pid=''
cleanup() {
        [ -z "$mon_pid" ] || kill "$mon_pid" 2>/dev/null
        rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

run_one() {   # PEER REP
        local peer=$1 rep=$2 backend share base lim dr status
        local -a args=()
        lim=${nofile_of[$peer]:-$nofile}
        dr=${drop_of[$peer]:-$drop}
        case "$peer" in
        sluice) backend=sluice; for a in "${sluice_args[@]}"; do args+=(--daemon-arg "$a"); done ;;
        rust) backend="rust-virtiofsd" ;;
        # As root it would raise its own limit: 0 leaves the one given here.
        virtiofsd) backend=virtiofsd args+=(--daemon-arg --rlimit-nofile=0) ;;
        9p) backend=9p ;;
        esac
        share=$work/share-$peer-$rep
        mkdir "$share" || return 1
        if [ -n "$user" ] && { [ "$peer" = sluice ] || [ "$peer" = rust ]; }; then
                chown "$user:" "$share" || return 1
        fi
        base=$out/raw/$peer.$rep
        rm -f "$base".*
        echo "peer=$peer rep=$rep nofile=$lim drop_every=$dr mem=$mem user=${user:-root} sluice_args=${sluice_args[*]}" >"$base.params"
        local -a mon=(python3 "$here/bigtree-monitor.py" --console "$base.console" --share "$share"
                      --out "$base.samples" --timeout "$((timeout + 60))")
        [ "$peer" = 9p ] && mon+=(--no-daemon)
        : >"$base.console"
        "${mon[@]}" 2>"$base.monitor-err" &
        mon_pid=$!
        SLUICE_BUILD_ROOT=$build SLUICE_TEST_USER=$user SLUICE_GUEST_ACCEL=tcg SLUICE_RUST_VIRTIOFSD=$rust \
        timeout -k 30 "$((timeout + 120))" prlimit --nofile="$lim:$lim" -- \
        "$top/tests/guest/run-guest.sh" --quiet --timeout "$timeout" --kernel 6.12 --mem "$mem" \
                --image "$build/tests/guest/image" --backend "$backend" --shared-dir "$share" \
                --sluice-fs "$sluice_fs" --disk "$tarball" "${files[@]}" \
                --env "BIGTREE_GREP=$needle" --env "BIGTREE_PHASE_TIMEOUT=$phase_timeout" \
                --env "BIGTREE_DROP_EVERY=$dr" --env "BIGTREE_PHASES=$phases" \
                --console "$base.console" --daemon-log "$base.daemon" \
                "${args[@]}" "$here/bigtree-workload.sh" >"$base.status" 2>&1
        status=$?
        wait "$mon_pid"
        mon_pid=''
        local t0=$SECONDS
        rm -rf "$share"
        echo "host rm -rf of the share: $((SECONDS - t0)) s" >>"$base.status"
        return $status
}

total=$((reps * ${#sel[@]})) n=0
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bigtree: ${sel[*]} x $reps; tree $tree_version, $subset: $entries entries, $(stat -c %s "$tarball") bytes of tar; phases $phases; guest 6.12, ${mem} MiB;" \
     "nofile $nofile (${!nofile_of[*]:+overrides: $(for k in "${!nofile_of[@]}"; do printf '%s=%s ' "$k" "${nofile_of[$k]}"; done)});" \
     "drop every $drop s (${!drop_of[*]:+overrides: $(for k in "${!drop_of[@]}"; do printf '%s=%s ' "$k" "${drop_of[$k]}"; done)}); $(uptime)"
for rep in $(seq "$reps"); do
        for peer in "${sel[@]}"; do
                n=$((n + 1))
                printf 'bigtree: [%d/%d] %-10s rep %d (%s) ... ' "$n" "$total" "$peer" "$rep" "$(date -u +%H:%M:%S)"
                t0=$(date +%s)
                if run_one "$peer" "$rep"; then
                        echo "ok ($(( $(date +%s) - t0 )) s)"
                else
                        echo "FAILED (status $?, $(( $(date +%s) - t0 )) s; see $out/raw/$peer.$rep.status)"
                fi
        done
done
versions="sluice-fs: $("$sluice_fs" --version 2>&1 | head -1) ($(git -C "$top" rev-parse --short HEAD 2>/dev/null))"
[ -z "$rust" ] || versions+="; Rust virtiofsd: $("$rust" --version 2>&1 | head -1)"
versions+="; legacy virtiofsd: $(/usr/lib/qemu/virtiofsd --version 2>&1 | head -1)"
versions+="; QEMU: $(qemu-system-x86_64 --version | head -1)"
{
        echo "Tree: $tree_version, folders $subset: $entries entries ($(stat -c %s "$tarball") bytes of tar), phases $phases; grep for '$needle'; guest Linux 6.12, 1 vCPU, $mem MiB, TCG; shares in $share_root."
        echo "Versions: $versions"
        echo "Machine: $(nproc) CPUs, load $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(date -u +%FT%TZ)."
} >"$out/meta.txt"
python3 "$here/bigtree-report.py" "$out/raw" --peers "${sel[*]}" --meta "$out/meta.txt" >"$out/results.md" ||
        die "the report failed (raw results in $out/raw)"
cat "$out/results.md"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/idle-run.sh — what a Sluice desktop costs when nothing happens:
# sluice-service with N running shares (no VM, no client), its N sluice-fs
# workers and, with --applet, sluice-applet hidden in a tray; voluntary
# context switches of every process over a window (each one is a wake-up:
# a process that sleeps until something happens makes none), and its memory
# (RSS, PSS from smaps_rollup; with --detail, what the biggest mappings are).
#
#   sudo bench/idle-run.sh [--shares N] [--seconds S] [--applet] [--watch K]
#                          [--libvirt URIS] [--threads] [--detail] BUILD
#
# BUILD: a build directory (service/sluice-service, cli/sluicectl,
# daemon/sluice-fs, applet/sluice-applet, tests/applet/sa-test-desktop).
# Root runs the measurement (it reads every process's smaps); the stack runs
# as $SLUICE_TEST_USER (default sluice-test) on its own session bus, the way
# a desktop user runs it.  --watch K: `sluicectl stats --watch` on the first
# K shares during the window (what a watching client costs).  --libvirt:
# SLUICE_LIBVIRT_URIS for the service (default "none": no libvirt at all).
# Prints a Markdown table.
set -uo pipefail

shares=20 seconds=30 applet=0 watch=0 threads=0 detail=0 libvirt=none
user=${SLUICE_TEST_USER:-sluice-test}

if [ "${1:-}" = --inner ]; then
        # ---- as the user, inside dbus-run-session (and xvfb-run with --applet) ----
        tmp=$2 shares=$3 applet=$4 watch=$5
        bin=$tmp/bin
        ctl() { "$bin/sluicectl" "$@"; }
        wait_until() {   # wait_until SECONDS CMD...: poll CMD until it succeeds
                local end=$(( $(date +%s) + $1 )); shift
                until "$@" >/dev/null 2>&1; do
                        [ "$(date +%s)" -lt "$end" ] || return 1
                        sleep 0.2
                done
        }
        SLUICE_FS=$bin/sluice-fs "$bin/sluice-service" >"$tmp/service.log" 2>&1 &
        service=$!
        # on the bus before the first call: a call would activate any installed service
        owned() { gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
                        -m org.freedesktop.DBus.NameHasOwner org.sluice.Sluice1 | grep -q true; }
        wait_until 60 owned || { echo "sluice-service did not come up" >&2; exit 1; }
        for i in $(seq 1 "$shares"); do
                mkdir -p "$tmp/shares/s$i"
                ctl add "$tmp/shares/s$i" --tag "s$i" --no-autostart >/dev/null || exit 1
                ctl start "s$i" >/dev/null || exit 1
        done
        all_running() { [ "$(ctl --json list | grep -o '"state" *: *"running"' | wc -l)" = "$shares" ]; }
        wait_until 300 all_running || { echo "not every share is running" >&2; ctl list >&2; exit 1; }
        extra=""
        if [ "$applet" = 1 ]; then
                # a StatusNotifierWatcher (the test desktop) so the applet stays in the tray
                "$bin/sa-test-desktop" --watcher --notifications >"$tmp/desktop.log" 2>&1 &
                extra="$extra $!"
                wait_until 30 grep -q READY "$tmp/desktop.log" || { echo "no test desktop" >&2; exit 1; }
                GTK_A11Y=none "$bin/sluice-applet" --background >"$tmp/applet.log" 2>&1 &
                echo "applet $!" >>"$tmp/pids"
                extra="$extra $!"
        fi
        for i in $(seq 1 "$watch"); do
                ctl stats "s$i" --watch >/dev/null 2>&1 &
                extra="$extra $!"
        done
        echo "service $service" >>"$tmp/pids"
        touch "$tmp/ready"
        wait_until 3600 test -e "$tmp/done"
        # shellcheck disable=SC2086
        [ -z "$extra" ] || kill $extra 2>/dev/null
        kill "$service"
        wait "$service"
        exit 0
fi

while [ $# -gt 0 ]; do
        case $1 in
        --shares) shares=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --applet) applet=1; shift ;;
        --watch) watch=$2; shift 2 ;;
        --libvirt) libvirt=$2; shift 2 ;;
        --threads) threads=1; shift ;;
        --detail) detail=1; shift ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
        esac
done
[ $# = 1 ] || { sed -n '3,20p' "$0" >&2; exit 2; }
build=$(readlink -f "$1")
[ "$(id -u)" = 0 ] || { echo "idle-run.sh: run as root (it reads every process's smaps)" >&2; exit 2; }
id "$user" >/dev/null 2>&1 || { echo "idle-run.sh: no user $user (SLUICE_TEST_USER)" >&2; exit 2; }

tmp=$(mktemp -d /tmp/idle-run.XXXXXX)
inner=""
cleanup() {
        touch "$tmp/done"
        [ -z "$inner" ] || wait "$inner" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/bin" "$tmp/home" "$tmp/run" "$tmp/config" "$tmp/shares"
chmod 0700 "$tmp/run"
for f in service/sluice-service cli/sluicectl daemon/sluice-fs; do
        cp "$build/$f" "$tmp/bin/" || exit 1
done
if [ "$applet" = 1 ]; then
        cp "$build/applet/sluice-applet" "$build/tests/applet/sa-test-desktop" "$tmp/bin/" || exit 1
fi
cp "$0" "$tmp/bin/idle-run.sh"
chmod 0755 "$tmp"
chown -R "$user:" "$tmp"

wrap=(dbus-run-session --)
[ "$applet" = 0 ] || wrap=(xvfb-run -a -s "-screen 0 1024x768x24" dbus-run-session --)
runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp/home" LANG=C.UTF-8 \
        XDG_RUNTIME_DIR="$tmp/run" XDG_CONFIG_HOME="$tmp/config" SLUICE_LIBVIRT_URIS="$libvirt" \
        "${wrap[@]}" bash "$tmp/bin/idle-run.sh" --inner "$tmp" "$shares" "$applet" "$watch" \
        >"$tmp/inner.log" 2>&1 &
inner=$!
t0=$(date +%s)
until [ -e "$tmp/ready" ]; do
        if ! kill -0 "$inner" 2>/dev/null || [ $(( $(date +%s) - t0 )) -gt 600 ]; then
                echo "idle-run.sh: the stack did not come up:" >&2
                tail -n 20 "$tmp/inner.log" "$tmp/service.log" "$tmp/applet.log" >&2 2>/dev/null
                exit 1
        fi
        sleep 0.5
done
service=$(awk '$1 == "service" { print $2 }' "$tmp/pids")
applet_pid=$(awk '$1 == "applet" { print $2 }' "$tmp/pids")
workers=$(for s in /proc/[0-9]*/stat; do
        read -r pid rest 2>/dev/null <"$s" || continue
        # the parent is the 2nd field after the ")" closing the command name
        ppid=$(echo "${rest##*)}" | awk '{ print $2 }')
        [ "$ppid" = "$service" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sluice-fs ] && echo "$pid"
done | sort -n)
n_workers=$(echo "$workers" | grep -c .)
[ "$n_workers" = "$shares" ] || { echo "idle-run.sh: $n_workers workers, expected $shares" >&2; exit 1; }
# Let start-up settle (the applet's first frame, the workers' first requests).
sleep 5

# vcs PID: "TID COMM COUNT" for each thread of PID.
vcs() {
        local t
        for t in /proc/"$1"/task/*; do
                printf '%s %s %s\n' "${t##*/}" "$(tr ' ' _ <"$t/comm" 2>/dev/null)" \
                        "$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status" 2>/dev/null)"
        done
}
snapshot() {   # snapshot FILE: "ROLE PID TID COMM COUNT" lines
        local pid
        { vcs "$service" | sed "s/^/service $service /"
          for pid in $workers; do vcs "$pid" | sed "s/^/worker $pid /"; done
          [ -z "$applet_pid" ] || vcs "$applet_pid" | sed "s/^/applet $applet_pid /"
        } >"$1"
}
snapshot "$tmp/before"
sleep "$seconds"
snapshot "$tmp/after"

kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null; }
mem_sum() {   # mem_sum KEY PIDS...: total kB
        local key=$1 total=0 pid v; shift
        for pid in "$@"; do v=$(kib "$pid" "$key"); total=$(( total + ${v:-0} )); done
        echo "$total"
}
# Wake-ups per process over the window: threads new in the window count from 0.
diff_of() {   # diff_of ROLE: total of ROLE's threads
        awk -v role="$1" 'NR == FNR { if ($1 == role) seen[$3] = $5; next }
                $1 == role { d += $5 - ($3 in seen ? seen[$3] : 0) }
                END { print d + 0 }' "$tmp/before" "$tmp/after"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

# shellcheck disable=SC2086
{
        w_svc=$(diff_of service) w_wrk=$(diff_of worker)
        echo "Idle: $shares running shares, no VM, $watch watched, ${seconds} s window, build $build"
        echo
        echo "| process | count | voluntary ctx switches / ${seconds} s | RSS | PSS |"
        echo "|---|---:|---:|---:|---:|"
        echo "| sluice-service | 1 | $w_svc | $(mib "$(kib "$service" Rss)") | $(mib "$(kib "$service" Pss)") |"
        echo "| sluice-fs (all workers) | $n_workers | $w_wrk | $(mib "$(mem_sum Rss $workers)") | $(mib "$(mem_sum Pss $workers)") |"
        echo "| sluice-fs (one, mean) | 1 | $(awk -v a="$w_wrk" -v n="$n_workers" 'BEGIN { printf "%.1f", a / n }') | $(mib $(( $(mem_sum Rss $workers) / n_workers ))) | $(mib $(( $(mem_sum Pss $workers) / n_workers ))) |"
        total_w=$(( w_svc + w_wrk ))
        total_pids="$service $workers"
        if [ -n "$applet_pid" ]; then
                w_app=$(diff_of applet)
                echo "| sluice-applet (in the tray) | 1 | $w_app | $(mib "$(kib "$applet_pid" Rss)") | $(mib "$(kib "$applet_pid" Pss)") |"
                total_w=$(( total_w + w_app ))
                total_pids="$total_pids $applet_pid"
        fi
        echo "| **the stack** | | **$total_w** | $(mib "$(mem_sum Rss $total_pids)") | **$(mib "$(mem_sum Pss $total_pids)")** |"
        if [ "$threads" = 1 ]; then
                echo
                echo "Wake-ups by thread name (all processes of a role together):"
                echo
                echo "| role | thread | threads | wake-ups |"
                echo "|---|---|---:|---:|"
                awk 'NR == FNR { seen[$3] = $5; next }
                     { k = $1 " | " $4; n[k]++; d[k] += $5 - ($3 in seen ? seen[$3] : 0) }
                     END { for (k in d) printf "| %s | %d | %d |\n", k, n[k], d[k] }' \
                        "$tmp/before" "$tmp/after" | sort
        fi
        if [ "$detail" = 1 ]; then
                one=$(echo "$workers" | head -n 1)
                for who in "sluice-service:$service" "sluice-fs:$one" ${applet_pid:+"sluice-applet:$applet_pid"}; do
                        name=${who%%:*} pid=${who#*:}
                        echo
                        echo "What $name holds (PSS by mapping, the largest; kB):"
                        echo
                        echo "| mapping | RSS | PSS | private dirty |"
                        echo "|---|---:|---:|---:|"
                        awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6; if (name == "") name = "[anon]"
                                     sub(/.*\//, "", name); next }
                             $1 == "Rss:" { rss[name] += $2 }
                             $1 == "Pss:" { pss[name] += $2 }
                             $1 == "Private_Dirty:" { pd[name] += $2 }
                             END { for (n in pss) printf "| %s | %d | %d | %d |\n", n, rss[n], pss[n], pd[n] }' \
                                "/proc/$pid/smaps" | sort -t'|' -k4 -nr | head -n 8
                        echo "| threads: $(ls "/proc/$pid/task" | wc -l), descriptors: $(ls "/proc/$pid/fd" | wc -l) | | | |"
                done
        fi
}

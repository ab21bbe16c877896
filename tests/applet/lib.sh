# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the applet tests; sourced inside run-test.sh's Xvfb + session bus.
# Every process started here is killed on exit (by PID).  pass, fail, skip,
# note and wait_for are tests/lib.sh's.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

pids=()
log_dir="$SA_WORK/logs"
mkdir -p "$log_dir"

sa_cleanup() {
        local status=$?
        for (( i=${#pids[@]}-1; i>=0; i-- )); do
                kill "${pids[$i]}" 2>/dev/null || true
        done
        for pid in "${pids[@]}"; do
                # the service stops its workers on SIGTERM; give it a moment
                wait_for 5 pid_gone "$pid" || true
                kill -9 "$pid" 2>/dev/null || true
        done
        if [ -n "${applet_pid:-}" ] && grep -qE "(CRITICAL|WARNING) \*\*" "$log_dir/applet.log" 2>/dev/null; then
                echo "FAIL: sluice-applet logged a warning or critical:"
                grep -E "(CRITICAL|WARNING) \*\*" "$log_dir/applet.log" | head -5
                [ $status != 0 ] || status=1
        fi
        if [ $status != 0 ] && [ $status != 77 ]; then
                for f in "$log_dir"/*.log; do
                        [ -f "$f" ] || continue
                        echo "----- $(basename "$f") (last 40 lines)"
                        tail -n 40 "$f"
                done
        fi
        exit $status
}
trap sa_cleanup EXIT

bus_has_name() {
        gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
                -m org.freedesktop.DBus.NameHasOwner "$1" | grep -q true
}

# start_desktop ARGS...: the test watcher / notification server; its events go to $desktop_log.
desktop_log="$log_dir/desktop.log"
start_desktop() {
        "$SA_TEST_DESKTOP" "$@" >>"$desktop_log" 2>&1 &
        pids+=($!)
        desktop_pid=$!
        wait_for 10 grep -q READY "$desktop_log" || fail "sa-test-desktop did not start"
}

need_service() {
        [ -n "${SLUICE_SERVICE:-}" ] && [ -x "$SLUICE_SERVICE" ] || skip "sluice-service is not built"
        [ -n "${SLUICE_FS:-}" ] && [ -x "$SLUICE_FS" ] || skip "sluice-fs is not built"
}

# start_service: the real sluice-service (workers: the real sluice-fs), no libvirt
# unless SLUICE_LIBVIRT_URIS says otherwise.
start_service() {
        need_service
        SLUICE_FS="$SLUICE_FS" SLUICE_STATS_INTERVAL_MS=${SLUICE_STATS_INTERVAL_MS:-500} \
                "$SLUICE_SERVICE" --libvirt-uri="${SA_LIBVIRT_URI:-none}" >>"$log_dir/service.log" 2>&1 &
        pids+=($!)
        service_pid=$!
        wait_for 20 bus_has_name org.sluice.Sluice1 || fail "sluice-service did not take its bus name"
}

stop_service() {
        kill "$service_pid"
        wait_for 10 pid_gone "$service_pid" || fail "sluice-service did not stop"
}

# start_applet ARGS...: the applet, with its test hook on; a GLib/GTK
# critical or warning aborts it (and so fails the test).
start_applet() {
        G_DEBUG=fatal-warnings "$SLUICE_APPLET" "$@" >>"$log_dir/applet.log" 2>&1 &
        pids+=($!)
        applet_pid=$!
        wait_for 20 bus_has_name org.sluice.Applet || fail "sluice-applet did not start"
}

hook_prop() {
        gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet/Test \
                -m org.freedesktop.DBus.Properties.Get org.sluice.Applet.Test "$1"
}

# locate WHAT: sets loc_win loc_x loc_y from the applet's test hook.
locate() {
        local out
        out=$(gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet/Test \
                -m org.sluice.Applet.Test.Locate "$1") || return 1
        # (uint64 12345, 320, 256)
        read -r loc_win loc_x loc_y < <(echo "$out" | tr -d '(),' | sed 's/uint64 //')
}

window_visible() { hook_prop WindowVisible | grep -q true; }

# The applet's window: X id, and its position on the root window.
applet_window_origin() {
        locate drop-zone || return 1
        eval "$(xdotool getwindowgeometry --shell "$loc_win")"
        win_x=$X win_y=$Y
}

# click_widget WHAT: a real click (XTEST) at the centre of the widget, once it
# has stopped moving (a toast slides in: under load its animation takes long,
# and a click at a place it has not reached yet falls on something else).
# click_widget_try WHAT: the same, returning 1 where the widget is not there.
click_widget_try() {
        local deadline=$(( $(date +%s) + 15 )) px py
        while [ "$(date +%s)" -lt "$deadline" ]; do
                if locate "$1"; then
                        px=$loc_x py=$loc_y
                        sleep 0.3
                        if locate "$1" && [ "$loc_x" = "$px" ] && [ "$loc_y" = "$py" ]; then
                                xdotool mousemove --window "$loc_win" "$loc_x" "$loc_y" click 1
                                return 0
                        fi
                else
                        sleep 0.2
                fi
        done
        return 1
}
click_widget() {
        click_widget_try "$1" || fail "cannot locate $1 (or it never stopped moving)"
}

managed_objects() {
        gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 \
                -m org.freedesktop.DBus.ObjectManager.GetManagedObjects
}

share_objects() {
        # gdbus prints "objectpath" before the first key only
        managed_objects | grep -oE "'/org/sluice/Sluice1/share/[A-Za-z0-9_]+'" | tr -d "'" | sort -u
}

# share_object_for FOLDER: the object path of FOLDER's share (nothing if none).
share_object_for() {
        local obj
        for obj in $(share_objects); do
                if share_prop "$obj" Path | grep -qF "<'$1'>"; then
                        echo "$obj"
                        return 0
                fi
        done
        return 1
}

share_prop() { # OBJECT PROPERTY
        gdbus call --session -d org.sluice.Sluice1 -o "$1" \
                -m org.freedesktop.DBus.Properties.Get org.sluice.Sluice1.Share "$2"
}

add_share() { # FOLDER [OPTIONS]
        local empty='@a{sv} {}'
        gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 \
                -m org.sluice.Sluice1.Manager.AddShare "$1" "" "${2:-$empty}" | sed "s/^(objectpath '\(.*\)',)$/\1/"
}

# drag_to_applet PATH...: a real XDND drag from sa-drag-source onto the drop zone.
drag_to_applet() {
        "$SA_DRAG_SOURCE" "$@" >>"$log_dir/drag-source.log" 2>&1 &
        local src_pid=$!
        pids+=($src_pid)
        local src=
        drag_source_shown() { src=$(xdotool search --onlyvisible --name '^sa-drag-source$' | head -1) && [ -n "$src" ]; }
        wait_for 10 drag_source_shown || fail "the drag source window did not appear"
        # No window manager: place the windows apart ourselves.
        xdotool windowmove "$src" 900 100
        sleep 0.5
        locate drop-zone || fail "cannot locate the drop zone"
        eval "$(xdotool getwindowgeometry --shell "$loc_win")"
        local tx=$((X + loc_x)) ty=$((Y + loc_y))
        local sx=1000 sy=200
        xdotool mousemove $sx $sy
        sleep 0.3
        xdotool mousedown 1
        sleep 0.2
        # Small steps: GTK needs motion past the drag threshold, then XDND positions.
        for i in $(seq 1 20); do
                xdotool mousemove $((sx + (tx - sx) * i / 20)) $((sy + (ty - sy) * i / 20))
                sleep 0.05
        done
        sleep 0.3
        xdotool mousemove $((tx + 2)) $((ty + 2))
        sleep 0.3
        xdotool mouseup 1
        sleep 0.5
        kill $src_pid 2>/dev/null || true
}

# shot NAME [MIN_COLOURS]: a screenshot of the whole screen into the build
# directory; fails when it has fewer colours (default 50: a blank or
# half-drawn window has a handful).
shot() {
        local file="$SA_SHOTS/$1.png" min=${2:-50}
        import -window root "$file"
        local colours
        colours=$(identify -format %k "$file")
        note "screenshot $file: $colours colours"
        [ "$colours" -ge "$min" ] || fail "screenshot $1 looks blank ($colours colours)"
}

# shot_settled NAME [MIN_COLOURS]: shot NAME once the screen has stopped
# changing (two screenshots 0.3 s apart are the same): the window draws a
# change some frames after the state the test waited for.
shot_settled() {
        local a="$SA_SHOTS/.settle-a.png" b="$SA_SHOTS/.settle-b.png"
        screen_settled() {
                import -window root "$a"; sleep 0.3; import -window root "$b"
                [ "$(compare -metric AE "$a" "$b" null: 2>&1)" = 0 ]
        }
        wait_for 30 screen_settled || fail "the screen never stopped changing before screenshot $1"
        rm -f "$a" "$b"
        shot "$@"
}

message_contains() { hook_prop LastMessage | grep -qF "$1"; }
share_state_is() { share_prop "$1" State | grep -qF "'$2'"; }
name_gone() { ! bus_has_name "$1"; }

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs one applet test script inside its own X server (Xvfb) and private
# session bus (dbus-run-session), as an ordinary user:
#   run-test.sh tests/applet/test-NAME.sh
# As root with SLUICE_TEST_USER set, everything in the session — Xvfb, the
# bus, sluice-service, its workers, the applet — runs as that user (the
# session bus only admits its owner's uid, and Sluice's users are not root).
# Exit status: 0 pass, 77 skip, anything else fail.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
test_script=$(readlink -f "$1")
: "${SLUICE_APPLET:?SLUICE_APPLET must name the sluice-applet binary}"

need_tools xvfb-run dbus-run-session xdotool import identify gdbus

work=$(mktemp -d /tmp/sluice-applet-test.XXXXXX)
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
chmod 0755 "$work"

run_as=()
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ]; then
        ensure_user "$SLUICE_TEST_USER"
        run_as=(runuser -u "$SLUICE_TEST_USER" --)
        # The build tree may sit where that user cannot go: copy what runs.
        bin="$work/bin"
        mkdir -p "$bin"
        for var in SLUICE_APPLET SLUICE_SERVICE SLUICE_FS SLUICE_TEST_VMM SA_DRAG_SOURCE SA_TEST_DESKTOP SLUICE_SHARE_DESKTOP SLUICE_CTL; do
                path=${!var:-}
                [ -n "$path" ] || continue
                if ! "${run_as[@]}" test -x "$path"; then
                        cp "$path" "$bin/"
                        export "$var=$bin/$(basename "$path")"
                fi
        done
        if ! "${run_as[@]}" test -r "$test_script"; then
                cp "$(dirname "$test_script")"/*.sh "$bin/"
                # tests/lib.sh, where bin/lib.sh looks for it (../lib.sh)
                cp "$(dirname "$test_script")/../lib.sh" "$work/lib.sh"
                test_script="$bin/$(basename "$test_script")"
        fi
        chmod -R a+rX "$work"
fi

home="$work/home"
mkdir -p "$home/config" "$home/runtime" "$home/data" "$home/cache"
chmod 0700 "$home/runtime"
out="${SLUICE_APPLET_OUT_DIR:-$work}"
mkdir -p "$out"
if [ ${#run_as[@]} -gt 0 ]; then
        chown -R "$SLUICE_TEST_USER:" "$home"
        # Screenshots land in the build directory: give the user a place there.
        shots="$work/shots"
        mkdir -p "$shots"
        chown "$SLUICE_TEST_USER:" "$shots"
else
        shots="$out"
fi

set +e
"${run_as[@]}" env -u DBUS_SESSION_BUS_ADDRESS -u DISPLAY -u WAYLAND_DISPLAY \
        HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_RUNTIME_DIR="$home/runtime" \
        XDG_DATA_HOME="$home/data" XDG_CACHE_HOME="$home/cache" \
        SA_WORK="$home" SA_SHOTS="$shots" \
        GTK_A11Y=none NO_AT_BRIDGE=1 GSK_RENDERER=cairo GDK_BACKEND=x11 \
        SLUICE_APPLET_TEST_HOOK=1 \
        xvfb-run -a -s "-screen 0 1280x900x24 -nolisten tcp" \
        dbus-run-session -- bash "$test_script"
status=$?
set -e
if [ "$shots" != "$out" ]; then
        cp "$shots"/*.png "$out"/ 2>/dev/null || true
fi
exit $status

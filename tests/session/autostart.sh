# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/autostart.sh — the applet's XDG autostart entry under the
# user manager, as GNOME starts it: systemd-xdg-autostart-generator makes a
# unit of it; the desktop's session target pulls in
# xdg-desktop-autostart.target (as GNOME's gnome-session-xdg-autostart.target
# does at login; that target refuses a manual start), which starts the
# applet once; the applet's first call starts sluice-service.service through
# D-Bus activation.  One of each, also when the session starts it again.
# The display is an Xvfb of the user's (no desktop on the test machines);
# like gnome-session, the test hands DISPLAY to the manager.  Sourced by
# in-namespace.sh.

case_cleanup() {
        [ -z "${xvfb_pid:-}" ] || { kill "$xvfb_pid" 2>/dev/null; wait_for 10 pid_gone "$xvfb_pid"; }
}

# one_each UNIT — true when exactly one sluice-applet and one sluice-service
# run in this login, the applet as UNIT's main process and the service as
# sluice-service.service's, each owning its bus name.
one_each() {
        local applets services
        applets=$(session_pids sluice-applet)
        services=$(session_pids sluice-service)
        counts="applets: ${applets:-none}; services: ${services:-none}"
        [ "$(count_lines "$applets")" = 1 ] && [ "$(count_lines "$services")" = 1 ] &&
                [ "$applets" = "$(unit_prop "$1" MainPID)" ] &&
                [ "$applets" = "$(bus_owner_pid org.sluice.Applet)" ] &&
                [ "$services" = "$(unit_prop sluice-service.service MainPID)" ] &&
                [ "$services" = "$(bus_owner_pid org.sluice.Sluice1)" ]
}

case_autostart() {
        local entry=$session_sysconfdir/xdg/autostart/org.sluice.Applet-autostart.desktop
        # the generator's name for it: app-<entry's name, escaped>@autostart.service
        local unit='app-org.sluice.Applet\x2dautostart@autostart.service' display
        # In the DESTDIR for --build: not one the machine has installed.
        [ -x "$session_dest$session_prefix/bin/sluice-applet" ] ||
                skip "sluice-applet is not installed (a build with -Dapplet=false, or no sluice-applet package)"
        [ -f "$session_dest$entry" ] || fail "sluice-applet is installed, but its autostart entry $entry is not"
        need_tools Xvfb

        as_user Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp 3>"$session_work/display" \
                >"$session_work/xvfb.log" 2>&1 &
        xvfb_pid=$!
        wait_for 30 test -s "$session_work/display" || fail "Xvfb did not start: $(cat "$session_work/xvfb.log")"
        display=:$(cat "$session_work/display")
        # What gnome-session hands the manager; the rest keeps GTK quiet on a
        # machine without accessibility bus or GPU.
        user_ctl set-environment DISPLAY="$display" GDK_BACKEND=x11 GTK_A11Y=none NO_AT_BRIDGE=1 \
                GSK_RENDERER=cairo || fail "systemctl --user set-environment failed"
        # The desktop's session target: what gnome-session starts at login
        # (in GNOME two targets; not ordered before graphical-session.target
        # here, which the autostart units are ordered after).
        as_user mkdir -p "$session_home/.config/systemd/user"
        as_user tee "$session_home/.config/systemd/user/test-desktop-session.target" >/dev/null <<'UNIT'
[Unit]
Description=The test's desktop session, started as gnome-session starts GNOME's
BindsTo=graphical-session.target
Requires=xdg-desktop-autostart.target
UNIT
        user_ctl daemon-reload || fail "systemctl --user daemon-reload failed"
        [ "$(unit_prop "$unit" LoadState)" = loaded ] ||
                fail "no $unit after daemon-reload: $(user_ctl list-units --all --plain --no-legend 'app-*')"
        pass "systemd-xdg-autostart-generator made $unit of $entry"

        user_ctl start test-desktop-session.target || fail "starting the desktop's session target failed"
        unit_is xdg-desktop-autostart.target active || fail "xdg-desktop-autostart.target is $(unit_prop xdg-desktop-autostart.target ActiveState)"
        wait_for 60 unit_is "$unit" active || fail "$unit is $(unit_prop "$unit" ActiveState)"
        wait_for 60 unit_is sluice-service.service active ||
                fail "the applet did not start sluice-service.service: $(unit_prop sluice-service.service ActiveState)"
        wait_for 60 one_each "$unit" || fail "after xdg-desktop-autostart.target: $counts"
        pass "the session's xdg-desktop-autostart.target started the applet once ($unit) and it activated sluice-service.service: $counts"

        # A second start, by the session or by hand, hands over to the running
        # applet (one instance per session) and starts nothing more.
        user_ctl start test-desktop-session.target || fail "starting the session target again failed"
        DISPLAY=$display as_user timeout 60 "$session_prefix/bin/sluice-applet" --background ||
                fail "a second sluice-applet --background failed"
        unit_is "$unit" active && one_each "$unit" ||
                fail "after a second start: $counts, $unit $(unit_prop "$unit" ActiveState)"
        pass "started again (the target, then sluice-applet --background by hand): $counts"
}

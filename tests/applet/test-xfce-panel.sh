#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A real tray host: xfce4-panel with its systray plugin (which hosts
# StatusNotifierItems) shows the applet's icon.  Checked on the bus: the
# panel's watcher lists the item and the panel reads the item's properties;
# a screenshot of the panel is kept in the build directory.
. "$(dirname "$0")/lib.sh"
command -v xfce4-panel >/dev/null || skip "xfce4-panel is not installed"

# xfconf reads the panel layout from XDG_CONFIG_HOME (set before the bus started).
conf="$XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml"
mkdir -p "$conf"
cat >"$conf/xfce4-panel.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="32"/>
      <property name="plugin-ids" type="array">
        <value type="int" value="1"/>
        <value type="int" value="2"/>
      </property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="separator">
      <property name="expand" type="bool" value="true"/>
      <property name="style" type="uint" value="0"/>
    </property>
    <property name="plugin-2" type="string" value="systray">
      <property name="icon-size" type="int" value="22"/>
    </property>
  </property>
</channel>
XML

start_desktop --notifications
start_service
dbus-monitor --session "type='method_call',interface='org.freedesktop.DBus.Properties',path='/StatusNotifierItem'" \
        >"$log_dir/monitor.log" 2>&1 &
pids+=($!)
xfce4-panel --disable-wm-check >>"$log_dir/panel.log" 2>&1 &
pids+=($!)
wait_for 30 bus_has_name org.kde.StatusNotifierWatcher || fail "xfce4-panel did not start a StatusNotifierWatcher"

start_applet --background
items() {
        gdbus call --session -d org.kde.StatusNotifierWatcher -o /StatusNotifierWatcher \
                -m org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierWatcher RegisteredStatusNotifierItems
}
registered() { items | grep -q "StatusNotifierItem-$applet_pid-1"; }
wait_for 20 registered || fail "xfce4-panel's watcher does not list the applet's item: $(items)"
panel_read() { grep -qE "member=(GetAll|Get)" "$log_dir/monitor.log"; }
wait_for 20 panel_read || fail "the panel never read the item's properties"
# With a host, --background shows no window.
sleep 2
window_visible && fail "the window opened although xfce4-panel shows the icon"
# The panel is a plain bar on a black screen; the icon is what adds colours.
shot applet-xfce-panel 20
# ... and it sits in the tray at the panel's right end: that corner is not flat.
convert "$SA_SHOTS/applet-xfce-panel.png" -crop 64x32+1216+0 "$SA_WORK/tray-corner.png"
corner=$(identify -format %k "$SA_WORK/tray-corner.png")
note "tray corner: $corner colours"
[ "$corner" -ge 5 ] || fail "no icon in the panel's tray ($corner colours)"
echo "PASS"

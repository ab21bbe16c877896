#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A stand-in for sluice-fs that speaks only what test-worker-resume.py
needs of it: the control channel (org.sluice.Worker1: GetStats and the
Resume property) and the fd store protocol of the service's keeper
(FDSTORE=1 / LISTEN_FDS, as protocol.md and sd_notify(3) describe).  It
serves no FUSE: its "frontend" is a plain stream connection on the share's
socket, which it greets with "hello PID" when it accepts it and with
"resumed PID" when it takes it over from the store, so the test sees
which process serves the very same connection.

Stored: "listen", "state" (a memfd saying "device" once a connection is
served; stored before it says so, as the protocol orders) and "conn".
With --replay=no, the two requests it pretends were in flight are
reported failed instead of replayed.  The system python3 runs it (GLib's
introspection); test-worker-resume.py skips when that has no gi."""
import array
import os
import signal
import socket
import sys
import time

import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

XML = """<node><interface name="org.sluice.Worker1">
<method name="GetStats"><arg name="stats" type="a{sv}" direction="out"/></method>
<method name="SetNames"><arg name="names" type="s" direction="in"/>
<arg name="case" type="s" direction="in"/></method>
<property name="Resume" type="a{sv}" access="read"/>
<property name="Names" type="s" access="read"/>
<property name="Case" type="s" access="read"/>
</interface></node>"""

opts = {}
for a in sys.argv[1:]:
    key, _, value = a.partition("=")
    opts[key] = value
started = time.monotonic()

stored = {}
if os.environ.get("LISTEN_PID") == str(os.getpid()):
    names = os.environ.get("LISTEN_FDNAMES", "").split(":")
    count = int(os.environ.get("LISTEN_FDS", "0"))
    if len(names) != count:
        sys.exit(f"fake-resume-worker: LISTEN_FDS={count} but LISTEN_FDNAMES={names}")
    stored = {name: 3 + i for i, name in enumerate(names)}


def notify(text, fd=None):
    where = os.environ.get("NOTIFY_SOCKET", "")
    if not where:
        return  # as sd_notify: no keeper, nothing stored
    addr = "\0" + where[1:] if where.startswith("@") else where
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))] if fd is not None else []
    s.sendmsg([text.encode()], anc, 0, addr)
    s.close()


resume = {}
replayed = failed = 0
conns = []

def dies_while_resuming():
    """$FAKE_DIE_FILE holding "replaying" (die when running the in-flight
    requests again: a poisoned request) or "always" (die at any resume):
    what a worker killed by what it takes up does, before it is ready."""
    try:
        with open(os.environ.get("FAKE_DIE_FILE", "")) as f:
            how = f.read().strip()
    except OSError:
        return False
    return how == "always" or (how == "replaying" and opts.get("--replay") != "no")


if "state" in stored and "conn" in stored and os.pread(stored["state"], 6, 0) == b"device":
    state = stored["state"]
    if dies_while_resuming():
        os.abort()   # as a request that kills a worker does: not a SIGKILL from outside
    conn = socket.socket(fileno=stored["conn"])
    if opts.get("--replay") == "no":
        failed = 2
    else:
        replayed = 2
    resume = {"resumed": GLib.Variant("b", True), "replayed": GLib.Variant("u", replayed),
              "failed": GLib.Variant("u", failed), "handed-over": GLib.Variant("b", False)}
    conn.sendall(f"resumed {os.getpid()}\n".encode())
    conns.append(conn)
else:
    if "state" in stored:
        resume = {"resumed": GLib.Variant("b", False)}
    state = os.memfd_create("sluice-fs-state")
    os.pwrite(state, b"none  ", 0)
    notify("FDSTOREREMOVE=1\nFDNAME=state")
    notify("FDSTORE=1\nFDNAME=state", state)

if "listen" in stored:
    listener = socket.socket(fileno=stored["listen"])
else:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(opts["--socket-path"])
    except FileNotFoundError:
        pass
    listener.bind(opts["--socket-path"])
    listener.listen(4)
    notify("FDSTORE=1\nFDNAME=listen", listener.fileno())


def on_accept(fd, condition):
    conn, _ = listener.accept()
    conns.append(conn)
    notify("FDSTORE=1\nFDNAME=conn", conn.fileno())   # stored before the state says so
    os.pwrite(state, b"device", 0)
    conn.sendall(f"hello {os.getpid()}\n".encode())
    return True


GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, listener.fileno(), GLib.IOCondition.IN, on_accept)

loop = GLib.MainLoop()
node = Gio.DBusNodeInfo.new_for_xml(XML)


# --names/--case and SetNames, as sluice-fs takes them; what it has is
# written beside the socket (SOCKET.names: "NAMES CASE") for the tests
served = {"names": opts.get("--names", "posix"), "case": opts.get("--case", "sensitive")}


def record_names():
    with open(opts["--socket-path"] + ".names", "w") as f:
        f.write(f"{served['names']} {served['case']}\n")


def on_call(connection, sender, path, iface, method, params, invocation):
    if method == "SetNames":
        names, case = params.unpack()
        if names not in ("posix", "windows") or case not in ("sensitive", "insensitive"):
            invocation.return_dbus_error("org.freedesktop.DBus.Error.InvalidArgs", "bad names or case")
            return
        served.update(names=names, case=case)
        record_names()
        invocation.return_value(None)
        return
    stats = {"uptime-us": GLib.Variant("t", int((time.monotonic() - started) * 1e6) + 1),
             "resume-replayed": GLib.Variant("t", replayed),
             "resume-failed": GLib.Variant("t", failed)}
    invocation.return_value(GLib.Variant("(a{sv})", (stats,)))


def on_get(connection, sender, path, iface, prop):
    if prop in ("Names", "Case"):
        return GLib.Variant("s", served[prop.lower()])
    return GLib.Variant("a{sv}", resume)


record_names()
control = Gio.Socket.new_from_fd(int(opts["--control-fd"]))
stream = control.connection_factory_create_connection()
# the object first, then the first message: the service's first call is its readiness probe
bus = Gio.DBusConnection.new_sync(stream, Gio.dbus_generate_guid(),
                                  Gio.DBusConnectionFlags.AUTHENTICATION_SERVER |
                                  Gio.DBusConnectionFlags.DELAY_MESSAGE_PROCESSING, None, None)
bus.register_object("/org/sluice/Worker1", node.interfaces[0], on_call, on_get, None)
bus.start_message_processing()
bus.connect("closed", lambda *a: loop.quit())
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda *a: loop.quit() or False)
loop.run()

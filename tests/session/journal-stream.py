#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""journal-stream.py FOLDER LOG — a stand-in for journald's sockets.

The test machines run no journald: without one systemd hands a unit's
standard output and error to /dev/null.  Listening where journald would
(FOLDER is /run/systemd/journal, in the test's mount namespace), this keeps
what the units print and send to the journal in LOG, a line per message
prefixed with the unit's or the program's name, so that a failing case can
show it.  The protocols are
systemd's: on "stdout" a stream opens with seven header lines (identifier,
unit, priority, level prefix, three forwarding flags), then the program's
output; on "socket" each datagram is one message of KEY=VALUE lines (a
value with a newline: KEY, a newline, its length as 64-bit little endian,
the value, a newline).
"""
import os
import selectors
import socket
import sys

HEADER_LINES = 7


def datagram_fields(data):
    fields = {}
    while data:
        line, _, rest = data.partition(b"\n")
        if b"=" in line:
            key, _, value = line.partition(b"=")
            data = rest
        else:
            key, size = line, int.from_bytes(rest[:8], "little")
            value, data = rest[8:8 + size], rest[9 + size:]
        fields[key.decode(errors="replace")] = value.decode(errors="replace")
    return fields


def main():
    folder, log_path = sys.argv[1], sys.argv[2]
    os.makedirs(folder, mode=0o755, exist_ok=True)
    os.chmod(folder, 0o755)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(folder, "stdout"))
    listener.listen(64)
    messages = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    messages.bind(os.path.join(folder, "socket"))
    for name in ("stdout", "socket"):
        os.chmod(os.path.join(folder, name), 0o666)  # every user's units log there
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    sel.register(messages, selectors.EVENT_READ)
    streams = {}
    while True:
        for key, _ in sel.select():
            if key.fileobj is messages:
                data = messages.recv(262144)
                try:
                    fields = datagram_fields(data)
                except ValueError:
                    fields = {"MESSAGE": repr(data)}
                name = fields.get("USER_UNIT") or fields.get("UNIT") or fields.get("SYSLOG_IDENTIFIER", "?")
                with open(log_path, "ab") as log:
                    log.write(f"{name}: {fields.get('MESSAGE', '')}\n".encode())
                continue
            if key.fileobj is listener:
                conn, _ = listener.accept()
                streams[conn] = {"buffer": b"", "header": [], "name": "?"}
                sel.register(conn, selectors.EVENT_READ)
                continue
            conn, stream = key.fileobj, streams[key.fileobj]
            data = conn.recv(65536)
            stream["buffer"] += data
            lines = stream["buffer"].split(b"\n")
            stream["buffer"] = lines.pop() if data else b""
            if not data and lines[-1:] == [b""]:
                lines.pop()
            with open(log_path, "ab") as log:
                for line in lines:
                    if len(stream["header"]) < HEADER_LINES:
                        stream["header"].append(line.decode(errors="replace"))
                        if len(stream["header"]) == 2:
                            stream["name"] = stream["header"][1] or stream["header"][0]
                        continue
                    log.write(stream["name"].encode() + b": " + line + b"\n")
            if not data:
                sel.unregister(conn)
                conn.close()
                del streams[conn]


if __name__ == "__main__":
    main()

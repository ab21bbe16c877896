#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""journal-stream.py SOCKET LOG — a stand-in for journald's stdout socket.

The test machines run no journald, and without one systemd hands a unit's
standard output and error to /dev/null.  Listening where journald would
(/run/systemd/journal/stdout, in the test's mount namespace), this keeps
what the units print, one line per message prefixed with the unit's name,
so that a failing case can show it.  The stream protocol is systemd's:
a connection opens with seven header lines (identifier, unit, priority,
level prefix, and three forwarding flags), then the program's output.
"""
import os
import selectors
import socket
import sys

HEADER_LINES = 7


def main():
    path, log_path = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    os.chmod(os.path.dirname(path), 0o755)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o666)  # every user's units log there
    listener.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    streams = {}
    while True:
        for key, _ in sel.select():
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

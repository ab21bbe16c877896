#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Debian packages of other releases, unpacked, without touching the system.

    debian_archive.py CACHE_DIR PACKAGE/SUITE…

prints one line "PACKAGE/SUITE ROOT" per package (ROOT: where its .deb is
unpacked); exits 77 when the mirror cannot be reached, 1 on any other
failure.  From Python: fetch(CACHE_DIR, ["virtiofsd/trixie", …]) → {spec: root}.

A private apt state in CACHE_DIR (the system's sources, lists and cache are
left alone) reaches the Debian mirror this machine's own apt sources name —
no host name is written here — for bookworm and trixie.  The .debs stay in
CACHE_DIR/debs: a rerun downloads nothing.  Used by tests/apparmor (libvirt's
and apparmor's policy) and tests/deb (Debian 13's virtiofsd descriptor).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

SUITES = ("bookworm", "trixie")


class Unreachable(Exception):
    """The mirror cannot be reached (or this machine names none): a test skips."""


def mirror():
    """(URI, Signed-By) of this machine's Debian archive (not -security)."""
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            for stanza in f.read().split("\n\n"):
                fields = {}
                for line in stanza.splitlines():
                    m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                    if m:
                        fields[m.group(1).lower()] = m.group(2).split()
                suites = fields.get("suites", [])
                if "deb" in fields.get("types", []) and "main" in fields.get("components", []) \
                        and any("-" not in s for s in suites) and fields.get("uris"):
                    return fields["uris"][0], " ".join(fields.get("signed-by", []))
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        try:
            lines = open(path).read().splitlines()
        except OSError:
            continue
        for line in lines:
            m = re.match(r"^deb\s+(\[[^]]*\]\s+)?(\S+)\s+([a-z]+)\s+.*\bmain\b", line)
            if m:
                return m.group(2), ""
    return None, None


def _download(cache, debs, missing, note):
    uri, key = mirror()
    if not uri:
        raise Unreachable("no Debian mirror among this machine's apt sources")
    state = os.path.join(cache, "apt")
    for d in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(state, d), exist_ok=True)
    opts = f"[signed-by={key}] " if key else ""
    with open(os.path.join(state, "sources.list"), "w") as f:
        for suite in SUITES:
            f.write(f"deb {opts}{uri} {suite} main\n")
    apt = ["apt-get", "-q", "-o", f"Dir::Etc::sourcelist={state}/sources.list",
           "-o", "Dir::Etc::sourceparts=/nonexistent", "-o", f"Dir::State::Lists={state}/lists",
           "-o", f"Dir::Cache={state}/cache", "-o", "APT::Sandbox::User=root",
           "-o", "Acquire::http::Timeout=30", "-o", "Acquire::Retries=1"]
    r = subprocess.run(apt + ["update"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0 or re.search(r"^(Err|W: Failed)", r.stdout + r.stderr, re.M):
        raise Unreachable(f"the mirror cannot be reached: {(r.stdout + r.stderr).strip()[-400:]}")
    r = subprocess.run(apt + ["download"] + missing, capture_output=True, text=True,
                       timeout=300, cwd=debs)
    if r.returncode != 0:
        raise RuntimeError(f"apt-get download {' '.join(missing)}: {(r.stdout + r.stderr).strip()[-600:]}")
    note(f"downloaded {' '.join(missing)} (cached in {debs})")


def fetch(cache, specs, note=lambda msg: None):
    """Downloads PACKAGE/SUITE once each; returns {spec: unpacked root}.
    Raises Unreachable when a download is needed and the mirror cannot be
    reached, RuntimeError when what was fetched cannot be used."""
    cache = os.path.abspath(cache)
    debs = os.path.join(cache, "debs")
    os.makedirs(debs, exist_ok=True)

    def found(spec):
        pkg, suite = spec.split("/")
        if suite not in SUITES:
            raise RuntimeError(f"{spec}: the suite is not one of {', '.join(SUITES)}")
        return sorted(glob.glob(os.path.join(debs, pkg + "_*.deb")))

    missing = [s.split("/")[0] for s in specs if not found(s)]
    if missing:
        # apt-get download takes PACKAGE/SUITE too
        _download(cache, debs, [s for s in specs if s.split("/")[0] in missing], note)
    roots = {}
    for spec in specs:
        debs_of = found(spec)
        if len(debs_of) != 1:
            raise RuntimeError(f"expected one {spec} .deb in {debs}, found {debs_of}")
        root = os.path.join(cache, "unpacked", os.path.basename(debs_of[0])[:-4])
        if not os.path.isdir(root):
            shutil.rmtree(root + ".tmp", ignore_errors=True)
            os.makedirs(root + ".tmp")
            subprocess.run(["dpkg-deb", "-x", debs_of[0], root + ".tmp"], check=True)
            os.rename(root + ".tmp", root)
        roots[spec] = root
    return roots


def main(argv):
    if len(argv) < 3:
        print(f"usage: {argv[0]} CACHE_DIR PACKAGE/SUITE…", file=sys.stderr)
        return 2
    try:
        roots = fetch(argv[1], argv[2:], note=lambda msg: print(msg, file=sys.stderr))
    except Unreachable as e:
        print(f"SKIP: {e}", file=sys.stderr)
        return 77
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    for spec in argv[2:]:
        print(spec, roots[spec])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

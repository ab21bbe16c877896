#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every library an installed package's programs load comes with the package.

    check-shlib-deps.py PACKAGE...

For each ELF file that an installed PACKAGE holds (dpkg -L), ldd resolves the
libraries it loads and dpkg -S names the package that holds each.  A library
the file asks for by name (its DT_NEEDED entries) must come from a package
PACKAGE depends on directly (Depends or Pre-Depends: apt installs it with
PACKAGE, and a later removal of that library would remove PACKAGE too); one
loaded only through another library, from a package in the closure of those
dependencies.  Prints a PASS or FAIL line per file; exit 0 when all passed,
1 otherwise.
"""
import os
import re
import subprocess
import sys


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def dependency_names(field):
    """Package names in a Depends field, every alternative, no versions."""
    names = set()
    for clause in field.split(","):
        for alternative in clause.split("|"):
            name = alternative.strip().split(" ")[0].split("(")[0]
            if name:
                names.add(name.split(":")[0])
    return names


def installed_dependencies():
    """Package → the names its Depends and Pre-Depends list, for every installed package."""
    out = run("dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Depends}, ${Pre-Depends}\t${Provides}\n")
    deps, providers = {}, {}
    for line in out.stdout.splitlines():
        package, status, depends, provides = line.split("\t")
        if not status.startswith("ii"):
            continue
        deps.setdefault(package, set()).update(dependency_names(depends))
        for virtual in dependency_names(provides):
            providers.setdefault(virtual, set()).add(package)
    return deps, providers


def closure(package, deps, providers):
    seen, todo = set(), [package]
    while todo:
        name = todo.pop()
        for real in {name} | providers.get(name, set()):
            if real in seen or real not in deps:
                continue
            seen.add(real)
            todo.extend(deps[real])
    return seen


def owners(paths):
    """Library path → the package holding it (dpkg -S), trying /lib and /usr/lib both:
    ldd names the folder it found a library in, which with a merged /usr need
    not be the one the package lists."""
    def other(path):
        if path.startswith("/usr/"):
            return path[len("/usr"):]
        return "/usr" + path
    queries = sorted({p for path in paths for p in (path, other(path))})
    out = run("dpkg", "-S", *queries)
    found = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^([^\s,:]+)(?::[^\s:]+)?: (/.*)$", line)
        if m:
            found[m.group(2)] = m.group(1)
    return {path: found.get(path) or found.get(other(path)) for path in paths}


def elf_files(package):
    out = run("dpkg", "-L", package)
    for path in out.stdout.splitlines():
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield path


def needed(path):
    out = run("objdump", "-p", path)
    return {m.group(1) for m in re.finditer(r"^\s*NEEDED\s+(\S+)$", out.stdout, re.M)}


def loaded(path):
    """soname → resolved path of every library ldd lists (the loader included)."""
    out = run("ldd", path)
    libraries = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^\s*(\S+) => (/\S+) \(", line) or re.match(r"^\s*((/\S+)) \(", line)
        if m:
            libraries[os.path.basename(m.group(1))] = m.group(2)
        elif "not found" in line:
            libraries[line.split()[0]] = None
    return libraries


def main(packages):
    deps, providers = installed_dependencies()
    failures = 0
    for package in packages:
        if package not in deps:
            print(f"FAIL {package} is not installed")
            failures += 1
            continue
        direct = set()
        for name in deps[package]:
            direct |= {name} | providers.get(name, set())
        indirect = closure(package, deps, providers)
        files = list(elf_files(package))
        if not files:
            print(f"FAIL {package} holds no program")
            failures += 1
        for path in files:
            libraries = loaded(path)
            asked = needed(path)
            owner = owners([p for p in libraries.values() if p])
            faults = []
            for soname, lib in sorted(libraries.items()):
                if lib is None:
                    faults.append(f"{soname} is not found")
                    continue
                holder = owner.get(lib)
                if holder is None:
                    faults.append(f"{lib} belongs to no package")
                elif soname in asked and holder not in direct:
                    faults.append(f"{soname} (asked for by name) is {holder}'s, not among {package}'s Depends")
                elif holder not in indirect:
                    faults.append(f"{soname} is {holder}'s, which {package}'s Depends do not pull in")
            missing = asked - set(libraries)
            faults += [f"{soname} is asked for but ldd does not list it" for soname in sorted(missing)]
            if faults:
                failures += 1
                for fault in faults:
                    print(f"FAIL {package}: {path}: {fault}")
            else:
                print(f"PASS {package}: {path}: its {len(libraries)} libraries "
                      f"({len(asked)} by name) come with its Depends")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
